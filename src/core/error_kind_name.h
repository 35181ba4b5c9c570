// The name of an ErrorKind where a program reads it rather than a person (scaleprof.ScaleprofError.kind
// in Python). Apart from result.h, which every source includes, so that adding a name recompiles only
// its users.
#pragma once

#include <string_view>

#include "core/result.h"

namespace scaleprof {

// The kind's name where a program reads it (scaleprof.ScaleprofError.kind in Python): "bad_input",
// "usage", "not_found", "io", "refused", "too_large", "network", "busy", "internal".
constexpr std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadInput:
      return "bad_input";
    case ErrorKind::kUsage:
      return "usage";
    case ErrorKind::kNotFound:
      return "not_found";
    case ErrorKind::kIo:
      return "io";
    case ErrorKind::kRefused:
      return "refused";
    case ErrorKind::kTooLarge:
      return "too_large";
    case ErrorKind::kNetwork:
      return "network";
    case ErrorKind::kBusy:
      return "busy";
    case ErrorKind::kInternal:
      return "internal";
  }
  return "internal";
}

}  // namespace scaleprof

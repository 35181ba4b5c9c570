// The exception every Result error of the binding becomes (scaleprof.ScaleprofError, a RuntimeError,
// registered once in scaleprof_module.cc), shared by the binding's source files.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "core/error_kind_name.h"
#include "core/result.h"
#include "core/utf8.h"

namespace scaleprof::python {

// `kind` becomes the Python exception's `kind` attribute (error_kind_name: "not_found", "io", ...), so
// that a program decides on the kind, never on the wording (scaleprof_module.cc's translator).
struct ScaleprofError : std::runtime_error {
  explicit ScaleprofError(const std::string& message, ErrorKind error_kind = ErrorKind::kBadInput)
      : std::runtime_error(message), kind(error_kind) {}
  ErrorKind kind;
};

// A message for a Python exception: valid UTF-8 as it is; each byte that is not (a non-UTF-8 file
// name, now that paths are taken as their bytes) shown as \xNN, as the terminal shows it. pybind11
// decodes an exception's message as UTF-8 and would otherwise raise a UnicodeDecodeError instead.
inline std::string utf8_message(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = utf8_sequence_length(text, pos);
    if (length == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(static_cast<unsigned char>(text[pos])));
      ++pos;
    } else {
      out.append(text, pos, length);
      pos += length;
    }
  }
  return out;
}

// The exception of a Result's error: its message made valid UTF-8, its kind kept.
inline ScaleprofError error_of(const Error& e) {
  return ScaleprofError(utf8_message(e.message), e.kind);
}

template <class T>
T unwrap(Result<T> r) {
  if (!r) throw error_of(r.error());
  return std::move(r).value();
}

inline void check(const Status& s) {
  if (!s) throw error_of(s.error());
}

}  // namespace scaleprof::python

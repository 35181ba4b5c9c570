// The exception every Result error of the binding becomes (scaleprof.ScaleprofError, a RuntimeError,
// registered once in scaleprof_module.cc), shared by the binding's source files.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "core/result.h"
#include "core/utf8.h"

namespace scaleprof::python {

struct ScaleprofError : std::runtime_error {
  using std::runtime_error::runtime_error;
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

template <class T>
T unwrap(Result<T> r) {
  if (!r) throw ScaleprofError(utf8_message(r.error().message));
  return std::move(r).value();
}

inline void check(const Status& s) {
  if (!s) throw ScaleprofError(utf8_message(s.error().message));
}

}  // namespace scaleprof::python

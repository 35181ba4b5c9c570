// The exception every Result error of the binding becomes (scaleprof.ScaleprofError, a RuntimeError,
// registered once in scaleprof_module.cc), shared by the binding's source files.
#pragma once

#include <stdexcept>
#include <utility>

#include "core/result.h"

namespace scaleprof::python {

struct ScaleprofError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class T>
T unwrap(Result<T> r) {
  if (!r) throw ScaleprofError(r.error().message);
  return std::move(r).value();
}

inline void check(const Status& s) {
  if (!s) throw ScaleprofError(s.error().message);
}

}  // namespace scaleprof::python

// Sums of values that come from input. The reader bounds each trace's times (docs/cli.md), so no
// analysis of one trace can wrap around int64; sums ACROSS traces (all ranks pooled) still can, and
// a wrapped sum is a silently wrong number. These add and say whether the result is exact.
#pragma once

#include <cstdint>

namespace scaleprof {

// *sum += value, unless that leaves int64: then *sum is unchanged and false is returned.
inline bool add_checked(int64_t* sum, int64_t value) {
  int64_t out = 0;
  if (__builtin_add_overflow(*sum, value, &out)) return false;
  *sum = out;
  return true;
}

}  // namespace scaleprof

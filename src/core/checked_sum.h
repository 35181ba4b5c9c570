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

// A running sum that stops at the first addition passing int64: it then holds INT64_MAX (or INT64_MIN
// for a sum going down), so comparisons still rank it first (last), and `exact` is false: print it
// as unknown, never as the number.
struct CheckedTotal {
  int64_t value = 0;
  bool exact = true;
  void add(int64_t v) {
    if (exact && !add_checked(&value, v)) {
      exact = false;
      value = v > 0 ? INT64_MAX : INT64_MIN;
    }
  }
};

// *product = a * b, unless that leaves int64: then *product is unchanged and false is returned.
inline bool multiply_checked(int64_t* product, int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return false;
  *product = out;
  return true;
}

// A figure of an analysis that could not be computed exactly: a sum, difference or product of values
// read from a file that leaves int64 (two matmuls of 2^62 FLOPs each, a `Total Allocated` near
// INT64_MIN). It is kept in the figure's own int64 field, sticks through every later sum, and a
// report shows it as null with a note (never the wrapped number). INT64_MIN itself is never a figure:
// a result equal to it is unknown too, so the marker cannot be mistaken for a value.
inline constexpr int64_t kUnknownFigure = INT64_MIN;

inline bool is_unknown_figure(int64_t v) {
  return v == kUnknownFigure;
}
// a + b; kUnknownFigure when either is unknown or the sum leaves int64.
inline int64_t sum_or_unknown(int64_t a, int64_t b) {
  int64_t out = 0;
  if (a == kUnknownFigure || b == kUnknownFigure || __builtin_add_overflow(a, b, &out)) return kUnknownFigure;
  return out;
}
// a - b; kUnknownFigure when either is unknown or the difference leaves int64.
inline int64_t difference_or_unknown(int64_t a, int64_t b) {
  int64_t out = 0;
  if (a == kUnknownFigure || b == kUnknownFigure || __builtin_sub_overflow(a, b, &out)) return kUnknownFigure;
  return out;
}
// *sum += v, kept unknown once it is (the figure form of CheckedTotal).
inline void add_or_unknown(int64_t* sum, int64_t v) {
  *sum = sum_or_unknown(*sum, v);
}

}  // namespace scaleprof

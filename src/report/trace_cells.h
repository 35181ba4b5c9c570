// How the trace reports show their numbers: nanoseconds as microseconds, percentages, and null for
// what is undefined.
#pragma once

#include <cmath>
#include <cstdint>

#include "report/table.h"

namespace scaleprof::report {

// Nanoseconds shown as microseconds with three decimals (exact: every ns digit is kept).
inline Cell us_cell(int64_t ns) {
  return Cell(static_cast<double>(ns) / 1e3, 3);
}
// A statistic in nanoseconds (mean, quantile) as microseconds; null when undefined (empty sample).
inline Cell us_stat_cell(double ns) {
  return std::isfinite(ns) ? Cell(ns / 1e3, 3) : Cell::null();
}
// A percentage with two decimals; null when undefined (0/0).
inline Cell pct_cell(double pct) {
  return std::isfinite(pct) ? Cell(pct, 2) : Cell::null();
}

}  // namespace scaleprof::report

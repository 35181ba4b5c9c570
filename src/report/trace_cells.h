// How the trace reports show their numbers: nanoseconds as microseconds, percentages, and null for
// what is undefined.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/checked_sum.h"
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

// A figure summed from the file's values (FLOPs, bytes): null where the sum passed int64
// (core/checked_sum.h's kUnknownFigure), never the marker's number.
inline Cell figure_cell(int64_t v) {
  return is_unknown_figure(v) ? Cell::null() : Cell(v);
}
// The note a table's title gets when some of its figures are unknown.
inline constexpr const char* kUnknownFigureNote = "; null: a sum of the trace's figures past 2^63, not computed";

}  // namespace scaleprof::report

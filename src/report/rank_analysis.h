// Shared plumbing of the trace reports: run an analysis on every selected rank of a loaded set (in
// parallel, results in rank order), and format its numbers.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "report/table.h"
#include "report/trace_report.h"

namespace scaleprof::report {

// Runs `fn(const RankTrace&)` for each selected rank and returns the results in rank order. Ranks
// are independent, so they run on up to one thread per core.
template <class Fn>
auto analyse_ranks(const trace::TraceSet& set, const TraceReportOptions& options, Fn fn) {
  using Result = decltype(fn(std::declval<const trace::RankTrace&>()));
  const std::vector<const trace::RankTrace*> ranks = selected_ranks(set, options);
  std::vector<Result> out(ranks.size());
  const size_t threads = std::min<size_t>(ranks.size(), std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    for (size_t i = 0; i < ranks.size(); ++i) out[i] = fn(*ranks[i]);
    return out;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < ranks.size(); i = next++) out[i] = fn(*ranks[i]);
    });
  }
  for (std::thread& t : pool) t.join();
  return out;
}

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

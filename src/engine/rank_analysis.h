// Runs an analysis on every selected rank of a loaded set (in parallel, results in rank order): the
// engine's driver for a set loaded whole (report/trace_*_report.cc).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "core/task_group.h"
#include "engine/rank_results.h"
#include "trace/trace_set.h"

namespace scaleprof::engine {

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
  TaskGroup group;  // a rank's exception (out of memory) is thrown again here, as on one thread
  group.run_on(static_cast<unsigned>(threads), [&] {
    for (size_t i = next++; i < ranks.size() && !group.failed(); i = next++) out[i] = fn(*ranks[i]);
  });
  group.join_or_rethrow();
  return out;
}

}  // namespace scaleprof::engine

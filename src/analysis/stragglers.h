// Who everyone waits for: stragglers from matched collectives and per-rank step rows.
//
// A rank's lag at a call = its gap before the call (its start − the end of its previous collective)
// − the median gap of the other ranks: the extra time it spent between two synchronisations. (Start
// times alone mislead: after a broadcast the non-root ranks leave early, after an all-reduce the
// last to arrive leaves last.) A call where some rank has no previous collective has no lag. Per rank: how often it
// arrived last, the wait it imposed on the others (the sum, over the calls it arrived last at, of every other rank's
// wait) and its own wait. Per step: the rank with the largest summed lag over the step's matched calls, and that lag.
// For the worst straggler (largest wait imposed) its step rows are set against the median over ranks of each quantity,
// averaged over the steps both have: step time, host busy and idle time, data loading, GPU busy time and time in
// collectives — what differs says why it is late. Sums are checked (core/checked_sum.h): one that would
// pass int64 is marked inexact and shown as unknown, never wrapped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/collective_calls.h"
#include "analysis/collective_match.h"
#include "analysis/collective_rows.h"

namespace scaleprof::analysis {

struct RankStraggling {
  int64_t rank = 0;
  int64_t calls = 0;                 // matched calls the rank took part in
  int64_t arrived_last = 0;          // times it was the latest to start
  int64_t wait_imposed_ns = 0;       // others' wait at the calls it arrived last at
  int64_t own_wait_ns = 0;           // its own wait, summed
  double mean_lag_when_last_ns = 0;  // its lag averaged over the calls it arrived last at that have a lag
  // false: the sum passed int64 (core/checked_sum.h); the figure is then INT64_MAX, to be shown as unknown
  bool wait_imposed_exact = true;
  bool own_wait_exact = true;
};

struct StepStraggler {
  int64_t step = -1;
  int64_t calls = 0;  // matched calls in the step with a lag
  int64_t slowest_rank = -1;
  int64_t lag_ns = 0;  // the slowest rank's summed lag over the step's calls
  bool lag_exact =
      true;  // false: that sum passed int64 (lag_ns is then INT64_MAX or INT64_MIN, to be shown as unknown)
};

struct StepComparison {
  std::string quantity;  // "step", "host busy", "host idle", "data loading", "GPU busy", "communication"
  double straggler_ns = 0;
  double median_ns = 0;  // median over ranks, averaged over steps
};

struct StragglerAnalysis {
  std::vector<RankStraggling> ranks;  // by rank
  std::vector<StepStraggler> steps;   // by step
  int64_t worst_rank = -1;            // -1 when no matched call has waiting
  int64_t steps_compared = 0;
  std::vector<StepComparison> worst_vs_median;
};

StragglerAnalysis find_stragglers(const CollectiveRows& rows, const CollectiveAnalysis& collectives);
// The same on rows not yet made compact.
StragglerAnalysis find_stragglers(const std::vector<RankCollectives>& ranks, const CollectiveAnalysis& collectives);

}  // namespace scaleprof::analysis

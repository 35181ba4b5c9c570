// Why a rank straggled, not only who: each rank's slow steps set beside the samples of its GPU taken
// during them (issue 33). A rank that ran its slow steps at a clearly lower SM clock than the other
// ranks (or than its own normal steps) gets a one-line verdict naming the clock and the throttle
// reasons its driver gave ("rank 1 ran at 990 MHz (others 1980 MHz) under sw_power_cap in steps 4-7");
// where the clock does not explain the slowness, the row says so and has no verdict.
//
// Under synchronous data parallelism every rank's step lasts as long: the gradient all-reduce waits for
// the slowest rank, so step times name no straggler. The profiler traces do: per profiled step, the rank
// the others waited for at the matched collectives (tables::WaitedForStep). A step of a rank that the
// others waited for more than the floor is a slow step ("waited for") beside those slow by step time (a
// step of jitter slow by its time does not hide them), and the same clock join gives its verdict.
//
// Time base: the rank's own wall clock (steps.csv start_unix_ns, gpu.csv time_unix_ns, both Unix ns
// of the same host), so no cross-host alignment is involved. Pure function over tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tables/rank_activity.h"

namespace scaleprof::analysis {

// A step of a rank is slow when it lasted more than `ratio` times the median of the other ranks'
// durations of the same step (same epoch and step number) and more than `floor_s` longer than it:
// the ratio finds stragglers at any step length, the floor keeps millisecond jitter of tiny steps
// out. A slow rank's clock is low when the median SM clock of its slow steps is at most
// `clock_ratio` times the reference (the other ranks' median in the same steps, else its own normal
// steps').
struct StragglerRule {
  double ratio = 1.1;
  double floor_s = 0.01;
  double clock_ratio = 0.9;
};

struct StragglerCause {
  int64_t rank = 0;
  int64_t slow_steps = 0;
  int64_t steps_compared = 0;           // steps of the rank that other ranks also recorded
  std::string steps;                    // the slow steps: "steps 4-7", or "epoch 0 steps 4-7; epoch 1 steps 2"
  double slow_step_s = tables::kNaN;    // median duration of its slow steps
  double others_step_s = tables::kNaN;  // median of the other ranks' durations of the same steps
  // Median SM clock (MHz) and power (W) of the samples inside the slow steps, inside the rank's other
  // steps, and inside the other ranks' same steps; NaN without such samples.
  double slow_clock_mhz = tables::kNaN;
  double normal_clock_mhz = tables::kNaN;
  double others_clock_mhz = tables::kNaN;
  double slow_power_w = tables::kNaN;
  double normal_power_w = tables::kNaN;
  int64_t slow_samples = 0;   // GPU samples inside the slow steps
  uint64_t slow_reasons = 0;  // throttle reasons seen in those samples (any, OR-ed)
  // Some slow steps were found from the waits at the collectives, not from step time (see above), and the
  // median wait the rank imposed on the others in those (NaN: none from the waits).
  bool waited_for = false;
  double waited_s = tables::kNaN;
  bool clock_low = false;  // the rule's clock test held
  std::string verdict;     // "" where the evidence is not clear
};

// One row per rank with at least one slow step, by rank. Ranks without GPU samples still get a row
// (their clock columns NaN, no verdict).
// `waited_for`: the traces' waited-for steps (may be empty). A step record of a rank is waited for when
// more than half of it lies inside one of its waited-for steps whose wait passes rule.floor_s.
std::vector<StragglerCause> straggler_causes(const std::vector<tables::RankActivity>& ranks,
                                             const StragglerRule& rule = {},
                                             const std::vector<tables::WaitedForStep>& waited_for = {});

}  // namespace scaleprof::analysis

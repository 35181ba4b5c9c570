// What removing each cause of lost efficiency would gain (issue 29), from the what-if model
// (whatif.h) over the runs of two scales of a strategy, and the user's own what-ifs.
//
// A scale (WhatIfScale) is its mean epoch time, the share of it spent in the steps, and the
// timelines of its runs' profiled steps; the model's predicted / measured time in the profiled steps,
// pooled over the runs, is applied to the time in the steps of the epoch (as every trace basis
// assumes the profiled steps representative of the epoch).
//
// Each cause's gain at scale n1 against the smallest scale n0, in seconds per epoch at n1:
//   computation, data loading, optimizer, host overhead, idle: that part of every rank's local work
//       scaled down to what it would be had it shrunk with the workers since n0 (per sample on a worker
//       where both scales know their samples, else by n0/n1; weak scaling: the same time), never up;
//   communication: every collective's transfer scaled the same way (free when n0 has no collective,
//       one worker);
//   waiting for stragglers: in each run the rank whose local work most exceeds the others' median
//       capped at it (whatif.h: ranks_at_median), less the same at n0 scaled by n0/n1;
//   outside the steps: its excess (scaling_loss.h: it does not need the model).
// points = 100 x gain / t1 (the share of the epoch at n1 the fix removes beyond what it removes at n0,
// which is exactly the cause's part of 1 - E when it is the only one). Fixing every cause at once is
// replayed too: where causes overlap (the straggler's slow work is also computation, say) the gains
// add up to more than the fix of all, and the difference is the interaction, a line of its own; what
// the fix of all still leaves of the lost efficiency is the rest.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/scaling_loss.h"
#include "analysis/whatif.h"
#include "core/result.h"
#include "tables/step_timeline.h"

namespace scaleprof::analysis {

struct WhatIfScale {
  int64_t workers = 0;
  double seconds = tables::kNaN;                 // mean epoch time
  double in_steps = 1.0;                         // share of the epoch in the steps (1: not separated)
  double samples_per_worker = tables::kNaN;      // per epoch, NaN unknown
  std::vector<const tables::RunTimeline*> runs;  // timelines with profiled steps
  bool has_model() const { return !runs.empty(); }
};

// A user's what-if (`scaleprof report --what-if SPEC`), parsed:
//   "rank N at median"                       rank N's local work capped at the others' median
//   "stragglers at median"                   each run's slowest rank so
//   "communication free" | "communication Fx faster" (also "xF faster")
//   "all-to-all balanced"                    every all-to-all whose split sizes are in the trace with
//                                            its bytes spread evenly over its pairs of distinct ranks
//                                            (also "alltoall balanced")
//   "computation|data loading|optimizer|host overhead|idle Fx faster" (or "free")
//   "<part> at base"                         that part shrunk with the workers since the smallest scale
//   "NAME Fx faster" | "NAME free"           every operator, annotation or kernel whose name contains
//                                            NAME (as written; quotes around it removed)
struct WhatIfSpec {
  enum class Kind : uint8_t {
    kRankAtMedian,
    kStragglersAtMedian,
    kCommunication,
    kPart,
    kPartAtBase,
    kNamed,
    kAlltoallBalanced
  };
  std::string text;
  Kind kind = Kind::kPart;
  int64_t rank = -1;
  int part = -1;       // tables::TimelineParts index (kPart, kPartAtBase; -1 with kPartAtBase on communication)
  double scale = 1.0;  // time multiplied by this (1 / F; 0 free)
  std::string name;    // kNamed
};
inline constexpr size_t kMaxTargetName = 4096;
Result<WhatIfSpec> parse_what_if(std::string_view text);

// The named targets of `specs` (kNamed), each once, in order: the timelines time them per segment.
std::vector<std::string> what_if_targets(const std::vector<WhatIfSpec>& specs);

// Ok when every target of the timelines (each run's RunTimeline::targets, the same list) ran in some
// profiled step of some run; else kBadInput naming the first that did not: a typo in a name would
// otherwise predict "no gain".
Status check_targets_ran(const std::vector<std::string>& targets, const std::vector<const tables::RunTimeline*>& runs);

// Ok when each of `specs` has something to change in the timelines: every named target ran
// (check_targets_ran; the timelines time what_if_targets(specs)), and "all-to-all balanced" found an
// all-to-all whose split sizes are in the trace in some profiled step of some run; else kBadInput naming
// the spec (balancing nothing would otherwise predict "no gain").
Status check_what_ifs_apply(const std::vector<WhatIfSpec>& specs, const std::vector<const tables::RunTimeline*>& runs);

// The predicted epoch time at `at` (the smallest scale `base` for "at base").
struct WhatIfOutcome {
  bool ok = false;
  double epoch_s = tables::kNaN;
  double predicted_epoch_s = tables::kNaN;
  double step_ms = tables::kNaN;                                                      // mean profiled step, measured
  double predicted_step_ms = tables::kNaN;                                            // the same, re-timed
  double predicted_step_ms_min = tables::kNaN, predicted_step_ms_max = tables::kNaN;  // over the steps
  std::vector<StepReplay> steps;  // per run and step number, in run order (the spread a mean hides)
};
WhatIfOutcome apply_what_if(const WhatIfSpec& spec, const WhatIfScale& base, const WhatIfScale& at, bool weak);

// Fills loss->gains, interaction and rest from the model (nothing when either scale has no model).
void add_what_if_gains(const WhatIfScale& base, const WhatIfScale& at, ScaleLoss* loss);

// The epoch time at `workers` projected from two scales by the model: time outside the steps fitted as
// a + b/n through both scales (a, b >= 0); each part of a typical rank's local work per epoch fitted on
// its own (a + b/n, held where it grew; data loading that grew: a + b n); the wait for late ranks per step as at the
// larger scale; the exposed transfer per step scaled by the ring all-reduce's 2(n-1)/n at the measured
// bandwidth; steps per epoch as a power of n through both scales.
struct ModelProjection {
  bool ok = false;
  int64_t workers = 0;
  double predicted_epoch_s = tables::kNaN;
  std::string assumptions;
};
ModelProjection project_epoch(const WhatIfScale& base, const WhatIfScale& at, int64_t workers, bool weak);

}  // namespace scaleprof::analysis

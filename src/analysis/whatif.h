// The what-if model (issue 29): the profiled steps of every rank of a run re-timed under a change,
// to say what removing a cause of lost time would gain, where the exclusive split of each rank's
// steps (step_decomposition.h) only says what the rank was doing.
//
// The model (tables/step_timeline.h gives its inputs): each rank runs its steps one after another;
// inside a step its progress can depend on the other ranks only at its arrivals at the collectives
// matched across ranks. Between two such joins the rank does local work (every exclusive part but
// exposed communication) and may be blocked on a collective (exposed communication). A collective's
// transfer starts when its last rank arrives and lasts, on each rank, what it lasted after that
// arrival (its measured completion - the last arrival). Replayed:
//
//   join'  = max( previous join' + local work',
//                 completion' + slack'   for each collective the rank saw complete since the
//                                         previous join (slack: measured join - measured completion, the
//                                         work after it, scaled as the segment's work is) )
//   arrival' at a collective = that join'
//   completion'(rank) = max over its ranks of arrival' + transfer(rank) x transfer_scale
//
// With nothing changed every join' is the measured join (the model replays the trace exactly); the
// time a rank was blocked becomes whatever the re-timed collectives make it wait. A segment with
// blocked time but no collective completing in it (communication that was never matched) keeps that
// time as its own work, scaled like the transfers. Each rank's next step starts its measured gap
// after the previous step's re-timed end. Joins are replayed in the order of their measured times,
// so every input is read once (O(joins log joins)), and a call whose arrival is not replayed yet
// (clocks the matching could not align) uses the measured arrival.
//
// The change (WhatIf): each exclusive part of local work scaled, the collectives' transfers scaled
// (0: free; an all-to-all balanced: by its own mean / max bytes per peer pair), and ranks whose local
// work between two joins is capped at the median of the other ranks' local work there (their excess
// over the others removed: "rank 1 at median"); what the cap removes comes first off the work after a
// completion (a slow rank is rarely the one blocked), and such a rank starts its first profiled step
// no later than the others' median start (its lateness there comes from its previous, unprofiled step).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tables/step_timeline.h"

namespace scaleprof::analysis {

struct WhatIf {
  // Local work: each exclusive part (tables::TimelineParts' order) multiplied by this.
  std::array<double, tables::kTimelineParts> part_scale{1, 1, 1, 1, 1, 1, 1};
  // Each collective's transfer (completion - last arrival) multiplied by this; 0: free.
  double transfer_scale = 1.0;
  // Each all-to-all whose split sizes are in the trace balanced: its transfer also multiplied by its
  // TimelineCall::alltoall_balance (mean / max bytes over the pairs of distinct ranks: the same bytes
  // spread evenly, the slowest pair setting the time); other calls unchanged.
  bool balance_alltoall = false;
  // Ranks whose local work between two joins is capped at the median of the other ranks' local work
  // between the same joins (applied after part_scale).
  std::vector<int64_t> ranks_at_median;
  // part_scale applies to no more of a rank's part between two joins than the median over the ranks
  // there: a cause's fix scales what a typical rank spends in the part, never another rank's excess
  // (which is the straggler's cause: its sleep is "idle" on its own timeline).
  bool scale_typical_only = false;
  // A named target's time (RunTimeline::targets, matched by its text) multiplied by target_scale: the
  // local work of each segment loses (1 - target_scale) of the target's time in it, never more than
  // the segment's local work. Empty: none.
  std::string target;
  double target_scale = 1.0;

  bool changes_nothing() const;
};

struct StepReplay {
  int64_t step = 0;
  int64_t ranks = 0;
  double measured_ns = 0;   // mean over its ranks of the step's duration
  double predicted_ns = 0;  // the same, re-timed
};

struct Replay {
  bool ok = false;                // some step was replayed
  double measured_ns = 0;         // the profiled steps' durations summed over steps and ranks
  double predicted_ns = 0;        // the same, re-timed
  std::vector<StepReplay> steps;  // by step number

  // predicted / measured: what the change makes of the time in the steps (1: nothing; NaN: no step).
  double ratio() const;
};

Replay replay(const tables::RunTimeline& timeline, const WhatIf& change);

// The rank whose local work most exceeds the others' median, summed over joins (-1 when none does),
// and that excess in ns.
struct SlowRank {
  int64_t rank = -1;
  double excess_ns = 0;
};
SlowRank slowest_rank(const tables::RunTimeline& timeline);

}  // namespace scaleprof::analysis

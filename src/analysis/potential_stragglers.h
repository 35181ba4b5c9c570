// HTA's `TraceAnalysis.get_potential_stragglers` (hta/analyzers/straggler.py,
// find_stragglers_with_late_start_comm_kernels): the ranks that start the dominant communication
// kernel of each step last.
//
// HTA's rule, step by step:
// 1. The steps: the ProfilerSteps asked for among those of the analysis window (the last step left out
//    as in every HTA report); events of a step: host events starting in its window, device work
//    launched by them. t_min = the earliest start of those events over every rank, and the mean step
//    time = (their latest end - t_min) / the number of steps.
// 2. Candidates: communication kernels (kernel_classify.h) at least 1 % of the mean step long; of each
//    (rank, stream, step, name) the last to start.
// 3. The (stream, name) whose duration, divided by the mean step time, varies most across ranks: the
//    largest mean over steps of its sample standard deviation over ranks (ranks need to be 2 or more).
// 4. Its kernels' normalized start time, (start - t_min) / mean step time, per (rank, step); in each
//    step the ranks whose start is at or above the num_candidates-th latest are flagged.
// 5. Ranks by the number of steps they were flagged in (most first, then by rank): the first
//    num_candidates are the potential stragglers.
// Where scaleprof differs from HTA 0.6.1 (docs/differences-from-hta.md, "Potential stragglers"):
// communication kernels are those of kernel_classify.h (HTA: names starting "ncclKernel", so none of
// NCCL >= 2.19's ncclDevKernel_*), on any stream (HTA: stream > 0), in any step (HTA leaves out step 0);
// a step with fewer candidate ranks than num_candidates flags them all (HTA: IndexError); one rank gives
// no candidate kernel and an empty result with its reason (HTA: TypeError).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "trace/event_table.h"

namespace scaleprof::analysis {

// What one rank contributes, reduced from its trace while it is in memory.
struct StragglerStepSpan {
  int64_t step = -1;
  int64_t first_ns = 0;     // earliest start of the step's events
  int64_t last_end_ns = 0;  // latest end of the step's events (device work launched in it included)
};

struct CommKernelStart {
  int64_t step = -1;
  int64_t stream = -1;
  std::string name;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
};

struct RankStragglerEvents {
  int64_t rank = 0;
  std::vector<StragglerStepSpan> steps;  // analysed steps, by start
  // Per (stream, step, name) the last communication kernel to start (ties: the later in the file).
  std::vector<CommKernelStart> kernels;
};

RankStragglerEvents summarize_for_potential_stragglers(const trace::RankTrace& trace, bool include_last_step = false);

struct PotentialStragglerOptions {
  std::vector<int64_t> profiler_steps;  // empty: every analysed step
  int64_t num_candidates = 2;           // below 1 counts as 1, as in HTA
  double min_normalized_duration = 0.01;
};

struct StragglerMetricRow {
  int64_t step = -1;
  int64_t rank = 0;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  double normalized_start = 0;  // (ts - t_min) / mean step time
  bool flagged = false;         // at or above the step's num_candidates-th latest start
};

struct RankLateStarts {
  int64_t rank = 0;
  int64_t flagged_steps = 0;
  bool potential_straggler = false;  // among the first num_candidates
};

struct PotentialStragglers {
  std::vector<int64_t> steps;  // the steps analysed, ascending
  int64_t t_min_ns = 0;
  double mean_step_ns = 0;
  double min_duration_ns = 0;
  int64_t stream = -1;  // the chosen (stream, kernel); -1 when none
  std::string kernel;
  double mean_duration_std = 0;            // its mean over steps of the std over ranks of dur / mean step time
  std::vector<StragglerMetricRow> metric;  // by step, then rank
  std::vector<RankLateStarts> ranks;       // by flagged steps (most first), then rank
  std::vector<int64_t> stragglers;         // HTA's result: the first num_candidates ranks
  std::string note;                        // why there is no result ("" when there is one)
};

// Fails (kUsage) when none of options.profiler_steps is among the ranks' analysed steps, naming those.
Result<PotentialStragglers> find_potential_stragglers(const std::vector<RankStragglerEvents>& ranks,
                                                      const PotentialStragglerOptions& options);

}  // namespace scaleprof::analysis

// What `scaleprof trace diff` keeps of one rank: per analysed step, its wall time, the host operators'
// exclusive (self) times and the device work by what launched it. The engine reduces each rank to
// this on the thread that read it (compact: names x steps), and analysis/trace_diff.h compares two
// sets of them.
//
// Rules (docs/trace-diff.md):
// * Steps: the analysis window's ProfilerStep windows (the last one dropped as in every HTA report,
//   analysed_steps()), then the first `warmup_steps` of them dropped as warm-up. A rank with no more
//   than `warmup_steps` steps keeps them all (warmup_skipped says how many were dropped). A rank
//   without any ProfilerStep has one "step", the whole trace (has_steps false), so its figures are
//   still reported (the caller says that they are whole-trace figures).
// * Operators: every host call (cpu_op, user_annotation, runtime/driver calls) counts in the step
//   whose host window holds its start, on any thread (HTA assigns iterations the same way), with its
//   self time from the operator table (analysis/operator_table.h: nesting per thread, torch's
//   dup-node rule, async collectives 0). On the thread that runs the steps the self times inside a
//   step add up to the step exactly, ProfilerStep* itself holding what no operator covers.
// * Device work (kernels, copies, sets: what occupies a stream) counts in the step whose window holds
//   its launch (the runtime call with its correlation id, else the op with its External id, as
//   profiler_steps.h does); work launched in no kept step is left out, as HTA leaves it out. Its key is
//   what launched it: the path of enclosing host operators of the launching call, outermost first
//   (ProfilerStep* and the runtime call itself left out), its kernel type and its name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/kernel_classify.h"
#include "trace/event_table.h"

namespace scaleprof::analysis {

struct DiffSummaryOptions {
  int64_t warmup_steps = 1;        // leading analysed steps dropped (kept when no step would be left)
  bool include_last_step = false;  // keep the last ProfilerStep (HTA's include_last_profiler_step)
};

// One figure per kept step (same order as DiffRankSummary::steps).
struct StepSeries {
  std::vector<int64_t> count;  // calls (operators) or device events (kernels) in the step
  std::vector<int64_t> ns;     // self time (operators) or summed durations (kernels)
};

struct DiffOperator {
  std::string name;  // as the operator table shows it ("ProfilerStep*" for every step)
  StepSeries per_step;
};

struct DiffKernel {
  std::string path;  // launching operators, outermost first, joined by " > "; "" when unknown
  KernelType type = KernelType::kComputation;
  std::string name;
  StepSeries per_step;
};

struct DiffRankSummary {
  int64_t rank = 0;
  std::string path;                  // the trace file, for messages
  bool has_steps = false;            // false: one pseudo-step, the whole trace
  int64_t warmup_skipped = 0;        // leading analysed steps dropped
  std::vector<int64_t> steps;        // step numbers kept (-1 for the whole-trace pseudo-step)
  std::vector<int64_t> step_ns;      // wall time of each kept step
  std::vector<int64_t> gpu_busy_ns;  // union of the device work launched in it (0 without device work)
  bool has_device_work = false;
  std::vector<DiffOperator> operators;  // in order of first appearance
  std::vector<DiffKernel> kernels;      // in order of first appearance
};

DiffRankSummary summarize_for_diff(const trace::RankTrace& trace, const DiffSummaryOptions& options = {});

}  // namespace scaleprof::analysis

// ProfilerStep windows of one rank and the device time of the work launched in each.
//
// `torch.profiler.profile(schedule=...)` wraps every step in `record_function("ProfilerStep#N")`
// (user_annotation; cpu_op in old files). In PyTorch >= 2.4 `ProfilerStep#N` covers schedule step N;
// PyTorch 1.13 labels the span of step N as `#(N-1)` and opens `#0` twice — the numbers are reported
// as written, so both windows of a repeated number are kept.
//
// Per step:
// * host window [start, end) = the annotation's interval on its thread;
// * device work launched in the step ("kernels" below, named so in the output for continuity):
//   every device event that occupies a stream, as device_event_kind() tells them: CUDA and ROCm
//   kernels, copies and sets, and MTIA device events (not sync records, which are host waits). It
//   counts in the step whose window holds its launch: the host runtime/driver call with the event's
//   `correlation` id (cuda_runtime, mtia_runtime, hip* calls), else the host op with its `External
//   id`; an event with neither is launched in no step (counted in kernels_outside_steps);
// * gpu_busy = length of the union of those events' intervals over all devices and streams (time
//   during which at least one of them ran); kernel_sum = plain sum of their durations (concurrent
//   events count twice).
// CPU-only traces have no device work: the device fields stay 0 and has_kernels is false.
//
// Windows never overlap (issue 30): one starting before the end of an earlier one (by start; the
// longer first among equal starts) is left out and counted in overlapping_steps, which the steps
// report notes. A real profiler closes each step before opening the next; a file with overlapping
// windows made every per-window loop of the analyses (critical path, decomposition, phases, memory)
// scan the events of all the windows around it, O(steps x events): 40 s on a 69 kB trace. With
// disjoint windows by start, each event lies in at most one window and those loops are linear.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "trace/event_table.h"

namespace scaleprof::analysis {

struct ProfilerStepWindow {
  int64_t step = -1;     // N of ProfilerStep#N
  uint32_t event = 0;    // row of the annotation in the EventTable
  int64_t start_ns = 0;  // host window, absolute trace clock
  int64_t end_ns = 0;
  int64_t kernels = 0;  // device events launched in the window
  int64_t gpu_busy_ns = 0;
  int64_t kernel_sum_ns = 0;
  int64_t first_kernel_start_ns = trace::kNone;  // kNone without kernels
  int64_t last_kernel_end_ns = trace::kNone;

  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct ProfilerSteps {
  std::vector<ProfilerStepWindow> steps;  // by start time, disjoint
  bool has_kernels = false;               // the trace has device work at all
  int64_t kernels_outside_steps = 0;      // device events whose launch is in no window (or unknown)
  int64_t overlapping_steps = 0;          // windows left out: each started inside an earlier one
};

// The one rule for a profiler step annotation's name, asked by every analysis that looks for steps:
// "ProfilerStep#N" with N digits only, as torch.profiler writes it. "ProfilerStep#12" -> 12; nullopt
// for any other name, a malformed or out-of-range number included. (HTA's `^ProfilerStep#(\d+)` also
// takes a name that goes on after the digits, which no profiler writes.)
std::optional<int64_t> profiler_step_number(std::string_view name);
inline bool is_profiler_step_name(std::string_view name) {
  return profiler_step_number(name).has_value();
}

// Whether an annotation a user asked for by name (`--annotation ProfilerStep`) means the
// profiler's steps, found by the rule above, rather than spans whose name contains the text.
inline bool names_profiler_steps(std::string_view annotation) {
  return annotation == "ProfilerStep" || annotation == "ProfilerStep#";
}

// The name key_averages() gives every step annotation together (torch's `_rewrite_name`), and so
// does compute_operator_table.
inline constexpr std::string_view kAllProfilerStepsName = "ProfilerStep*";

ProfilerSteps find_profiler_steps(const trace::RankTrace& trace);

}  // namespace scaleprof::analysis

// HTA's `TraceAnalysis.get_cupti_counter_data_with_operators` (hta/analyzers/cupti_counter_analysis.py):
// the performance counters of each kernel that PyTorch's profiler measured in CUPTI profiler mode
// (events of cat `cuda_profiler_range`, their counters in `args`, read into trace::CounterArgsTable),
// with the operators the kernel ran under.
//
// HTA's rule: the range events and the `cudaLaunchKernel*` calls (cat cuda_runtime) of the rank are each
// ordered by start and paired in that order (the range events carry no correlation id); when their
// numbers differ the rank has no result (HTA logs an error and leaves it out). A kernel's operator
// stack is the cpu_op calls on its launch's thread that hold the launch (start at or before it, end at
// or after its end), outermost first; the top-level operator is the first, the bottom-level the last.
// Only the events of the analysis window (analysis_window.h) count, as in HTA's loaded trace.
// Differences from HTA 0.6.1: docs/differences-from-hta.md, "CUPTI counters".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "trace/event_table.h"

namespace scaleprof::analysis {

struct CuptiKernel {
  std::string name;
  int64_t pid = trace::kNone;
  int64_t tid = trace::kNone;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  std::vector<std::string> op_stack;  // outermost first; empty when no cpu_op holds the launch
  std::vector<double> counters;       // by RankCuptiCounters::counter_names; NaN where the event lacks one
};

struct RankCuptiCounters {
  int64_t rank = 0;
  int64_t ranges = 0;                      // cuda_profiler_range events in the window
  int64_t launches = 0;                    // cudaLaunchKernel* calls in the window
  std::string error;                       // set when the two differ: no kernels then
  std::vector<std::string> counter_names;  // in the order the trace first names them
  std::vector<CuptiKernel> kernels;        // by start (file order among equal starts)
};

// `rows`: the analysis window's rows.
RankCuptiCounters cupti_counters_with_operators(const trace::RankTrace& trace, std::span<const uint32_t> rows);

}  // namespace scaleprof::analysis

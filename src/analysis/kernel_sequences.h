// HTA's `TraceAnalysis.get_frequent_cuda_kernel_sequences` (hta/analyzers/cuda_kernel_analysis.py): the
// sequences of device work launched under a host operator, how often each occurs and their time.
//
// HTA's rule: the host calls whose name contains `operator_name` (a substring, so "ProfilerStep" takes
// every ProfilerStep#N) are the candidates; of them, only those at the smallest depth in the call stack
// (so a candidate nested in another is not counted twice) that launched at least `min_pattern_len`
// kernels, themselves or through their descendants, are roots. A root's pattern is its own name then the
// names of the device work its subtree launched, by start time; patterns are counted, with the summed
// device time of their work and the summed host time of their roots, and listed by count (most
// first), then by pattern text.
//
// The call stack is the operator table's nesting per thread (operator_table.h: torch's rules), with
// HTA's one link across threads: where exactly one thread runs the ProfilerSteps and another runs
// autograd::, that thread's top-level calls are put under the "## backward ##" annotation (else the
// ProfilerStep) of the first thread whose window holds them. Only the events of the analysis window
// (analysis_window.h: the last step left out, as HTA's loaded trace) count. Device work is what
// occupies a stream (kernels, copies, sets), attached to its launch (phases.h: launch_rows).
// Differences from HTA 0.6.1: docs/differences-from-hta.md, "Frequent kernel sequences".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/event_table.h"

namespace scaleprof::analysis {

struct KernelSequenceOptions {
  std::string operator_name;       // a substring of the roots' names; empty matches nothing
  int64_t min_pattern_len = 3;     // a root launches at least this many kernels
  bool include_last_step = false;  // keep the last ProfilerStep in the analysis window
};

struct KernelSequence {
  std::string root;                  // the root's own name (ProfilerStep#N as written)
  std::vector<std::string> kernels;  // by start time
  int64_t count = 0;                 // roots with this pattern
  int64_t gpu_ns = 0;                // summed durations of their device work
  int64_t cpu_ns = 0;                // summed durations of the roots
  std::string pattern() const;       // root and kernels joined by '|', as HTA's `pattern`
};

struct RankKernelSequences {
  int64_t rank = 0;
  int64_t candidates = 0;                 // calls whose name contains operator_name
  int64_t roots = 0;                      // of them, at the smallest depth with enough kernels
  std::vector<KernelSequence> sequences;  // by count (most first), then pattern
};

RankKernelSequences frequent_kernel_sequences(const trace::RankTrace& trace, const KernelSequenceOptions& options);

}  // namespace scaleprof::analysis

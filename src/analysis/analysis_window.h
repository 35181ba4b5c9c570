// The analysis window: the events of one rank that belong to complete profiler steps.
//
// PyTorch's profiler closes the last ProfilerStep#N when the schedule stops, often with its device
// work cut off, so HTA drops it after loading (Trace._filter_irrelevant_gpu_kernels) and every HTA
// analysis sees only the earlier steps. scaleprof computes the same selection once per rank and
// passes it to the analyses as a list of rows:
//
//  * Steps are disjoint as in profiler_steps.h: a step starting inside an earlier one is left out.
//  * With fewer than two distinct ProfilerStep#N names on the rank, nothing is filtered.
//  * Otherwise let S be the start of the last-starting step (and E the latest step end).
//    Host events are kept when they start before S (at or before E with include_last_step).
//  * Device work (kernels, copies, sets, sync records) is kept when its correlation id matches a
//    kept host event, i.e. when its launch was kept, however late the device ran it. Device work
//    without a correlation id follows the host rule on its own start time.
//  * The profiler's own span (cat "Trace") is never kept; HTA drops it at load time.
//
// Differences from HTA (docs/differences-from-hta.md): the distinct-step count is per rank (HTA
// counts step names across all ranks), steps are host events only (cpu_op / user_annotation), and
// device events without a correlation id are kept by time (HTA joins them on correlation -1 with
// every uncorrelated host event, duplicating them).
#pragma once

#include <cstdint>
#include <vector>

#include "trace/event_table.h"

namespace scaleprof::analysis {

struct WindowOptions {
  bool include_last_step = false;  // keep the last ProfilerStep too (HTA's include_last_profiler_step)
};

struct AnalysisWindow {
  bool filtered = false;        // false: fewer than two distinct steps, every event except the span kept
  size_t distinct_steps = 0;    // distinct ProfilerStep#N names among host events
  int64_t last_step_start = 0;  // ns; start of the last-starting step (meaningful when filtered)
  int64_t last_step_end = 0;    // ns; latest end among the steps
  std::vector<uint32_t> rows;   // kept rows of the EventTable, ascending
};

AnalysisWindow compute_analysis_window(const trace::RankTrace& trace, const WindowOptions& options = {});

}  // namespace scaleprof::analysis

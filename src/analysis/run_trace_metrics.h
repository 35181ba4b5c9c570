// The trace stage of the scalability report: profiler traces found in run directories go through the
// trace engine (trace::load_traces, the analysis window, temporal and kernel breakdowns, the operator
// table), and each run gets its GPU time split (TraceSums) and itwinai's computation fraction.
//
// Per rank, inside the analysis window (complete ProfilerSteps), with span = first to last device
// event (HTA's kernel time):
//   idle          = span - union of all device work              (temporal breakdown)
//   computation   = union of computation kernels                  (temporal breakdown)
//   communication = communication time not overlapping computation (kernel-type partition)
//   memory        = copies/sets overlapping neither                (kernel-type partition)
//   other         = span - all of the above (sync records, other device work)
// The five add up to the span. Ranks of a run are summed.
#pragma once

#include "importers/run_data.h"

namespace scaleprof::analysis {

struct TraceStageOptions {
  unsigned threads = 0;  // trace files read in parallel (0: one per core)
};

// Fills RunData::traces and, where the run has no computation sums yet, RunData::computation, for
// every run with trace files. Unreadable traces become errors naming the file.
void add_trace_metrics(importers::ScalabilityData* data, const TraceStageOptions& options = {});

}  // namespace scaleprof::analysis

// The trace stage of the scalability report: profiler traces found in run directories go through the
// trace engine one rank at a time (trace::stream_traces; the analysis window, temporal and kernel
// breakdowns, the operator table, the compact collective rows), and each run gets its GPU time split
// (TraceSums) and itwinai's computation fraction. Each rank is freed once reduced: memory is
// (threads x one trace) plus a few numbers and the collective rows per rank.
//
// Per rank, inside the analysis window (complete ProfilerSteps), with span = first to last device
// event (HTA's kernel time):
//   idle          = span - union of all device work              (temporal breakdown)
//   computation   = union of computation kernels                  (temporal breakdown)
//   communication = communication time not overlapping computation (kernel-type partition)
//   memory        = copies/sets overlapping neither                (kernel-type partition)
//   other         = span - all of the above (sync records, other device work)
// The five add up to the span. Ranks of a run are summed.
//
// And, GPU or CPU (gloo), from the collectives matched across the run's ranks
// (analysis/collective_match.h), over the calls launched inside a ProfilerStep: the profiled step
// time, each matched call's latency once per rank taking part (communication), the ranks' waits for
// the last rank to arrive (waiting for stragglers), how many calls there were and how many matched;
// per matched call its type, size and bus bandwidth, and per rank its own wait and the wait it imposed
// (analysis/stragglers.h).
//
// And the profiled steps split into exclusive parts (analysis/step_decomposition.h) from one rank per
// run, the rank that waited longest at the matched collectives (its waits moved from exposed
// communication), with that rank's operators by self time: the loss attribution's basis
// "decomposition" (analysis/scaling_loss.h).
#pragma once

#include <string>
#include <vector>

#include "tables/run_data.h"

namespace scaleprof::engine {

struct TraceStageOptions {
  unsigned threads = 0;  // trace files read in parallel (0: one per core)
  // Names the report's what-ifs make faster ("aten::mm 2x faster"): timed in each run's timeline.
  std::vector<std::string> what_if_targets;
};

// Fills RunData::traces and, where the run has no computation sums yet, RunData::computation, for
// every run with trace files. Unreadable traces become errors naming the file.
void add_trace_metrics(tables::ScalabilityData* data, const TraceStageOptions& options = {});

}  // namespace scaleprof::engine

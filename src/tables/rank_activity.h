// One rank's recorded steps beside the samples of its GPU, for the straggler-causes join
// (analysis/straggler_causes.h). Both in Unix nanoseconds of the rank's own host: steps.csv's
// start_unix_ns and gpu.csv's time_unix_ns are read from the same machine's wall clock, so the join
// needs no cross-host clock alignment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tables/epoch_time.h"

namespace scaleprof::tables {

struct StepSpan {
  int64_t epoch = 0;
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // start + the step's duration (measured on the monotonic clock)
};

struct ClockSample {
  int64_t time_ns = 0;
  double sm_clock_mhz = kNaN;  // NaN where the driver gave none
  double power_w = kNaN;
  std::optional<uint64_t> throttle_reasons;  // NVML's mask (core/clock_event_reasons.h)
};

// A profiled step in which the other ranks waited for one rank at the matched collectives
// (engine/run_trace_metrics.h): that rank's ProfilerStep on its trace's clock (Unix ns: Kineto's
// baseTimeNanoseconds is added to every time), and the wait it imposed (the others' waits at the step's
// matched calls it arrived at last). Under synchronous data parallelism every rank's step lasts as long
// (the all-reduce waits for the slowest), so the straggler shows here and not in its step time.
struct WaitedForStep {
  int64_t rank = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t wait_ns = 0;
};

struct RankActivity {
  int64_t rank = 0;
  std::string gpu_source;        // "rank-00001/gpu.csv gpu 0", "" without samples
  std::vector<StepSpan> steps;   // in file order
  std::vector<ClockSample> gpu;  // in time order
};

}  // namespace scaleprof::tables

// Nsight Systems GPU metrics in `trace summary` (analysis/gpu_metrics.h): per rank, GPU and metric
// the samples' mean, minimum and maximum, and the utilization track (the throughput percentages,
// "... [Throughput %]", in equal time bins over the capture). docs/nsys.md, "GPU metrics".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/gpu_metrics.h"
#include "report/trace_report.h"

namespace scaleprof::report {

struct RankGpuMetrics {
  int64_t rank = 0;
  std::vector<analysis::GpuMetricTrack> tracks;
};

// `gpu_metrics` and `gpu_utilization`; nothing when no rank has GPU metrics.
TraceReport gpu_metrics_tables(const std::vector<RankGpuMetrics>& ranks);

}  // namespace scaleprof::report

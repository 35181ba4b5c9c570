// Nsight Systems GPU metrics (`nsys profile --gpu-metrics-devices=all`): the samples nsys exports to
// GPU_METRICS (timestamp, typeId, metricId, value), named by TARGET_INFO_GPU_METRICS (typeId,
// metricId, metricName, and typeName where the export has it). Built from the documented export
// schema only: not yet checked against a real capture with GPU metrics (docs/nsys.md).
//
// Read apart from the events (read_nsys_sqlite), streamed: the rows go to a callback and are not
// kept, so a capture sampled at 10 kHz for an hour costs no memory here; the caller (the pipeline)
// gives them to analysis/gpu_metrics.h. The file is opened with core/sqlite_read.h (read-only, one
// deadline for every query together); both tables are read with one plain scan each (`NOT INDEXED`).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "trace/nsys_reader.h"

namespace scaleprof::trace {

struct NsysGpuMetric {
  int64_t type_id = 0;    // nsys' metric set; its low byte is the GPU (as nsys' own scripts read it)
  int64_t metric_id = 0;  // within the set
  std::string name;       // "SMs Active [Throughput %]"
  std::string type_name;  // the set's name ("" where the export has no typeName)
};

struct NsysGpuMetricsHeader {
  std::vector<NsysGpuMetric> metrics;  // distinct (typeId, metricId), at most kMaxNsysGpuMetrics
  int64_t first_ns = 0;                // first and last sample, ns since the capture started
  int64_t last_ns = 0;
  int64_t rows = 0;
};

inline constexpr size_t kMaxNsysGpuMetrics = 4096;

// Reads the GPU metrics of the export at `path`: nullopt when it has no GPU_METRICS table (a capture
// without --gpu-metrics-devices). `begin` gets the names and the time span before any row; `row` each
// sample with a numeric value (others are skipped and counted in *skipped). A table present without
// the columns read, or unreadable, fails with one line naming the file and table.
using NsysGpuMetricRow = std::function<void(int64_t type_id, int64_t metric_id, int64_t ts_ns, double value)>;
Result<std::optional<NsysGpuMetricsHeader>> read_nsys_gpu_metrics(
    const std::string& path, const std::function<void(const NsysGpuMetricsHeader&)>& begin, const NsysGpuMetricRow& row,
    int64_t* skipped, const NsysReadOptions& options = {});

}  // namespace scaleprof::trace

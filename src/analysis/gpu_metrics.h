// Nsight Systems GPU metrics of one rank as a utilization track per GPU (`trace summary` on an nsys
// export recorded with --gpu-metrics-devices; docs/nsys.md, "GPU metrics"). The samples arrive one
// by one (trace/nsys_gpu_metrics.h streams them) and are folded into, per (GPU, metric): count, mean,
// minimum and maximum, and a track of `bins` equal time bins over the capture's samples, each the
// mean of its samples. Memory is metrics x bins, whatever the number of samples.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "trace/nsys_gpu_metrics.h"

namespace scaleprof::analysis {

struct GpuMetricBin {
  int64_t start_ns = 0;  // since the capture started
  int64_t end_ns = 0;
  int64_t samples = 0;
  double mean = 0;
};

struct GpuMetricTrack {
  int64_t gpu = 0;  // the metric set's typeId & 0xFF
  std::string set;  // the set's name, "" when the export has none
  std::string metric;
  bool percent = false;  // a throughput percentage ("... [Throughput %]"): the utilization track
  int64_t samples = 0;
  double mean = 0;
  double min = 0;
  double max = 0;
  std::vector<GpuMetricBin> bins;
};

class GpuMetricsTracks {
 public:
  GpuMetricsTracks(const trace::NsysGpuMetricsHeader& header, int bins);
  void add(int64_t type_id, int64_t metric_id, int64_t ts_ns, double value);
  // The tracks with at least one sample, by GPU, then by (typeId, metricId). Samples of a
  // (typeId, metricId) the names table lacks are counted in unnamed().
  std::vector<GpuMetricTrack> finish() const;
  int64_t unnamed() const { return unnamed_; }

 private:
  struct Acc {
    size_t metric = 0;
    int64_t n = 0;
    double sum = 0, min = 0, max = 0;
    std::vector<int64_t> bin_n;
    std::vector<double> bin_sum;
  };
  const trace::NsysGpuMetricsHeader& header_;
  int bins_;
  std::map<std::pair<int64_t, int64_t>, Acc> acc_;
  int64_t unnamed_ = 0;
};

}  // namespace scaleprof::analysis

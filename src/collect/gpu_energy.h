// Energy and utilization of one GPU from its samples, by the same rule for the live monitor and for
// readers of gpu.csv: the driver's energy counter when every sample has it, else power integrated over
// the real sample timestamps with the trapezoid rule (itwinai multiplies each power sample by the
// nominal interval, which is wrong whenever sampling is late or irregular).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "collect/run_records.h"

namespace scaleprof::collect {

struct GpuDeviceSummary {
  int64_t device = 0;
  int64_t samples = 0;
  int64_t first_unix_ns = 0;
  int64_t last_unix_ns = 0;
  std::optional<double> mean_utilization_pct;  // over the samples that have it
  std::optional<double> mean_power_w;
  std::optional<int64_t> max_memory_used_bytes;
  std::optional<double> energy_j;
  bool energy_from_counter = false;  // true: driver counter; false: trapezoid over power
};

// Running summary of one device's samples in time order: constant memory, so the live monitor can
// sample every 10 ms for days.
class GpuAccumulator {
 public:
  void add(const GpuSample& s);
  GpuDeviceSummary summary() const;

 private:
  GpuDeviceSummary d_;
  double util_sum_ = 0, power_sum_ = 0;
  int64_t util_n_ = 0, power_n_ = 0;
  bool all_have_counter_ = true;
  std::optional<double> first_counter_j_, last_counter_j_;
  std::optional<std::pair<int64_t, double>> last_power_;
  double trapezoid_j_ = 0;
};

// Summaries per device, ordered by device, of samples in any order (they are sorted by time per
// device first).
std::vector<GpuDeviceSummary> summarize_gpu_samples(const std::vector<GpuSample>& samples);

// Trapezoid integral of (time_unix_ns, watts) points sorted by time, in joules.
double trapezoid_energy_j(const std::vector<std::pair<int64_t, double>>& points);

}  // namespace scaleprof::collect

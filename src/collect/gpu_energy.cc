#include "collect/gpu_energy.h"

#include <algorithm>
#include <map>

namespace scaleprof::collect {

double trapezoid_energy_j(const std::vector<std::pair<int64_t, double>>& points) {
  double joules = 0;
  for (size_t i = 1; i < points.size(); ++i) {
    const double dt_s = static_cast<double>(points[i].first - points[i - 1].first) * 1e-9;
    joules += 0.5 * (points[i].second + points[i - 1].second) * dt_s;
  }
  return joules;
}

void GpuAccumulator::add(const GpuSample& s) {
  if (d_.samples == 0) {
    d_.device = s.device;
    d_.first_unix_ns = s.time_unix_ns;
  }
  ++d_.samples;
  d_.last_unix_ns = s.time_unix_ns;
  if (s.utilization_pct) util_sum_ += *s.utilization_pct, ++util_n_;
  if (s.power_w) {
    power_sum_ += *s.power_w, ++power_n_;
    if (last_power_) {
      const double dt_s = static_cast<double>(s.time_unix_ns - last_power_->first) * 1e-9;
      trapezoid_j_ += 0.5 * (*s.power_w + last_power_->second) * dt_s;
    }
    last_power_ = std::make_pair(s.time_unix_ns, *s.power_w);
  }
  if (s.memory_used_bytes) {
    d_.max_memory_used_bytes = std::max(d_.max_memory_used_bytes.value_or(0), *s.memory_used_bytes);
  }
  if (s.energy_j) {
    if (!first_counter_j_) first_counter_j_ = s.energy_j;
    last_counter_j_ = s.energy_j;
  } else {
    all_have_counter_ = false;
  }
}

GpuDeviceSummary GpuAccumulator::summary() const {
  GpuDeviceSummary d = d_;
  if (util_n_ > 0) d.mean_utilization_pct = util_sum_ / static_cast<double>(util_n_);
  if (power_n_ > 0) d.mean_power_w = power_sum_ / static_cast<double>(power_n_);
  if (d.samples > 0 && all_have_counter_) {
    // The driver's own counter integrates at its internal rate: better than any sampling.
    d.energy_j = *last_counter_j_ - *first_counter_j_;
    d.energy_from_counter = true;
  } else if (power_n_ > 0) {
    d.energy_j = trapezoid_j_;  // one power sample spans no time: 0 J
  }
  return d;
}

std::vector<GpuDeviceSummary> summarize_gpu_samples(const std::vector<GpuSample>& samples) {
  std::map<int64_t, std::vector<const GpuSample*>> by_device;
  for (const GpuSample& s : samples) by_device[s.device].push_back(&s);
  std::vector<GpuDeviceSummary> out;
  out.reserve(by_device.size());
  for (auto& [device, list] : by_device) {
    std::stable_sort(list.begin(), list.end(),
                     [](const GpuSample* a, const GpuSample* b) { return a->time_unix_ns < b->time_unix_ns; });
    GpuAccumulator acc;
    for (const GpuSample* s : list) acc.add(*s);
    out.push_back(acc.summary());
  }
  return out;
}

}  // namespace scaleprof::collect

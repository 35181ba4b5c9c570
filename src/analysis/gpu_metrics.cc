#include "analysis/gpu_metrics.h"

#include <algorithm>

namespace scaleprof::analysis {

GpuMetricsTracks::GpuMetricsTracks(const trace::NsysGpuMetricsHeader& header, int bins)
    : header_(header), bins_(std::max(bins, 1)) {
  for (size_t i = 0; i < header.metrics.size(); ++i) {
    Acc a;
    a.metric = i;
    a.bin_n.assign(static_cast<size_t>(bins_), 0);
    a.bin_sum.assign(static_cast<size_t>(bins_), 0.0);
    acc_.emplace(std::make_pair(header.metrics[i].type_id, header.metrics[i].metric_id), std::move(a));
  }
}

void GpuMetricsTracks::add(int64_t type_id, int64_t metric_id, int64_t ts_ns, double value) {
  auto it = acc_.find({type_id, metric_id});
  if (it == acc_.end()) {
    ++unnamed_;
    return;
  }
  Acc& a = it->second;
  if (a.n == 0) {
    a.min = a.max = value;
  } else {
    a.min = std::min(a.min, value);
    a.max = std::max(a.max, value);
  }
  ++a.n;
  a.sum += value;
  // The bin of ts within [first, last] (the last sample in the last bin); computed in double, as the
  // span may be anything the file says.
  const double span = static_cast<double>(header_.last_ns) - static_cast<double>(header_.first_ns);
  double at = span > 0 ? (static_cast<double>(ts_ns) - static_cast<double>(header_.first_ns)) / span : 0;
  at = std::clamp(at, 0.0, 1.0);
  const auto bin = std::min(static_cast<size_t>(at * bins_), static_cast<size_t>(bins_ - 1));
  ++a.bin_n[bin];
  a.bin_sum[bin] += value;
}

std::vector<GpuMetricTrack> GpuMetricsTracks::finish() const {
  std::vector<GpuMetricTrack> out;
  for (const auto& [key, a] : acc_) {
    if (a.n == 0) continue;
    const trace::NsysGpuMetric& m = header_.metrics[a.metric];
    GpuMetricTrack t;
    t.gpu = key.first & 0xFF;
    t.set = m.type_name;
    t.metric = m.name;
    t.percent = m.name.find("%]") != std::string::npos;
    t.samples = a.n;
    t.mean = a.sum / static_cast<double>(a.n);
    t.min = a.min;
    t.max = a.max;
    // Bin edges in 128 bits: first and last are any int64 the file holds.
    const __int128 lo = header_.first_ns, width = static_cast<__int128>(header_.last_ns) - header_.first_ns;
    for (int b = 0; b < bins_; ++b) {
      GpuMetricBin bin;
      bin.start_ns = static_cast<int64_t>(lo + width * b / bins_);
      bin.end_ns = static_cast<int64_t>(lo + width * (b + 1) / bins_);
      bin.samples = a.bin_n[static_cast<size_t>(b)];
      bin.mean = bin.samples > 0 ? a.bin_sum[static_cast<size_t>(b)] / static_cast<double>(bin.samples) : 0;
      t.bins.push_back(bin);
    }
    out.push_back(std::move(t));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const GpuMetricTrack& x, const GpuMetricTrack& y) { return x.gpu < y.gpu; });
  return out;
}

}  // namespace scaleprof::analysis

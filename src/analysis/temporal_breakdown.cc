#include "analysis/temporal_breakdown.h"

#include <limits>
#include <vector>

#include "analysis/device_events.h"
#include "analysis/intervals.h"

namespace scaleprof::analysis {

namespace {

double pct(int64_t part, int64_t whole) {
  if (whole == 0) return std::numeric_limits<double>::quiet_NaN();
  return 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

double TemporalBreakdown::idle_pct() const {
  return pct(idle_ns, kernel_time_ns);
}
double TemporalBreakdown::compute_pct() const {
  return pct(compute_ns, kernel_time_ns);
}
double TemporalBreakdown::non_compute_pct() const {
  return pct(non_compute_ns, kernel_time_ns);
}

TemporalBreakdown temporal_breakdown(const trace::RankTrace& trace, std::span<const uint32_t> rows) {
  const DeviceEvents dev = select_device_events(trace, rows);
  const trace::EventTable& ev = trace.events;
  TemporalBreakdown out;
  out.device_events = static_cast<int64_t>(dev.size());
  if (dev.size() == 0) return out;

  // The busy time first, then the compute time: one array of intervals at a time (on traces of
  // short device events these arrays are a large part of the peak memory).
  {
    std::vector<Interval> all;
    all.reserve(dev.size());
    for (size_t k = 0; k < dev.size(); ++k) all.push_back({ev.ts[dev.rows[k]], ev.end(dev.rows[k])});
    const std::vector<Interval> busy = union_intervals(std::move(all));
    out.kernel_time_ns = busy.back().end - busy.front().start;
    out.idle_ns = out.kernel_time_ns - total_length(busy);
  }
  std::vector<Interval> compute;
  for (size_t k = 0; k < dev.size(); ++k) {
    if (dev.type[k] == KernelType::kComputation) compute.push_back({ev.ts[dev.rows[k]], ev.end(dev.rows[k])});
  }
  out.compute_ns = total_length(union_intervals(std::move(compute)));
  out.non_compute_ns = out.kernel_time_ns - out.compute_ns - out.idle_ns;
  return out;
}

}  // namespace scaleprof::analysis

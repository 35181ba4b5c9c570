#include "analysis/comm_comp_overlap.h"

#include <vector>

#include "analysis/device_events.h"
#include "analysis/intervals.h"

namespace scaleprof::analysis {

std::optional<double> CommCompOverlap::overlap_pct() const {
  if (!has_communication()) return std::nullopt;
  return 100.0 * static_cast<double>(overlap_ns) / static_cast<double>(communication_ns);
}

CommCompOverlap comm_comp_overlap(const trace::RankTrace& trace, std::span<const uint32_t> rows) {
  const DeviceEvents dev = select_device_events(trace, rows);
  const trace::EventTable& ev = trace.events;
  std::vector<Interval> comm, comp;
  for (size_t k = 0; k < dev.size(); ++k) {
    const uint32_t r = dev.rows[k];
    if (dev.type[k] == KernelType::kCommunication) comm.push_back({ev.ts[r], ev.end(r)});
    if (dev.type[k] == KernelType::kComputation) comp.push_back({ev.ts[r], ev.end(r)});
  }
  CommCompOverlap out;
  out.communication_events = static_cast<int64_t>(comm.size());
  out.computation_events = static_cast<int64_t>(comp.size());
  comm = union_intervals(std::move(comm));
  comp = union_intervals(std::move(comp));
  out.communication_ns = total_length(comm);
  out.computation_ns = total_length(comp);
  out.overlap_ns = intersection_length(comm, comp);
  return out;
}

}  // namespace scaleprof::analysis

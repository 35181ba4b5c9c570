#include "analysis/device_events.h"

#include <algorithm>

namespace scaleprof::analysis {

using trace::Category;

DeviceEvents select_device_events(const trace::RankTrace& trace, std::span<const uint32_t> rows) {
  const trace::EventTable& ev = trace.events;
  DeviceEvents out;
  for (uint32_t r : rows) {
    if (is_device_work(ev.cat[r])) out.rows.push_back(r);
  }
  std::stable_sort(out.rows.begin(), out.rows.end(), [&](uint32_t a, uint32_t b) { return ev.ts[a] < ev.ts[b]; });

  // Classify each distinct name once (KernelNameTypes); sync records and copies are decided by
  // category first.
  KernelNameTypes by_name(trace.strings);
  out.type.reserve(out.rows.size());
  for (uint32_t r : out.rows) {
    const Category c = ev.cat[r];
    const DeviceEventKind k = device_event_kind(c);
    if (k == DeviceEventKind::kSync || k == DeviceEventKind::kMemcpy || k == DeviceEventKind::kMemset) {
      out.type.push_back(classify_device_event(c, trace.name(r)));
      continue;
    }
    out.type.push_back(by_name.of(ev.name[r]));
  }
  return out;
}

}  // namespace scaleprof::analysis

#include "analysis/idle_time.h"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "analysis/device_events.h"

namespace scaleprof::analysis {

std::string_view idle_category_name(IdleCategory c) {
  switch (c) {
    case IdleCategory::kHostWait:
      return "host_wait";
    case IdleCategory::kKernelWait:
      return "kernel_wait";
    case IdleCategory::kOther:
      return "other";
  }
  return "other";
}

double StreamIdle::ratio(IdleCategory c) const {
  const int64_t total = total_idle_ns();
  if (total == 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(idle_ns[static_cast<int>(c)]) / static_cast<double>(total);
}

std::vector<StreamIdle> idle_time_breakdown(const trace::RankTrace& trace, std::span<const uint32_t> rows,
                                            const IdleOptions& options) {
  const trace::EventTable& ev = trace.events;

  // Launch start per correlation id: host events in the window that carry one (runtime/driver).
  std::unordered_map<int64_t, int64_t> launch_ts;
  std::map<std::pair<int64_t, int64_t>, std::vector<uint32_t>> streams;
  for (uint32_t r : rows) {
    const trace::Category c = ev.cat[r];
    if (is_stream_work(c)) {
      if (ev.stream[r] == trace::kNone) continue;  // not on a stream: nothing to be idle between
      streams[{trace.tracks.pid[ev.track[r]], ev.stream[r]}].push_back(r);
    } else if (!is_device_work(c) && ev.correlation[r] >= 0) {
      launch_ts.try_emplace(ev.correlation[r], ev.ts[r]);
    }
  }

  std::vector<StreamIdle> out;
  out.reserve(streams.size());
  for (auto& [key, events] : streams) {
    std::stable_sort(events.begin(), events.end(), [&](uint32_t a, uint32_t b) { return ev.ts[a] < ev.ts[b]; });
    StreamIdle s;
    s.device = key.first;
    s.stream = key.second;
    s.events = static_cast<int64_t>(events.size());
    std::vector<int64_t> gaps[kIdleCategoryCount];
    int64_t prev_end = ev.end(events[0]);
    for (size_t i = 1; i < events.size(); ++i) {
      const uint32_t r = events[i];
      if (ev.ts[r] < prev_end) {
        // Starts before earlier work on the stream ended: no idle time in between, so no gap.
        ++s.overlaps;
        prev_end = std::max(prev_end, ev.end(r));
        continue;
      }
      const int64_t gap = ev.ts[r] - prev_end;
      IdleCategory cat = IdleCategory::kOther;
      auto launch = ev.correlation[r] >= 0 ? launch_ts.find(ev.correlation[r]) : launch_ts.end();
      if (launch != launch_ts.end() && launch->second > prev_end) {
        cat = IdleCategory::kHostWait;
      } else if (gap < options.consecutive_kernel_delay_ns) {
        cat = IdleCategory::kKernelWait;
      }
      s.idle_ns[static_cast<int>(cat)] += gap;
      gaps[static_cast<int>(cat)].push_back(gap);
      prev_end = std::max(prev_end, ev.end(r));
    }
    for (int c = 0; c < kIdleCategoryCount; ++c) s.gaps[c] = describe(std::move(gaps[c]));
    out.push_back(s);
  }
  return out;
}

}  // namespace scaleprof::analysis

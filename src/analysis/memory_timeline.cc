#include "analysis/memory_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/checked_sum.h"

namespace scaleprof::analysis {

std::string memory_device_name(int32_t device_type, int32_t device_id) {
  // c10::DeviceType numbers (c10/core/DeviceType.h).
  std::string_view type;
  switch (device_type) {
    case 0:
      return "CPU";
    case 1:
      type = "CUDA";
      break;
    case 6:
      type = "HIP";
      break;
    case 9:
      type = "XLA";
      break;
    case 12:
      type = "XPU";
      break;
    case 13:
      type = "MPS";
      break;
    case 20:
      type = "PrivateUse1";
      break;
    case 21:
      type = "MTIA";
      break;
    default:
      return fmt::format("type {} id {}", device_type, device_id);
  }
  return fmt::format("{} {}", type, device_id);
}

namespace {

constexpr int32_t kCpuDeviceType = 0;  // c10::DeviceType::CPU

// Factory ops that only make the block: the op that called them says more.
bool is_allocating_factory(std::string_view name) {
  return name == "aten::empty" || name == "aten::empty_strided" || name == "aten::resize_" ||
         name == "aten::empty_like" || name == "aten::new_empty" || name == "aten::new_empty_strided";
}

// The holder name of each queried event row: its innermost cpu_op (else user annotation) on its
// track whose closed interval holds its time, by one sweep over the host ops of those tracks.
std::vector<std::string> owners_of(const trace::RankTrace& trace, const std::vector<uint32_t>& queries) {
  const trace::EventTable& ev = trace.events;
  std::vector<uint8_t> wanted_track(trace.tracks.size(), 0);
  for (uint32_t q : queries) wanted_track[ev.track[q]] = 1;
  std::vector<uint32_t> ops;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.phase[i] != trace::Phase::kComplete || !wanted_track[ev.track[i]]) continue;
    if (ev.cat[i] == trace::Category::kCpuOp || ev.cat[i] == trace::Category::kUserAnnotation) {
      ops.push_back(static_cast<uint32_t>(i));
    }
  }
  // By track, then start, the longer first (the parent before a child starting with it).
  std::sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) {
    if (ev.track[a] != ev.track[b]) return ev.track[a] < ev.track[b];
    if (ev.ts[a] != ev.ts[b]) return ev.ts[a] < ev.ts[b];
    if (ev.dur[a] != ev.dur[b]) return ev.dur[a] > ev.dur[b];
    return a < b;
  });
  std::vector<uint32_t> order(queries.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const uint32_t x = queries[a], y = queries[b];
    if (ev.track[x] != ev.track[y]) return ev.track[x] < ev.track[y];
    return ev.ts[x] < ev.ts[y];
  });
  std::vector<std::string> out(queries.size());
  std::vector<uint32_t> stack;
  size_t next_op = 0;
  uint32_t track = std::numeric_limits<uint32_t>::max();
  for (uint32_t qi : order) {
    const uint32_t q = queries[qi];
    const int64_t t = ev.ts[q];
    if (ev.track[q] != track) {
      track = ev.track[q];
      stack.clear();
      while (next_op < ops.size() && ev.track[ops[next_op]] < track) ++next_op;
    }
    // Ops starting at or before t enter (an op starting exactly at t holds it: closed interval).
    while (next_op < ops.size() && ev.track[ops[next_op]] == track && ev.ts[ops[next_op]] <= t) {
      const uint32_t op = ops[next_op++];
      while (!stack.empty() && ev.end(stack.back()) < ev.ts[op]) stack.pop_back();
      stack.push_back(op);
    }
    while (!stack.empty() && ev.end(stack.back()) < t) stack.pop_back();
    // The innermost cpu_op still open, else the innermost annotation.
    int cpu = -1, annotation = -1;
    for (int k = static_cast<int>(stack.size()) - 1; k >= 0 && cpu < 0; --k) {
      const uint32_t op = stack[static_cast<size_t>(k)];
      if (ev.ts[op] > t || ev.end(op) < t) continue;  // crossed, not nested: holds nothing here
      if (ev.cat[op] == trace::Category::kCpuOp) {
        cpu = k;
      } else if (annotation < 0) {
        annotation = k;
      }
    }
    if (cpu >= 0) {
      std::string_view name = trace.name(stack[static_cast<size_t>(cpu)]);
      int parent = -1;
      for (int k = cpu - 1; k >= 0 && is_allocating_factory(name); --k) {
        const uint32_t op = stack[static_cast<size_t>(k)];
        if (ev.cat[op] == trace::Category::kCpuOp && ev.ts[op] <= t && ev.end(op) >= t) {
          parent = k;
          break;
        }
      }
      out[qi] = parent >= 0 ? fmt::format("{} ({})", trace.name(stack[static_cast<size_t>(parent)]), name)
                            : std::string(name);
    } else if (annotation >= 0) {
      out[qi] = std::string(trace.name(stack[static_cast<size_t>(annotation)]));
    } else {
      out[qi] = "(no operator)";
    }
  }
  return out;
}

// The rows of `rows` (memory table rows of one device, in time order) at most 3 per bucket.
std::vector<MemoryPoint> thin(const std::vector<MemoryPoint>& all, int points) {
  if (points <= 0 || all.empty()) return {};
  if (all.size() <= static_cast<size_t>(points) * 3) return all;
  const int64_t t0 = all.front().ts_ns;
  const int64_t span = std::max<int64_t>(all.back().ts_ns - t0, 1);
  std::vector<uint8_t> keep(all.size(), 0);
  keep.front() = keep.back() = 1;
  // The last event's time would open a bucket of its own: it belongs to the last one.
  auto bucket_of = [&](int64_t ts) {
    return std::min<int64_t>(static_cast<int64_t>((static_cast<__int128>(ts - t0) * points) / span), points - 1);
  };
  size_t i = 0;
  while (i < all.size()) {
    const int64_t bucket = bucket_of(all[i].ts_ns);
    size_t lo = i, hi = i, res = i;
    size_t j = i;
    for (; j < all.size() && bucket_of(all[j].ts_ns) == bucket; ++j) {
      if (all[j].allocated < all[lo].allocated) lo = j;
      if (all[j].allocated > all[hi].allocated) hi = j;
      if (all[j].reserved > all[res].reserved) res = j;
    }
    keep[lo] = keep[hi] = keep[res] = 1;
    i = j;
  }
  std::vector<MemoryPoint> out;
  for (size_t k = 0; k < all.size(); ++k) {
    if (keep[k]) out.push_back(all[k]);
  }
  return out;
}

struct Live {
  uint32_t row;  // memory table row of the allocation
  int64_t bytes;
};

DeviceMemory one_device(const trace::RankTrace& trace, const std::vector<uint32_t>& rows, const ProfilerSteps& steps,
                        const MemoryOptions& options) {
  const trace::MemoryTable& m = trace.memory;
  const trace::EventTable& ev = trace.events;
  DeviceMemory d;
  d.device_type = m.device_type[rows.front()];
  d.device_id = m.device_id[rows.front()];
  d.events = static_cast<int64_t>(rows.size());
  d.first_ts_ns = ev.ts[m.event[rows.front()]];
  d.last_ts_ns = ev.ts[m.event[rows.back()]];
  // Totals from the trace where it has them, else the running sum of Bytes from 0.
  const bool has_totals = m.total_allocated[rows.front()] >= 0;
  // What was allocated before profiling is known only from a device allocator's running total: the
  // CPU allocator counts only what it allocates while the profiler records memory (c10's
  // ProfiledCPUMemoryReporter), so a CPU trace's totals start near 0 whatever was live before
  // (parameters, optimizer state): unknown (-1), never 0. Nor is it known without totals.
  // `base` is where the trace's own curve starts, whatever it means. Differences of the file's byte
  // counts are checked (core/checked_sum.h): one past int64 is an unknown figure, shown null, never a
  // wrapped number (issue 30: -9.2e18 B before profiling).
  const int64_t base = has_totals ? difference_or_unknown(m.total_allocated[rows.front()], m.bytes[rows.front()]) : 0;
  d.before_profiling = has_totals && d.device_type != kCpuDeviceType ? base : -1;
  std::vector<MemoryPoint> points(rows.size());
  int64_t running = base;
  size_t peak = 0;
  for (size_t k = 0; k < rows.size(); ++k) {
    const uint32_t r = rows[k];
    add_or_unknown(&running, m.bytes[r]);
    const int64_t allocated = has_totals && m.total_allocated[r] >= 0 ? m.total_allocated[r] : running;
    points[k] = {ev.ts[m.event[r]], allocated, m.total_reserved[r]};
    if (m.bytes[r] > 0) {
      ++d.allocations;
      add_or_unknown(&d.allocated_bytes, m.bytes[r]);
    } else if (m.bytes[r] < 0) {
      ++d.frees;
    }
    if (k == 0 || allocated > points[peak].allocated) peak = k;
    if (points[k].reserved > d.peak_reserved) {
      d.peak_reserved = points[k].reserved;
      d.peak_reserved_ts_ns = points[k].ts_ns;
    }
  }
  d.peak_allocated = points[peak].allocated;
  d.peak_allocated_ts_ns = points[peak].ts_ns;
  d.min_allocated = std::min_element(points.begin(), points.end(), [](const auto& a, const auto& b) {
                      return a.allocated < b.allocated;
                    })->allocated;
  d.final_allocated = points.back().allocated;

  // Steps: the step function's peak inside each window, the value carried in counting at the start.
  size_t k = 0;
  int64_t carried = base;
  for (const ProfilerStepWindow& w : steps.steps) {
    // Windows are by start time and may overlap only in malformed traces: search from the start.
    k = static_cast<size_t>(std::lower_bound(points.begin(), points.end(), w.start_ns,
                                             [](const MemoryPoint& p, int64_t t) { return p.ts_ns < t; }) -
                            points.begin());
    carried = k == 0 ? base : points[k - 1].allocated;
    MemoryStepPeak s;
    s.step = w.step;
    s.start_ns = w.start_ns;
    s.end_ns = w.end_ns;
    s.start_allocated = carried;
    s.peak_allocated = carried;
    s.peak_ts_ns = w.start_ns;
    s.peak_reserved = k == 0 ? -1 : points[k - 1].reserved;
    for (; k < points.size() && points[k].ts_ns < w.end_ns; ++k) {
      ++s.events;
      if (points[k].allocated > s.peak_allocated) {
        s.peak_allocated = points[k].allocated;
        s.peak_ts_ns = points[k].ts_ns;
      }
      s.peak_reserved = std::max(s.peak_reserved, points[k].reserved);
    }
    s.end_allocated = k == 0 ? base : points[k - 1].allocated;
    d.steps.push_back(s);
  }

  // Holders at the peak: the allocations made up to it and not freed by then, paired by Addr.
  d.holders_known =
      options.holders && std::all_of(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(peak) + 1,
                                     [&](uint32_t r) { return m.addr[r] != trace::kNone || m.bytes[r] == 0; });
  if (d.holders_known) {
    std::unordered_map<int64_t, Live> live;
    for (size_t j = 0; j <= peak; ++j) {
      const uint32_t r = rows[j];
      if (m.bytes[r] > 0) {
        live[m.addr[r]] = {r, m.bytes[r]};
      } else if (m.bytes[r] < 0) {
        live.erase(m.addr[r]);  // absent: a block made before profiling, which the last row covers
      }
    }
    std::vector<uint32_t> queries;
    std::vector<int64_t> bytes;
    queries.reserve(live.size());
    for (const auto& [addr, l] : live) {
      queries.push_back(m.event[l.row]);
      bytes.push_back(l.bytes);
    }
    const std::vector<std::string> owners = owners_of(trace, queries);
    std::unordered_map<std::string, size_t> index;
    int64_t held = 0;
    for (size_t q = 0; q < owners.size(); ++q) {
      auto [it, added] = index.try_emplace(owners[q], d.holders.size());
      if (added) d.holders.push_back({owners[q], 0, 0});
      add_or_unknown(&d.holders[it->second].bytes, bytes[q]);
      ++d.holders[it->second].allocations;
      add_or_unknown(&held, bytes[q]);
    }
    // What the peak holds beyond the blocks seen allocated: those made before profiling (less the
    // ones freed since), whatever the pairing missed.
    if (d.peak_allocated != held) {
      d.holders.push_back({"(allocated before profiling)", difference_or_unknown(d.peak_allocated, held), 0});
    }
    // Largest first, an unknown (past int64) the largest.
    auto key = [](const MemoryHolder& h) { return is_unknown_figure(h.bytes) ? INT64_MAX : h.bytes; };
    std::sort(d.holders.begin(), d.holders.end(), [&](const MemoryHolder& a, const MemoryHolder& b) {
      return key(a) != key(b) ? key(a) > key(b) : a.name < b.name;
    });
    if (options.top > 0 && d.holders.size() > static_cast<size_t>(options.top)) {
      MemoryHolder others{"(others)", 0, 0};
      for (size_t h = static_cast<size_t>(options.top); h < d.holders.size(); ++h) {
        add_or_unknown(&others.bytes, d.holders[h].bytes);
        others.allocations += d.holders[h].allocations;
      }
      d.holders.resize(static_cast<size_t>(options.top));
      d.holders.push_back(std::move(others));
    }
  }
  d.timeline = thin(points, options.points);
  return d;
}

}  // namespace

RankMemory memory_timeline(const trace::RankTrace& trace, const ProfilerSteps& steps, const MemoryOptions& options) {
  RankMemory out;
  const trace::MemoryTable& m = trace.memory;
  const trace::EventTable& ev = trace.events;
  std::vector<uint32_t> rows;
  rows.reserve(m.size());
  for (size_t r = 0; r < m.size(); ++r) {
    if (trace.name(m.event[r]) == "[OutOfMemory]") {
      ++out.out_of_memory_events;
    } else {
      rows.push_back(static_cast<uint32_t>(r));
    }
  }
  // By device, then time; file order among equal times (the order torch recorded them, which the
  // running totals follow).
  std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
    if (m.device_type[a] != m.device_type[b]) return m.device_type[a] < m.device_type[b];
    if (m.device_id[a] != m.device_id[b]) return m.device_id[a] < m.device_id[b];
    return ev.ts[m.event[a]] < ev.ts[m.event[b]];
  });
  std::vector<uint32_t> device;
  for (size_t i = 0; i < rows.size(); ++i) {
    device.push_back(rows[i]);
    const bool last = i + 1 == rows.size() || m.device_type[rows[i + 1]] != m.device_type[rows[i]] ||
                      m.device_id[rows[i + 1]] != m.device_id[rows[i]];
    if (last) {
      out.devices.push_back(one_device(trace, device, steps, options));
      device.clear();
    }
  }
  return out;
}

}  // namespace scaleprof::analysis

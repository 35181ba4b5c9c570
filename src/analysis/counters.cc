#include "analysis/counters.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

#include "analysis/device_events.h"
#include "analysis/kernel_classify.h"
#include "analysis/launch_stats.h"
#include "core/checked_sum.h"

namespace scaleprof::analysis {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One change of a counter: where it happens, by how much, and the file order that breaks ties.
struct Change {
  int64_t key = 0;  // stream, or direction index
  int64_t ts = 0;
  double delta = 0;
  uint32_t order = 0;    // file position of the event that makes the change
  int64_t call_ns = -1;  // queue: the launch call's duration at an increment
  uint32_t device_row = 0;
};

// Decrements before increments at one timestamp (a slot freed at t is free for a launch at t), then
// file order: the same series whatever the input order.
bool change_before(const Change& a, const Change& b) {
  if (a.key != b.key) return a.key < b.key;
  if (a.ts != b.ts) return a.ts < b.ts;
  if ((a.delta < 0) != (b.delta < 0)) return a.delta < 0;
  return a.order < b.order;
}

// The quantile of ascending values with numpy's linear interpolation (what pandas' describe uses).
double quantile_of(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return kNaN;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

PointStats describe_values(std::vector<double> values) {
  PointStats s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty()) {
    s.mean = s.std = s.min = s.p25 = s.p50 = s.p75 = s.max = kNaN;
    return s;
  }
  std::sort(values.begin(), values.end());
  // Two passes (mean, then squared deviations), as numpy does, so the figures match pandas'.
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  double m2 = 0;
  for (double v : values) m2 += (v - s.mean) * (v - s.mean);
  s.std = values.size() > 1 ? std::sqrt(m2 / static_cast<double>(values.size() - 1)) : kNaN;
  s.min = values.front();
  s.max = values.back();
  s.p25 = quantile_of(values, 0.25);
  s.p50 = quantile_of(values, 0.50);
  s.p75 = quantile_of(values, 0.75);
  return s;
}

// Each point's value held until the next point; `counted(value)` picks the stretches weighed.
template <class Counted>
TimeWeightedStats weigh(const std::vector<CounterPoint>& points, Counted counted) {
  std::vector<std::pair<double, int64_t>> held;  // value, ns
  held.reserve(points.size());
  TimeWeightedStats s;
  double weighted_sum = 0;
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    const int64_t ns = points[i + 1].ts - points[i].ts;
    if (ns <= 0 || !counted(points[i].value)) continue;
    held.emplace_back(points[i].value, ns);
    s.time_ns += ns;
    weighted_sum += points[i].value * static_cast<double>(ns);
  }
  if (s.time_ns == 0) {
    s.mean = s.p50 = s.p95 = s.max = kNaN;
    return s;
  }
  s.mean = weighted_sum / static_cast<double>(s.time_ns);
  std::sort(held.begin(), held.end());
  s.max = held.back().first;
  // The smallest value held for at least q of the time (a weighted quantile; no interpolation).
  auto quantile = [&](double q) {
    const double target = q * static_cast<double>(s.time_ns);
    int64_t cumulative = 0;
    for (const auto& [value, ns] : held) {
      cumulative += ns;
      if (static_cast<double>(cumulative) >= target) return value;
    }
    return held.back().first;
  };
  s.p50 = quantile(0.50);
  s.p95 = quantile(0.95);
  return s;
}

// The row in device_args of event `row`, or -1 (its rows are appended in file order, so sorted).
int64_t device_args_row(const trace::DeviceArgsTable& args, uint32_t row) {
  auto it = std::lower_bound(args.event.begin(), args.event.end(), row);
  return it != args.event.end() && *it == row ? it - args.event.begin() : -1;
}

void queue_series(const trace::RankTrace& trace, std::span<const uint32_t> rows, RankCounterSeries* out) {
  const trace::EventTable& ev = trace.events;
  std::vector<int8_t> launch_name(trace.strings.size(), -1);  // decided once per distinct name
  std::unordered_map<int64_t, uint32_t> launch_by_correlation;
  for (uint32_t r : rows) {
    if (ev.correlation[r] < 0 || !trace::is_runtime_category(ev.cat[r])) continue;
    int8_t& is_launch = launch_name[ev.name[r]];
    if (is_launch < 0) is_launch = is_launch_api_name(trace.name(r)) ? 1 : 0;
    if (is_launch == 1) launch_by_correlation.try_emplace(ev.correlation[r], r);
  }
  std::vector<Change> changes;
  for (uint32_t d : rows) {
    if (ev.correlation[d] < 0 || ev.stream[d] < 0 || !is_stream_work(ev.cat[d])) continue;
    auto it = launch_by_correlation.find(ev.correlation[d]);
    if (it == launch_by_correlation.end()) continue;
    const uint32_t h = it->second;
    changes.push_back({ev.stream[d], ev.ts[h], 1, ev.file_index[h], ev.dur[h], d});
    changes.push_back({ev.stream[d], ev.ts[d], -1, ev.file_index[d], -1, d});
  }
  std::sort(changes.begin(), changes.end(), change_before);
  for (size_t i = 0; i < changes.size();) {
    CounterSeries s;
    s.key = changes[i].key;
    s.pid = trace.tracks.pid[ev.track[changes[i].device_row]];
    s.tid = trace.tracks.tid[ev.track[changes[i].device_row]];
    int64_t queue = 0;
    for (; i < changes.size() && changes[i].key == s.key; ++i) {
      queue += changes[i].delta > 0 ? 1 : -1;
      s.points.push_back({changes[i].ts, static_cast<double>(queue)});
      s.call_ns.push_back(changes[i].call_ns);
    }
    out->queues.push_back(std::move(s));
  }
}

void bandwidth_series(const trace::RankTrace& trace, std::span<const uint32_t> rows, RankCounterSeries* out) {
  const trace::EventTable& ev = trace.events;
  KernelNameTypes types(trace.strings);
  std::map<std::string, int64_t> direction_of;  // name -> index, in name order at the end
  std::vector<std::string> names;
  std::vector<int64_t> pid_of;  // per direction: the pid of its first copy
  std::vector<int64_t> copies, bytes;
  std::vector<Change> changes;
  for (uint32_t r : rows) {
    const DeviceEventKind kind = device_event_kind(ev.cat[r]);
    if (kind == DeviceEventKind::kNotDevice || kind == DeviceEventKind::kSync || ev.stream[r] < 0) continue;
    const bool memory = kind == DeviceEventKind::kMemcpy || kind == DeviceEventKind::kMemset ||
                        types.of(ev.name[r]) == KernelType::kMemory;
    if (!memory) continue;
    const int64_t a = device_args_row(trace.device_args, r);
    double gbps = a >= 0 ? trace.device_args.bandwidth_gbps[a] : kNaN;
    // Kineto writes bytes / duration in ns (GB/s); older traces give only the bytes.
    if (!std::isfinite(gbps) && a >= 0 && trace.device_args.bytes[a] >= 0 && ev.dur[r] > 0) {
      gbps = static_cast<double>(trace.device_args.bytes[a]) / static_cast<double>(ev.dur[r]);
    }
    if (!std::isfinite(gbps)) continue;
    const std::string name = memory_direction(trace.name(r));
    auto [it, added] = direction_of.try_emplace(name, static_cast<int64_t>(names.size()));
    if (added) {
      names.push_back(name);
      pid_of.push_back(trace.tracks.pid[ev.track[r]]);
      copies.push_back(0);
      bytes.push_back(0);
    }
    ++copies[static_cast<size_t>(it->second)];
    // Checked (core/checked_sum.h): a sum past int64 is unknown, shown null, never wrapped.
    if (trace.device_args.bytes[a] > 0)
      add_or_unknown(&bytes[static_cast<size_t>(it->second)], trace.device_args.bytes[a]);
    // HTA's issue 20: a copy of duration 0 lasts 1 us, so its end never precedes its start.
    const int64_t dur = ev.dur[r] == 0 ? 1000 : ev.dur[r];
    changes.push_back({it->second, ev.ts[r], gbps, ev.file_index[r], -1, r});
    changes.push_back({it->second, ev.ts[r] + dur, -gbps, ev.file_index[r], -1, r});
  }
  std::sort(changes.begin(), changes.end(), change_before);
  std::vector<CounterSeries> by_index(names.size());
  for (size_t i = 0; i < changes.size();) {
    CounterSeries& s = by_index[static_cast<size_t>(changes[i].key)];
    s.pid = pid_of[static_cast<size_t>(changes[i].key)];
    const int64_t key = changes[i].key;
    int64_t active = 0;
    double sum = 0;
    for (; i < changes.size() && changes[i].key == key; ++i) {
      active += changes[i].delta >= 0 ? 1 : -1;
      sum += changes[i].delta;
      if (active == 0) sum = 0;  // exactly 0 when nothing is active: no float residue
      s.points.push_back({changes[i].ts, sum});
    }
  }
  // Directions in name order (HTA's groupby order).
  for (const auto& [name, index] : direction_of) {
    out->names.push_back(name);
    out->copies.push_back(copies[static_cast<size_t>(index)]);
    out->bytes.push_back(bytes[static_cast<size_t>(index)]);
    CounterSeries s = std::move(by_index[static_cast<size_t>(index)]);
    s.key = static_cast<int64_t>(out->bandwidth.size());
    out->bandwidth.push_back(std::move(s));
  }
}

}  // namespace

std::string memory_direction(std::string_view name) {
  if (name.substr(0, 6) == "Memset") return "Memset";
  if (name.substr(0, 6) != "Memcpy") return "Memcpy Unknown";
  return std::string(name.substr(0, 11));
}

RankCounterSeries counter_series(const trace::RankTrace& trace, std::span<const uint32_t> rows) {
  RankCounterSeries out;
  queue_series(trace, rows, &out);
  bandwidth_series(trace, rows, &out);
  if (!rows.empty()) {
    int64_t first = std::numeric_limits<int64_t>::max();
    int64_t last = std::numeric_limits<int64_t>::min();
    for (uint32_t r : rows) {
      first = std::min(first, trace.events.ts[r]);
      last = std::max(last, trace.events.ts[r]);
    }
    out.duration_ns = last - first;
  }
  return out;
}

std::string_view queue_limit_source_name(QueueLimitSource s) {
  switch (s) {
    case QueueLimitSource::kTrace:
      return "trace";
    case QueueLimitSource::kOption:
      return "option";
    case QueueLimitSource::kHta:
      break;
  }
  return "hta";
}

std::optional<int64_t> find_queue_limit(const RankCounterSeries& series) {
  std::optional<int64_t> limit;
  // The rank's deepest queue: a full queue is near it (every stream has the same limit), so a slow
  // launch into a queue at less than half of it, or below kMinQueueLimit, blocked for another reason
  // (a communication kernel's launch waiting for its peers, a module load).
  double deepest = 0;
  for (const CounterSeries& s : series.queues) {
    for (const CounterPoint& p : s.points) deepest = std::max(deepest, p.value);
  }
  for (const CounterSeries& s : series.queues) {
    for (size_t i = 0; i < s.points.size(); ++i) {
      // call_ns >= 0 marks a launch; its point is the queue length with it counted.
      if (s.call_ns[i] < kBlockedLaunchNs || s.points[i].value < deepest / 2 ||
          s.points[i].value < static_cast<double>(kMinQueueLimit)) {
        continue;
      }
      const auto level = static_cast<int64_t>(s.points[i].value);
      if (!limit || level < *limit) limit = level;
    }
  }
  return limit;
}

RankCounters summarize_counters(const RankCounterSeries& series, int64_t max_queue_length) {
  RankCounters out;
  if (max_queue_length > 0) {
    out.max_queue_length = max_queue_length;
    out.limit_source = QueueLimitSource::kOption;
  } else if (const std::optional<int64_t> found = find_queue_limit(series)) {
    out.max_queue_length = *found;
    out.limit_source = QueueLimitSource::kTrace;
  }
  out.trace_duration_ns = series.duration_ns;
  for (const CounterSeries& s : series.queues) {
    StreamQueue q;
    q.stream = s.key;
    q.pid = s.pid;
    q.tid = s.tid;
    std::vector<double> values;
    values.reserve(s.points.size());
    for (const CounterPoint& p : s.points) values.push_back(p.value);
    q.points = describe_values(std::move(values));
    q.weighted = weigh(s.points, [](double) { return true; });
    for (size_t i = 0; i < s.points.size(); ++i) {
      const int64_t held = i + 1 < s.points.size() ? s.points[i + 1].ts - s.points[i].ts : 0;
      const double v = s.points[i].value;
      if (s.call_ns[i] >= 0) ++q.launches;
      if (v <= 0) q.empty_ns += held;
      if (v >= static_cast<double>(out.max_queue_length)) {
        q.full_ns += held;
        if (s.call_ns[i] >= 0) {
          ++q.full_launches;
          q.full_launch_call_ns += s.call_ns[i];
        }
      }
    }
    out.queues.push_back(q);
  }
  for (size_t k = 0; k < series.bandwidth.size(); ++k) {
    const CounterSeries& s = series.bandwidth[k];
    DirectionBandwidth b;
    b.name = series.names[k];
    std::vector<double> positive;
    for (const CounterPoint& p : s.points) {
      if (p.value > 0) positive.push_back(p.value);
    }
    b.points = describe_values(std::move(positive));
    b.weighted = weigh(s.points, [](double v) { return v > 0; });
    b.copies = series.copies[k];
    b.bytes = series.bytes[k];
    out.bandwidth.push_back(std::move(b));
  }
  return out;
}

RankCounters compute_counters(const trace::RankTrace& trace, std::span<const uint32_t> rows, int64_t max_queue_length) {
  return summarize_counters(counter_series(trace, rows), max_queue_length);
}

}  // namespace scaleprof::analysis

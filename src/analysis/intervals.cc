#include "analysis/intervals.h"

#include <algorithm>

namespace scaleprof::analysis {

std::vector<Interval> union_intervals(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  // Merged in place (a group never outgrows the inputs it absorbed): a second array of every
  // device event's interval was a large part of the peak memory on traces of short events.
  // intervals[merged - 1].end is the running maximum end of the current group (inputs are sorted
  // by start), so a long interval keeps absorbing later short ones it contains.
  size_t merged = 0;
  for (const Interval& iv : intervals) {
    if (merged == 0 || iv.start > intervals[merged - 1].end) {
      intervals[merged++] = iv;
    } else {
      intervals[merged - 1].end = std::max(intervals[merged - 1].end, iv.end);
    }
  }
  intervals.resize(merged);
  return intervals;
}

int64_t total_length(std::span<const Interval> intervals) {
  int64_t total = 0;
  for (const Interval& iv : intervals) total += iv.length();
  return total;
}

std::vector<Interval> intersect(std::span<const Interval> a, std::span<const Interval> b) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].start, b[j].start);
    int64_t hi = std::min(a[i].end, b[j].end);
    if (lo < hi) out.push_back({lo, hi});
    // Advance whichever ends first: it cannot meet anything later in the other set.
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

int64_t intersection_length(std::span<const Interval> a, std::span<const Interval> b) {
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].start, b[j].start);
    int64_t hi = std::min(a[i].end, b[j].end);
    if (lo < hi) total += hi - lo;
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

std::vector<Interval> clip_intervals(std::span<const Interval> merged, int64_t start, int64_t end) {
  std::vector<Interval> out;
  // The first interval ending after `start`: merged sets are sorted by end as well as by start.
  auto it =
      std::upper_bound(merged.begin(), merged.end(), start, [](int64_t t, const Interval& iv) { return t < iv.end; });
  for (; it != merged.end() && it->start < end; ++it) {
    const int64_t lo = std::max(it->start, start);
    const int64_t hi = std::min(it->end, end);
    if (lo < hi) out.push_back({lo, hi});
  }
  return out;
}

std::vector<Interval> subtract_intervals(std::span<const Interval> a, std::span<const Interval> b) {
  std::vector<Interval> out;
  size_t j = 0;
  for (const Interval& iv : a) {
    int64_t at = iv.start;
    while (j < b.size() && b[j].end <= at) ++j;
    for (size_t k = j; k < b.size() && b[k].start < iv.end; ++k) {
      if (b[k].start > at) out.push_back({at, b[k].start});
      at = std::max(at, b[k].end);
    }
    if (at < iv.end) out.push_back({at, iv.end});
  }
  return out;
}

bool covers(std::span<const Interval> merged, int64_t t) {
  auto it = std::upper_bound(merged.begin(), merged.end(), t, [](int64_t x, const Interval& iv) { return x < iv.end; });
  return it != merged.end() && it->start <= t;
}

void sweep_coverage(std::span<const std::vector<Interval>> sets,
                    const std::function<void(uint32_t mask, int64_t start, int64_t end)>& segment) {
  struct Edge {
    int64_t time;
    uint32_t set;
    int32_t delta;
  };
  std::vector<Edge> edges;
  size_t n = 0;
  for (const auto& s : sets) n += s.size();
  edges.reserve(2 * n);
  const size_t count = std::min<size_t>(sets.size(), 32);
  for (size_t k = 0; k < count; ++k) {
    for (const Interval& iv : sets[k]) {
      edges.push_back({iv.start, static_cast<uint32_t>(k), +1});
      edges.push_back({iv.end, static_cast<uint32_t>(k), -1});
    }
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.time < b.time; });
  // Per-set depth rather than a single bitmask cumsum: all edges at one instant are applied before
  // the next segment starts, so ties between one set ending and another starting never produce a
  // zero-length or spurious label (HTA's unstable sort can).
  int32_t depth[32] = {};
  size_t e = 0;
  while (e < edges.size()) {
    const int64_t t = edges[e].time;
    while (e < edges.size() && edges[e].time == t) {
      depth[edges[e].set] += edges[e].delta;
      ++e;
    }
    if (e == edges.size()) break;
    uint32_t mask = 0;
    for (size_t k = 0; k < count; ++k) {
      if (depth[k] > 0) mask |= 1u << k;
    }
    if (mask != 0) segment(mask, t, edges[e].time);
  }
}

}  // namespace scaleprof::analysis

// Interval sets on one time axis: union, length, intersection and a coverage sweep.
//
// Intervals are half-open [start, end) in int64 nanoseconds. A "merged" set is sorted by start with
// no two intervals overlapping or touching; union_intervals() produces one. Touching intervals
// ([0,5) and [5,9)) merge, as in HTA's merge_kernel_intervals, so a run of back-to-back kernels
// counts as one busy interval and idle time between them is exactly zero.
//
// An interval with end < start (possible only in traces rounded to microseconds the way HTA does,
// never in the reader's exact nanoseconds) is kept as given: it merges into whatever it starts in,
// and alone it contributes its negative length, which is what HTA's group-by computes.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace scaleprof::analysis {

struct Interval {
  int64_t start = 0;
  int64_t end = 0;
  int64_t length() const { return end - start; }
  bool operator==(const Interval&) const = default;
};

// Sorts `intervals` by start and merges every interval that starts at or before the running
// maximum end of the ones before it.
std::vector<Interval> union_intervals(std::vector<Interval> intervals);

// Sum of end - start over a set (the busy time of a merged set).
int64_t total_length(std::span<const Interval> intervals);

// The parts covered by both merged sets, as a merged set.
std::vector<Interval> intersect(std::span<const Interval> a, std::span<const Interval> b);

// Length of intersect(a, b) without building it.
int64_t intersection_length(std::span<const Interval> a, std::span<const Interval> b);

// The parts of a merged set inside [start, end), as a merged set.
std::vector<Interval> clip_intervals(std::span<const Interval> merged, int64_t start, int64_t end);

// a − b for merged sets: the parts of `a` no interval of `b` covers, as a merged set.
std::vector<Interval> subtract_intervals(std::span<const Interval> a, std::span<const Interval> b);

// Whether a merged set covers instant t (some interval has start <= t < end).
bool covers(std::span<const Interval> merged, int64_t t);

// Walks the time axis across up to 32 merged sets and reports every maximal segment covered by at
// least one set, with bit i of `mask` set when set i covers it. Segments come in time order and
// have positive length; gaps covered by no set are not reported.
void sweep_coverage(std::span<const std::vector<Interval>> sets,
                    const std::function<void(uint32_t mask, int64_t start, int64_t end)>& segment);

}  // namespace scaleprof::analysis

// Idle time per stream, split by its likely cause.
//
// For each (device, stream) of a rank, stream work (kernels, copies, sets; not sync records) in
// the analysis window is sorted by start. The gap before each event is its start minus the latest
// end of the events before it on that stream. The gap is
//   host_wait   when the event's launch (the host event with the same correlation id) started
//               after that end: the host had not even asked for the work yet;
//   kernel_wait otherwise, when the gap is shorter than consecutive_kernel_delay (default 30 us):
//               the normal cost of starting back-to-back work;
//   other       otherwise (waiting on events, other streams, or anything unexplained).
// The first event on a stream has no gap, and neither has an event that starts before the work
// before it ended (an overlap: the stream was never idle in between); overlaps are counted
// separately and take no part in the gap statistics. A gap of exactly 0 (back-to-back work) is a
// gap. This is HTA's get_idle_time_breakdown, with these deliberate differences
// (docs/differences-from-hta.md): times are exact nanoseconds and the threshold is in nanoseconds;
// streams are keyed by (device, stream), not stream alone; the previous end is the running maximum
// end; an overlap is not a gap (HTA subtracts the previous row's end and keeps the negative
// "gap", which drags its kernel-wait statistics towards and below 0).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/distribution.h"
#include "trace/event_table.h"

namespace scaleprof::analysis {

enum class IdleCategory : uint8_t { kHostWait, kKernelWait, kOther };
inline constexpr int kIdleCategoryCount = 3;

// "host_wait", "kernel_wait", "other".
std::string_view idle_category_name(IdleCategory c);

struct IdleOptions {
  int64_t consecutive_kernel_delay_ns = 30'000;
};

struct StreamIdle {
  int64_t device = trace::kNone;  // pid of the stream's track (Kineto writes the device index there)
  int64_t stream = trace::kNone;
  int64_t events = 0;    // stream work on it
  int64_t overlaps = 0;  // events that started before the previous work on the stream ended
  int64_t idle_ns[kIdleCategoryCount] = {};
  Distribution gaps[kIdleCategoryCount];  // ns; the true gaps (>= 0) assigned to each category

  int64_t total_idle_ns() const { return idle_ns[0] + idle_ns[1] + idle_ns[2]; }
  // Share of the stream's idle time; NaN when the stream was never idle.
  double ratio(IdleCategory c) const;
};

// One entry per stream, ordered by (device, stream).
std::vector<StreamIdle> idle_time_breakdown(const trace::RankTrace& trace, std::span<const uint32_t> rows,
                                            const IdleOptions& options = {});

}  // namespace scaleprof::analysis

// Temporal breakdown: how the device's time splits into idle, computation and everything else.
//
// Over one rank's device work (see device_events.h) inside the analysis window:
//   kernel time  = end of the last device event - start of the first (the span, not a sum),
//   idle         = kernel time - length of the union of all device events,
//   compute      = length of the union of COMPUTATION events,
//   non-compute  = kernel time - compute - idle (communication, copies, sync records and OTHER
//                  work not hidden under computation).
// This is HTA's get_temporal_breakdown, computed in exact nanoseconds.
#pragma once

#include <cstdint>
#include <span>

#include "trace/event_table.h"

namespace scaleprof::analysis {

struct TemporalBreakdown {
  int64_t device_events = 0;  // device events in the window
  int64_t kernel_time_ns = 0;
  int64_t idle_ns = 0;
  int64_t compute_ns = 0;
  int64_t non_compute_ns = 0;

  // Percentages of kernel time; NaN when the rank has no device work (kernel time 0).
  double idle_pct() const;
  double compute_pct() const;
  double non_compute_pct() const;
};

TemporalBreakdown temporal_breakdown(const trace::RankTrace& trace, std::span<const uint32_t> rows);

}  // namespace scaleprof::analysis

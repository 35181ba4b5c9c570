// Communication/computation overlap: how much of the time spent communicating is hidden under
// computation.
//
// overlap = |union(COMMUNICATION) ∩ union(COMPUTATION)|, and the percentage is overlap divided by
// |union(COMMUNICATION)|. A rank without communication has no percentage: HTA returns NaN (0/0);
// scaleprof says so explicitly with an empty optional.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "trace/event_table.h"

namespace scaleprof::analysis {

struct CommCompOverlap {
  int64_t communication_ns = 0;  // union of communication events
  int64_t computation_ns = 0;    // union of computation events
  int64_t overlap_ns = 0;        // time both are running
  int64_t communication_events = 0;
  int64_t computation_events = 0;

  bool has_communication() const { return communication_ns > 0; }
  // 100 * overlap / communication; empty without communication.
  std::optional<double> overlap_pct() const;
};

CommCompOverlap comm_comp_overlap(const trace::RankTrace& trace, std::span<const uint32_t> rows);

}  // namespace scaleprof::analysis

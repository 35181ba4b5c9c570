// When an operator, annotation or kernel of a given name ran on a rank: the what-if model's named
// targets ("aten::mm 2x faster", analysis/whatif.h) are timed per segment of each step from these.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trace/event_table.h"

namespace scaleprof::analysis {

// Sorted, disjoint [start, end) instants in ns.
using Intervals = std::vector<std::pair<int64_t, int64_t>>;

// Per text, the union over every track of the rank (host threads and device streams) of the complete
// events whose name contains the text (case-sensitive): nested or overlapping matches count once.
// Each distinct name is compared once (the trace's string pool), so this is linear in the events.
std::vector<Intervals> named_intervals(const trace::RankTrace& t, const std::vector<std::string>& texts);

// The time of `iv` inside [from, to).
int64_t covered_ns(const Intervals& iv, int64_t from, int64_t to);

}  // namespace scaleprof::analysis

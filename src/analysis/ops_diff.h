// HTA's `TraceDiff.ops_diff` over the two sides of `scaleprof trace diff` (analysis/trace_diff.h):
// which operator and kernel names were added, deleted, increased, decreased or unchanged in B against A.
//
// HTA's rule (hta/trace_diff.py, ops_diff over compare_traces): per name, the calls in the compared
// iteration(s) of each trace; added = none in A and some in B, deleted = some in A and none in B,
// increased = some in A and more in B, decreased = some in B and fewer than in A, unchanged = some in
// both and as many. HTA compares one rank and one iteration by default; trace diff compares every
// (rank, kept step) pair of each side, which may differ in number, so a side's figure is its calls per
// (rank, step) pair: its total over the pairs divided by their number. With one rank and one step on
// each side (HTA's default) that is HTA's count, and with equal numbers of pairs the comparison is that
// of the totals. Totals are compared exactly (A's total x B's pairs against B's total x A's pairs).
//
// Operators (host calls) and kernels (device work, summed over their launch paths) are separate rows;
// HTA keys one table by name, so an operator and a kernel of one name are one row there
// (docs/differences-from-hta.md, section 10).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/trace_diff.h"

namespace scaleprof::analysis {

// In HTA's order of its result's keys.
enum class OpsChange : uint8_t { kAdded, kDeleted, kIncreased, kDecreased, kUnchanged };
std::string_view ops_change_name(OpsChange change);  // "added", "deleted", ...

struct OpsDiffRow {
  std::string name;
  bool kernel = false;  // device work; false: a host operator
  OpsChange change = OpsChange::kUnchanged;
  int64_t a_calls = 0, b_calls = 0;       // summed over the side's (rank, step) pairs
  bool a_exact = true, b_exact = true;    // false: the sum passed int64 (core/checked_sum.h), shown as unknown
  double a_per_step = 0, b_per_step = 0;  // calls per (rank, step) pair
};

struct OpsDiff {
  int64_t a_pairs = 0, b_pairs = 0;  // (rank, step) pairs of each side
  // By change (OpsChange's order), then operators before kernels, then name.
  std::vector<OpsDiffRow> rows;
};

OpsDiff ops_diff(const DiffSide& a, const DiffSide& b);

}  // namespace scaleprof::analysis

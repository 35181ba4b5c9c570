#include "analysis/ops_diff.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/checked_sum.h"

namespace scaleprof::analysis {

std::string_view ops_change_name(OpsChange change) {
  switch (change) {
    case OpsChange::kAdded:
      return "added";
    case OpsChange::kDeleted:
      return "deleted";
    case OpsChange::kIncreased:
      return "increased";
    case OpsChange::kDecreased:
      return "decreased";
    case OpsChange::kUnchanged:
      return "unchanged";
  }
  return "unchanged";
}

namespace {

using Key = std::pair<bool, std::string>;  // (kernel, name)

struct Totals {
  CheckedTotal a, b;
};

int64_t sum_steps(const std::vector<int64_t>& counts) {
  CheckedTotal t;
  for (int64_t c : counts) t.add(c);
  return t.exact ? t.value : INT64_MAX;
}

void add_side(const DiffSide& side, bool is_a, std::map<Key, Totals>* totals, int64_t* pairs) {
  CheckedTotal n;
  for (const DiffRankSummary& r : side.ranks) {
    n.add(static_cast<int64_t>(r.steps.size()));
    for (const DiffOperator& op : r.operators) {
      Totals& t = (*totals)[{false, op.name}];
      (is_a ? t.a : t.b).add(sum_steps(op.per_step.count));
    }
    for (const DiffKernel& k : r.kernels) {
      Totals& t = (*totals)[{true, k.name}];
      (is_a ? t.a : t.b).add(sum_steps(k.per_step.count));
    }
  }
  *pairs = n.exact ? n.value : INT64_MAX;
}

// -1, 0 or 1 as a_total / a_pairs is below, equal to or above b_total / b_pairs (exact: both products
// fit in 128 bits).
int compare_rates(int64_t a_total, int64_t a_pairs, int64_t b_total, int64_t b_pairs) {
  const __int128 left = static_cast<__int128>(a_total) * b_pairs;
  const __int128 right = static_cast<__int128>(b_total) * a_pairs;
  return left < right ? -1 : (left > right ? 1 : 0);
}

}  // namespace

OpsDiff ops_diff(const DiffSide& a, const DiffSide& b) {
  std::map<Key, Totals> totals;
  OpsDiff out;
  add_side(a, true, &totals, &out.a_pairs);
  add_side(b, false, &totals, &out.b_pairs);
  for (auto& [key, t] : totals) {
    OpsDiffRow row;
    row.kernel = key.first;
    row.name = key.second;
    row.a_calls = t.a.value;
    row.b_calls = t.b.value;
    row.a_exact = t.a.exact;
    row.b_exact = t.b.exact;
    if (out.a_pairs > 0) row.a_per_step = static_cast<double>(row.a_calls) / static_cast<double>(out.a_pairs);
    if (out.b_pairs > 0) row.b_per_step = static_cast<double>(row.b_calls) / static_cast<double>(out.b_pairs);
    const bool in_a = row.a_calls > 0;
    const bool in_b = row.b_calls > 0;
    if (!in_a && !in_b) continue;  // named but never called in a kept step (HTA: in no list either)
    if (!in_a) {
      row.change = OpsChange::kAdded;
    } else if (!in_b) {
      row.change = OpsChange::kDeleted;
    } else {
      const int c = compare_rates(row.a_calls, out.a_pairs, row.b_calls, out.b_pairs);
      row.change = c < 0 ? OpsChange::kIncreased : (c > 0 ? OpsChange::kDecreased : OpsChange::kUnchanged);
    }
    out.rows.push_back(std::move(row));
  }
  // The map is ordered by (kernel, name): a stable sort by change keeps that order inside each change.
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [](const OpsDiffRow& x, const OpsDiffRow& y) { return x.change < y.change; });
  return out;
}

}  // namespace scaleprof::analysis

// HTA's TraceDiff.ops_diff (analysis/ops_diff.h) on hand-made sides of `trace diff` whose calls per
// (rank, step) are known: each name's change follows HTA's five rules.
#include "analysis/ops_diff.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace scaleprof::analysis {
namespace {

DiffOperator op(const std::string& name, std::vector<int64_t> counts) {
  DiffOperator o;
  o.name = name;
  o.per_step.ns.assign(counts.size(), 0);
  o.per_step.count = std::move(counts);
  return o;
}

DiffKernel kernel(const std::string& name, const std::string& path, std::vector<int64_t> counts) {
  DiffKernel k;
  k.name = name;
  k.path = path;
  k.per_step.ns.assign(counts.size(), 0);
  k.per_step.count = std::move(counts);
  return k;
}

DiffRankSummary rank(int64_t r, int steps) {
  DiffRankSummary s;
  s.rank = r;
  s.has_steps = true;
  for (int i = 0; i < steps; ++i) s.steps.push_back(i);
  return s;
}

const OpsDiffRow* find(const OpsDiff& d, const std::string& name, bool kernel) {
  for (const OpsDiffRow& r : d.rows) {
    if (r.name == name && r.kernel == kernel) return &r;
  }
  return nullptr;
}

TEST(OpsDiff, OneStepEachFollowsHtasRules) {
  DiffSide a, b;
  DiffRankSummary ra = rank(0, 1);
  ra.operators = {op("aten::linear", {2}), op("aten::relu", {1}), op("aten::gone", {3}), op("aten::same", {4}),
                  op("aten::never", {0})};
  ra.kernels = {kernel("gemm", "aten::linear", {2})};
  DiffRankSummary rb = rank(0, 1);
  rb.operators = {op("aten::linear", {3}), op("aten::relu", {0}), op("aten::new", {1}), op("aten::same", {4}),
                  op("aten::fewer", {1})};
  rb.kernels = {kernel("gemm", "aten::linear", {2}), kernel("gemm", "aten::other", {1})};
  ra.operators.push_back(op("aten::fewer", {2}));
  a.ranks = {ra};
  b.ranks = {rb};
  const OpsDiff d = ops_diff(a, b);
  EXPECT_EQ(d.a_pairs, 1);
  EXPECT_EQ(d.b_pairs, 1);
  ASSERT_NE(find(d, "aten::new", false), nullptr);
  EXPECT_EQ(find(d, "aten::new", false)->change, OpsChange::kAdded);
  EXPECT_EQ(find(d, "aten::gone", false)->change, OpsChange::kDeleted);
  EXPECT_EQ(find(d, "aten::relu", false)->change, OpsChange::kDeleted);  // some in A, none in B
  EXPECT_EQ(find(d, "aten::linear", false)->change, OpsChange::kIncreased);
  EXPECT_EQ(find(d, "aten::fewer", false)->change, OpsChange::kDecreased);
  EXPECT_EQ(find(d, "aten::same", false)->change, OpsChange::kUnchanged);
  EXPECT_EQ(find(d, "aten::never", false), nullptr);  // no call on either side: in no list
  // Kernels are summed over their launch paths: gemm 2 in A, 2 + 1 in B.
  const OpsDiffRow* gemm = find(d, "gemm", true);
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->change, OpsChange::kIncreased);
  EXPECT_EQ(gemm->a_calls, 2);
  EXPECT_EQ(gemm->b_calls, 3);
  // Ordered by change (HTA's keys' order), operators before kernels, then by name.
  std::vector<std::string> order;
  for (const OpsDiffRow& r : d.rows) order.push_back(r.name);
  EXPECT_EQ(order, (std::vector<std::string>{"aten::new", "aten::gone", "aten::relu", "aten::linear", "gemm",
                                             "aten::fewer", "aten::same"}));
  EXPECT_EQ(ops_change_name(d.rows.front().change), "added");
}

TEST(OpsDiff, SidesWithDifferentStepsCompareCallsPerStep) {
  // A: 2 ranks x 3 steps = 6 pairs; B: 1 rank x 2 steps = 2 pairs.
  DiffSide a, b;
  DiffRankSummary a0 = rank(0, 3), a1 = rank(1, 3);
  a0.operators = {op("same_rate", {1, 1, 1}), op("uneven", {0, 0, 3}), op("fewer", {2, 2, 2})};
  a1.operators = {op("same_rate", {1, 1, 1}), op("uneven", {0, 0, 0}), op("fewer", {2, 2, 2})};
  DiffRankSummary b0 = rank(0, 2);
  // same_rate: 6 / 6 against 2 / 2; uneven: 3 / 6 = 0.5 against 1 / 2; fewer: 12 / 6 = 2 against 3 / 2.
  b0.operators = {op("same_rate", {1, 1}), op("uneven", {1, 0}), op("fewer", {2, 1})};
  a.ranks = {a0, a1};
  b.ranks = {b0};
  const OpsDiff d = ops_diff(a, b);
  EXPECT_EQ(d.a_pairs, 6);
  EXPECT_EQ(d.b_pairs, 2);
  EXPECT_EQ(find(d, "same_rate", false)->change, OpsChange::kUnchanged);  // 6 calls against 2: same per step
  EXPECT_EQ(find(d, "uneven", false)->change, OpsChange::kUnchanged);
  EXPECT_DOUBLE_EQ(find(d, "uneven", false)->a_per_step, 0.5);
  const OpsDiffRow* fewer = find(d, "fewer", false);
  EXPECT_EQ(fewer->change, OpsChange::kDecreased);
  EXPECT_EQ(fewer->a_calls, 12);
  EXPECT_EQ(fewer->b_calls, 3);
  EXPECT_DOUBLE_EQ(fewer->b_per_step, 1.5);
}

}  // namespace
}  // namespace scaleprof::analysis

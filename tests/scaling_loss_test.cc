// Loss attribution between two scales: what the data supports and nothing more.
#include <gtest/gtest.h>

#include "analysis/scaling_loss.h"

namespace scaleprof::analysis {
namespace {

// itwinai's Virgo example (its documentation): deepspeed 4 -> 32 GPUs, 51.18 s -> 9.09 s per epoch,
// computation fraction 54.03 % -> 53.67 %. The non-computation share of operator self time is flat
// (45.97 % -> 46.33 %); it is not a share of the epoch time, so none of the ~30 lost points may be
// blamed on it.
TEST(ScalingLoss, ComputationFractionAloneAttributesNothing) {
  const ScaleLoss l = attribute_scale_loss({4, 51.18, {}, 0.5403}, {32, 9.09, {}, 0.5367});
  EXPECT_EQ(l.basis, LossBasis::kComputationFraction);
  EXPECT_STREQ(loss_basis_name(l.basis), "computation_fraction");
  EXPECT_NEAR(l.efficiency, 51.18 * 4 / (9.09 * 32), 1e-12);
  EXPECT_NEAR(l.lost, 1 - 51.18 * 4 / (9.09 * 32), 1e-12);
  EXPECT_TRUE(l.causes.empty());
  EXPECT_NEAR(l.rest, l.lost, 1e-12);  // all of it unattributed
  EXPECT_NEAR(l.non_computation0, 0.4597, 1e-12);
  EXPECT_NEAR(l.non_computation1, 0.4633, 1e-12);
  EXPECT_TRUE(main_loss_cause(l).name.empty());
}

// Device traces at both scales: 1 -> 4 workers, 9 s -> 3 s (efficiency 75 %); communication 20 % ->
// 20 % of the epoch (0.6 s vs 1.8 / 4 = 0.45 s: 5 points), idle 0 -> 20 % (0.6 s: 20 points).
TEST(ScalingLoss, TraceSharesAreAttributedByName) {
  const ScaleLoss l = attribute_scale_loss({1, 9, {{"communication", 0.2}, {"idle", 0.0}}, 0.5},
                                           {4, 3, {{"communication", 0.2}, {"idle", 0.2}}, 0.4});
  EXPECT_EQ(l.basis, LossBasis::kTraces);
  ASSERT_EQ(l.causes.size(), 2u);
  EXPECT_EQ(l.causes[0].name, "communication");
  EXPECT_NEAR(l.causes[0].points, 0.05, 1e-12);
  EXPECT_EQ(l.causes[1].name, "idle");
  EXPECT_NEAR(l.causes[1].points, 0.20, 1e-12);
  EXPECT_NEAR(l.causes[1].share1, 0.2, 1e-12);
  EXPECT_NEAR(l.rest, 0.0, 1e-12);
  const MainLossCause m = main_loss_cause(l);
  EXPECT_EQ(m.name, "idle");
  EXPECT_NEAR(m.points, 0.20, 1e-12);
  // The computation fraction is still shown as an indication.
  EXPECT_NEAR(l.non_computation1, 0.6, 1e-12);
}

// Weak scaling (the same work per worker): the ideal is the same epoch time, so efficiency is t0 / t1
// and a cause's points are its growth in seconds over t1, nothing expected to shrink with the workers.
// 2 s at 1 worker, 2.5 s at 4: 80 % weak efficiency. Communication 0.2 -> 0.6 s: 16 points; outside
// the steps 0.3 -> 0.4 s: 4 points. As strong scaling, the same times would have lost 80 points.
TEST(ScalingLoss, WeakScalingIsMeasuredAgainstTheSameTime) {
  ScaleShares base{1, 2.0, {{"communication", 0.1 / 0.85}}, 0.5};
  ScaleShares at{4, 2.5, {{"communication", 0.6 / 2.1}}, 0.5};
  base.outside_steps = 0.3 / 2.0;
  at.outside_steps = 0.4 / 2.5;
  base.weak_scaling = at.weak_scaling = true;
  const ScaleLoss weak = attribute_scale_loss(base, at);
  EXPECT_TRUE(weak.weak);
  EXPECT_NEAR(weak.efficiency, 0.8, 1e-12);
  ASSERT_EQ(weak.causes.size(), 2u);
  EXPECT_EQ(weak.causes[0].name, kOutsideStepsCause);
  EXPECT_NEAR(weak.causes[0].points, 0.1 / 2.5, 1e-12);
  EXPECT_EQ(weak.causes[1].name, "communication");
  EXPECT_NEAR(weak.causes[1].points, 0.4 / 2.5, 1e-12);
  EXPECT_NEAR(weak.rest, 0.2 - 0.04 - 0.16, 1e-12);
  base.weak_scaling = false;  // only when both scales say so
  const ScaleLoss strong = attribute_scale_loss(base, at);
  EXPECT_FALSE(strong.weak);
  EXPECT_NEAR(strong.efficiency, 0.2, 1e-12);
}

// Causes with different names at the two scales cannot be compared; without a fraction either,
// nothing is attributed. A larger rest is the main cause.
TEST(ScalingLoss, MismatchedCausesAndLargerRest) {
  const ScaleLoss none =
      attribute_scale_loss({1, 9, {{"communication", 0.2}}, tables::kNaN}, {2, 6, {{"idle", 0.1}}, tables::kNaN});
  EXPECT_EQ(none.basis, LossBasis::kNone);
  EXPECT_NEAR(none.lost, 0.25, 1e-12);
  EXPECT_TRUE(main_loss_cause(none).name.empty());
  // 1 -> 2 workers, 9 s -> 6 s: 25 points; communication 10 % -> 10 %: 0.6 - 0.45 = 0.15 s, 2.5 points.
  const ScaleLoss rest = attribute_scale_loss({1, 9, {{"communication", 0.1}}, tables::kNaN},
                                              {2, 6, {{"communication", 0.1}}, tables::kNaN});
  EXPECT_NEAR(rest.causes[0].points, 0.025, 1e-12);
  EXPECT_EQ(main_loss_cause(rest).name, "unattributed");
  EXPECT_NEAR(main_loss_cause(rest).points, 0.225, 1e-12);
}

// CPU runs over gloo: communication and waiting for stragglers as shares of profiled step time.
// 1 -> 2 workers, 8 s -> 5 s (efficiency 80 %, 20 points); communication 0 -> 10 % (0.5 s vs 0 s:
// 10 points), waiting 0 -> 4 % (0.2 s: 4 points), the rest 6 points.
TEST(ScalingLoss, CollectivesBasisSplitsCommunicationFromWaiting) {
  const ScaleLoss l = attribute_scale_loss(
      {1, 8, {{"communication", 0.0}, {"waiting for stragglers", 0.0}}, tables::kNaN, LossBasis::kCollectives},
      {2, 5, {{"communication", 0.10}, {"waiting for stragglers", 0.04}}, tables::kNaN, LossBasis::kCollectives});
  EXPECT_EQ(l.basis, LossBasis::kCollectives);
  EXPECT_STREQ(loss_basis_name(l.basis), "collectives");
  EXPECT_NEAR(l.lost, 0.20, 1e-12);
  ASSERT_EQ(l.causes.size(), 2u);
  EXPECT_EQ(l.causes[1].name, "waiting for stragglers");
  EXPECT_NEAR(l.causes[0].points, 0.10, 1e-12);
  EXPECT_NEAR(l.causes[1].points, 0.04, 1e-12);
  EXPECT_NEAR(l.rest, 0.06, 1e-12);
  EXPECT_EQ(main_loss_cause(l).name, "communication");
  EXPECT_TRUE(is_attributed(LossBasis::kTracesCollectives));
  EXPECT_FALSE(is_attributed(LossBasis::kComputationFraction));
}

// Shares on different bases are not compared, even with the same cause names; a basis that is not an
// attributed one attributes nothing.
TEST(ScalingLoss, SharesOnDifferentBasesAreNotCompared) {
  const ScaleLoss mixed = attribute_scale_loss({1, 8, {{"communication", 0.0}}, tables::kNaN, LossBasis::kCollectives},
                                               {2, 5, {{"communication", 0.1}}, tables::kNaN, LossBasis::kTraces});
  EXPECT_EQ(mixed.basis, LossBasis::kNone);
  EXPECT_TRUE(mixed.causes.empty());
  const ScaleLoss none = attribute_scale_loss({1, 8, {{"communication", 0.0}}, 0.5, LossBasis::kNone},
                                              {2, 5, {{"communication", 0.1}}, 0.4, LossBasis::kNone});
  EXPECT_EQ(none.basis, LossBasis::kComputationFraction);
  EXPECT_TRUE(none.causes.empty());
}

}  // namespace
}  // namespace scaleprof::analysis

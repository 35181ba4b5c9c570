// The pure scaling computations, each against numbers worked out by hand (in the comments).
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/scaling.h"

namespace scaleprof::analysis {
namespace {

TEST(SampleStats, MeanMedianSampleStdCount) {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squared deviations 32, sample std sqrt(32/7).
  SampleStats s = sample_stats({9, 4, 2, 4, 5, 4, 7, 5});
  EXPECT_EQ(s.count, 8);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(32.0 / 7.0));
  EXPECT_DOUBLE_EQ(s.min, 2.0);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  EXPECT_DOUBLE_EQ(s.sum, 40.0);
  SampleStats odd = sample_stats({3, 1, 2});
  EXPECT_DOUBLE_EQ(odd.median, 2.0);
  SampleStats one = sample_stats({7});
  EXPECT_EQ(one.count, 1);
  EXPECT_DOUBLE_EQ(one.mean, 7.0);
  EXPECT_TRUE(std::isnan(one.std));
  SampleStats none = sample_stats({tables::kNaN});
  EXPECT_EQ(none.count, 0);
  EXPECT_TRUE(std::isnan(none.mean));
}

TEST(SkipWarmup, DropsTheLowestEpochIndices) {
  std::vector<tables::EpochTime> e = {{2, 5.0}, {0, 30.0}, {1, 6.0}, {3, 7.0}};
  std::vector<tables::EpochTime> kept = skip_warmup(e, 1);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].epoch, 1);
  EXPECT_DOUBLE_EQ(kept[0].seconds, 6.0);
  EXPECT_EQ(kept[2].epoch, 3);
  EXPECT_EQ(skip_warmup(e, 0).size(), 4u);
  EXPECT_TRUE(skip_warmup(e, 4).empty());
  EXPECT_TRUE(skip_warmup(e, 9).empty());
}

TEST(RelativeScaling, SpeedupIdealEfficiencyAgainstSmallestScale) {
  // Baseline 4 workers at 12 s. 8 workers at 8 s: speedup 1.5 of ideal 2, efficiency 0.75.
  std::vector<ScalingRow> rows = relative_scaling({{8, 8.0}, {4, 12.0}, {16, 5.0}});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].workers, 4);
  EXPECT_DOUBLE_EQ(rows[0].speedup, 1.0);
  EXPECT_DOUBLE_EQ(rows[0].efficiency, 1.0);
  EXPECT_DOUBLE_EQ(rows[1].speedup, 1.5);
  EXPECT_DOUBLE_EQ(rows[1].ideal_speedup, 2.0);
  EXPECT_DOUBLE_EQ(rows[1].efficiency, 0.75);
  EXPECT_DOUBLE_EQ(rows[2].speedup, 12.0 / 5.0);
  EXPECT_DOUBLE_EQ(rows[2].ideal_speedup, 4.0);
  EXPECT_DOUBLE_EQ(rows[2].efficiency, 0.6);
}

TEST(Amdahl, LeastSquaresFitByHand) {
  // T = 10, 6, 3 at n = 1, 2, 4; x = 1/n = 1, 1/2, 1/4. mean x = 7/12, mean T = 19/3,
  // Sxx = 7/24, SxT = 8/3: b = SxT/Sxx = 64/7, a = 19/3 - (64/7)(7/12) = 1.
  // Serial fraction a/(a+b) = 7/71. Residuals -1/7, 3/7, -2/7: RMS sqrt(2/21).
  const std::vector<ScalePoint> pts = {{1, 10.0}, {2, 6.0}, {4, 3.0}};
  AmdahlFit fit = fit_amdahl(pts);
  ASSERT_TRUE(fit.ok);
  EXPECT_FALSE(fit.constrained);
  EXPECT_NEAR(fit.serial_s, 1.0, 1e-12);
  EXPECT_NEAR(fit.parallel_s, 64.0 / 7.0, 1e-12);
  EXPECT_NEAR(fit.serial_fraction, 7.0 / 71.0, 1e-12);
  EXPECT_NEAR(fit.rms_residual_s, std::sqrt(2.0 / 21.0), 1e-12);
  EXPECT_EQ(fit.base_workers, 1);
  EXPECT_EQ(fit.max_workers, 4);
  EXPECT_EQ(fit.points, 3);
  // Projection at 8 workers: T(1) = 71/7, T(8) = 1 + 8/7 = 15/7, speedup 71/15.
  EXPECT_NEAR(amdahl_speedup(fit, 8), 71.0 / 15.0, 1e-12);
  EXPECT_NEAR(amdahl_time(fit, 16), 1.0 + 4.0 / 7.0, 1e-12);
}

TEST(Amdahl, ExactFitAndClamping) {
  // T = 1 + 8/n exactly: serial fraction 1/9, no residual.
  const std::vector<ScalePoint> exact = {{1, 9.0}, {2, 5.0}, {4, 3.0}};
  AmdahlFit fit = fit_amdahl(exact);
  EXPECT_NEAR(fit.serial_fraction, 1.0 / 9.0, 1e-12);
  EXPECT_NEAR(fit.rms_residual_s, 0.0, 1e-12);
  // Baseline other than 1: relative to 2 workers, speedup at 8 = T(2)/T(8) = 5/2.
  const std::vector<ScalePoint> from_two = {{2, 5.0}, {4, 3.0}};
  AmdahlFit f2 = fit_amdahl(from_two);
  EXPECT_EQ(f2.base_workers, 2);
  EXPECT_NEAR(amdahl_speedup(f2, 8), 2.5, 1e-12);
  // Superlinear: 10 s at 1, 4 s at 2 gives a = -2; clamped to a = 0, b = sum(xT)/sum(x^2) = 12/1.25.
  const std::vector<ScalePoint> superlinear = {{1, 10.0}, {2, 4.0}};
  AmdahlFit s = fit_amdahl(superlinear);
  EXPECT_TRUE(s.constrained);
  EXPECT_DOUBLE_EQ(s.serial_s, 0.0);
  EXPECT_DOUBLE_EQ(s.parallel_s, 9.6);
  EXPECT_DOUBLE_EQ(s.serial_fraction, 0.0);
  // Slower with more workers: b clamped to 0, a = mean time, serial fraction 1.
  const std::vector<ScalePoint> slower = {{1, 4.0}, {2, 6.0}};
  AmdahlFit w = fit_amdahl(slower);
  EXPECT_TRUE(w.constrained);
  EXPECT_DOUBLE_EQ(w.serial_s, 5.0);
  EXPECT_DOUBLE_EQ(w.serial_fraction, 1.0);
  // One worker count: no fit.
  const std::vector<ScalePoint> single = {{4, 3.0}, {4, 3.5}};
  EXPECT_FALSE(fit_amdahl(single).ok);
  EXPECT_TRUE(std::isnan(amdahl_speedup(fit_amdahl(single), 8)));
}

TEST(Energy, TrapezoidCounterRectangle) {
  // (0 s, 100 W), (1 s, 200 W), gap, (4 s, 300 W): 150 J + 250 W x 3 s = 900 J.
  const std::vector<double> t = {0, 1, 2, 4};
  const std::vector<double> p = {100, 200, tables::kNaN, 300};
  EXPECT_DOUBLE_EQ(trapezoid_energy_j(t, p), 900.0);
  const std::vector<double> one = {5};
  EXPECT_DOUBLE_EQ(trapezoid_energy_j(one, one), 0.0);
  const std::vector<double> counter = {tables::kNaN, 5, 10, 25};
  EXPECT_DOUBLE_EQ(counter_energy_j(counter), 20.0);
  const std::vector<double> power = {100, 200, 300};
  EXPECT_DOUBLE_EQ(rectangle_energy_j(power, 2.0), 1200.0);
}

TEST(LossAttribution, SplitsLostEfficiencyExactly) {
  // 1 -> 4 workers, 9 s -> 3 s: efficiency 9/(3*4) = 0.75, 0.25 lost.
  // Communication 20% of 9 s -> 20% of 3 s: excess 0.6 - 1.8/4 = 0.15 s = 0.05 of 3 s.
  // Idle 0% -> 10%: excess 0.3 s = 0.1. Rest 0.25 - 0.05 - 0.1 = 0.1.
  const std::vector<double> f0 = {0.2, 0.0};
  const std::vector<double> f1 = {0.2, 0.1};
  LossAttribution a = attribute_efficiency_loss(1, 9.0, f0, 4, 3.0, f1);
  EXPECT_DOUBLE_EQ(a.efficiency, 0.75);
  EXPECT_DOUBLE_EQ(a.lost, 0.25);
  ASSERT_EQ(a.parts.size(), 2u);
  EXPECT_NEAR(a.parts[0], 0.05, 1e-12);
  EXPECT_NEAR(a.excess_s[0], 0.15, 1e-12);
  EXPECT_NEAR(a.parts[1], 0.1, 1e-12);
  EXPECT_NEAR(a.rest, 0.1, 1e-12);
  // Unknown share: the component is NaN and all of the loss is in the rest.
  const std::vector<double> unknown = {tables::kNaN};
  const std::vector<double> known = {0.5};
  LossAttribution u = attribute_efficiency_loss(1, 9.0, unknown, 4, 3.0, known);
  EXPECT_TRUE(std::isnan(u.parts[0]));
  EXPECT_DOUBLE_EQ(u.rest, 0.25);
}

TEST(BestStrategy, LowestTimePerScaleWithRunnerUp) {
  const std::vector<StrategyTime> times = {{"horovod", 4, 3.94},   {"deepspeed", 4, 2.65},
                                           {"torch-ddp", 4, 2.92}, {"deepspeed", 8, 1.69},
                                           {"torch-ddp", 8, 1.69}, {"horovod", 16, tables::kNaN}};
  std::vector<BestAtScale> best = best_strategy_per_scale(times);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].workers, 4);
  EXPECT_EQ(best[0].strategy, "deepspeed");
  EXPECT_EQ(best[0].runner_up, "torch-ddp");
  EXPECT_DOUBLE_EQ(best[0].runner_up_seconds, 2.92);
  EXPECT_EQ(best[0].candidates, 3);
  EXPECT_EQ(best[1].strategy, "deepspeed");  // a tie goes to the name sorting first
  EXPECT_EQ(best[1].runner_up, "torch-ddp");
}

}  // namespace
}  // namespace scaleprof::analysis

// Time outside the training steps (issue 20, item 1): epoch time minus the step records of the rank
// that set it is a cause of lost efficiency of its own, with an answer known by construction.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

#include "analysis/scaling_loss.h"
#include "cli_harness.h"
#include "scalability_fixtures.h"

namespace {

using scaleprof::testing::make_run;
using scaleprof::testing::ScratchDir;

// steps.csv with `steps` steps of `seconds` each in every one of `epochs` epochs, `samples` each: a
// fixed total split over the workers (strong scaling) gives each of n workers 32 / n.
std::string steps_csv(int epochs, int steps, double seconds, int samples = 32) {
  std::string out = "epoch,step,start_unix_ns,duration_s,samples\n";
  for (int e = 0; e < epochs; ++e) {
    for (int s = 0; s < steps; ++s) {
      out += fmt::format("{},{},{},{:.9f},{}\n", e, s, 1000 * (e * steps + s), seconds, samples);
    }
  }
  return out;
}

simdjson::dom::element loss_row(simdjson::dom::element doc) {
  simdjson::dom::array rows = doc["scaling_loss"].get_array();
  EXPECT_EQ(rows.size(), 1u);
  return rows.at(0);
}

// 1 worker: 2.3 s epochs, 2.0 s of them in 10 steps; 2 workers: 1.3 s epochs (rank 1's 1.35 s set
// them), 1.0 s in steps on rank 0 and 1.05 s on rank 1. Both spend 0.3 s outside the steps: perfect
// scaling would have halved it, so it costs (0.3 - 0.15) / 1.35 = 11.1 points of the
// 1 - 2.3 / (2 x 1.35) = 14.8 lost.
TEST(OutsideSteps, SerialTimeOutsideTheStepsIsItsOwnCause) {
  ScratchDir root("outside-steps");
  make_run(root, "exp", "w1", "w1", "ddp", 1, {{2.3, 2.3, 2.3}});
  make_run(root, "exp", "w2", "w2", "ddp", 2, {{1.3, 1.3, 1.3}, {1.35, 1.35, 1.35}});
  root.write("exp/w1/rank-00000/steps.csv", steps_csv(3, 10, 0.2));
  root.write("exp/w2/rank-00000/steps.csv", steps_csv(3, 10, 0.1, 16));
  root.write("exp/w2/rank-00001/steps.csv", steps_csv(3, 10, 0.105, 16));
  const scaleprof::testing::CliRun r =
      scaleprof::testing::run_cli("report --no-plots --format json --skip-epochs 0 --root " + root.path(), "", 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc)) << r.out;
  const simdjson::dom::element row = loss_row(doc);
  EXPECT_EQ(std::string_view(row["basis"]), "steps");
  const double lost = 100 * (1 - 2.3 / (2 * 1.35));
  EXPECT_NEAR(double(row["lost_pts"]), lost, 1e-9);
  EXPECT_NEAR(double(row["outside_the_steps_pts"]), 100 * (0.3 - 0.15) / 1.35, 1e-6);
  EXPECT_NEAR(double(row["other_pts"]), lost - 100 * (0.3 - 0.15) / 1.35, 1e-6);
}

// Steps that sum to more than their epoch were not timed inside it: the split is not used (a warning
// says so), and with no other basis nothing is attributed.
TEST(OutsideSteps, StepsLongerThanTheEpochAreNotUsed) {
  ScratchDir root("outside-steps-longer");
  make_run(root, "exp", "w1", "w1", "ddp", 1, {{2.3}});
  make_run(root, "exp", "w2", "w2", "ddp", 2, {{1.3}, {1.2}});
  root.write("exp/w1/rank-00000/steps.csv", steps_csv(1, 10, 0.2));
  root.write("exp/w2/rank-00000/steps.csv", steps_csv(1, 10, 0.2));
  root.write("exp/w2/rank-00001/steps.csv", steps_csv(1, 10, 0.1));
  const scaleprof::testing::CliRun r =
      scaleprof::testing::run_cli("report --no-plots --format json --skip-epochs 0 --root " + root.path(), "", 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("rank-00000/steps.csv: the steps of epoch 0 sum to 2 s, more than the epoch's 1.3 s; time "
                       "outside the steps not used for it"),
            std::string::npos)
      << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc)) << r.out;
  // Rank 0 sets the epoch time (1.3 s), and its split is unusable.
  EXPECT_EQ(std::string_view(loss_row(doc)["basis"]), "none");
}

// With trace shares as well, they are shares of the time in the steps: scaled to it, so that every
// cause is an exclusive part of the epoch time. 1 -> 2 workers, 10 s -> 6 s; 20 % of the epoch
// outside the steps at both; communication 10 % -> 20 % of the steps.
TEST(OutsideSteps, TraceSharesAreScaledToTheSteps) {
  using namespace scaleprof::analysis;
  ScaleShares base{.workers = 1,
                   .seconds = 10,
                   .trace_shares = {{"communication", 0.1}},
                   .shares_basis = LossBasis::kTraces,
                   .outside_steps = 0.2,
                   .operators = {}};
  ScaleShares at{.workers = 2,
                 .seconds = 6,
                 .trace_shares = {{"communication", 0.2}},
                 .shares_basis = LossBasis::kTraces,
                 .outside_steps = 0.2,
                 .operators = {}};
  const ScaleLoss l = attribute_scale_loss(base, at);
  EXPECT_EQ(l.basis, LossBasis::kTraces);
  ASSERT_EQ(l.causes.size(), 2u);
  EXPECT_EQ(l.causes[0].name, kOutsideStepsCause);
  EXPECT_NEAR(l.causes[0].points, (6 * 0.2 - 10 * 0.2 / 2) / 6, 1e-12);    // 1.2 s vs 1.0 s
  EXPECT_NEAR(l.causes[1].share1, 0.2 * 0.8, 1e-12);                       // of the epoch
  EXPECT_NEAR(l.causes[1].points, (6 * 0.16 - 10 * 0.08 / 2) / 6, 1e-12);  // 0.96 s vs 0.4 s
  EXPECT_NEAR(l.rest, l.lost - l.causes[0].points - l.causes[1].points, 1e-12);
  // Without step records at one scale, the causes are the trace shares alone, as before.
  at.outside_steps = scaleprof::tables::kNaN;
  const ScaleLoss plain = attribute_scale_loss(base, at);
  ASSERT_EQ(plain.causes.size(), 1u);
  EXPECT_NEAR(plain.causes[0].share1, 0.2, 1e-12);
}

}  // namespace

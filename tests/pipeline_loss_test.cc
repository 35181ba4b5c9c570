// Issue 33 item 3: the pipeline bubble as a cause of its own in "where scaling is lost", beside the ideal
// (p-1)/(m+p-1); FSDP's exposed collectives as parts of communication (item 4). Answers known by construction.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analysis/scalability.h"
#include "report/key_figures.h"
#include "report/loss_chart.h"
#include "report/scalability_explanation.h"
#include "report/scalability_report.h"

namespace {

using scaleprof::analysis::LossBasis;
using scaleprof::analysis::ScalabilityAnalysis;
using scaleprof::analysis::ScaleLoss;
using scaleprof::tables::RunData;
using scaleprof::tables::ScalabilityData;
using scaleprof::tables::TraceSums;

constexpr int64_t kPipeMs = 1'000'000;

// The decomposed rank's steps: compute and exposed communication in ms, of which `bubble` is the pipeline's.
TraceSums pipe_sums(int64_t compute, int64_t communication, int64_t bubble, double ideal) {
  TraceSums t;
  t.ranks = 1;
  t.decomposed_runs = 1;
  t.step_compute_ns = compute * kPipeMs;
  t.step_communication_ns = communication * kPipeMs;
  t.step_pipeline_bubble_ns = bubble * kPipeMs;
  t.decomposed_step_ns = (compute + communication) * kPipeMs;
  t.step_pipeline_ideal_ns = std::llround(ideal * static_cast<double>(t.decomposed_step_ns));
  return t;
}

RunData pipe_run(int64_t workers, double seconds, const TraceSums& traces, int64_t stages) {
  RunData r;
  r.layout = "scaleprof";
  r.name = "pp-w" + std::to_string(workers);
  r.strategy = "pp";
  r.workers = workers;
  r.nodes = 1;
  // Warm-up epoch skipped; 10 % of each kept epoch outside the steps.
  r.epochs = {{0, seconds * 2, seconds * 1.8}, {1, seconds, seconds * 0.9}, {2, seconds, seconds * 0.9}};
  r.traces = traces;
  r.pipeline_stages = stages;
  r.pipeline_micro_batches = stages > 0 ? 4 : -1;
  return r;
}

const scaleprof::analysis::LossCause* pipe_cause(const ScaleLoss& l, const std::string& name) {
  for (const auto& c : l.causes) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// GPipe with m = 4 on 2 stages then 4, the same work per step: 2 workers, 10 s epochs, steps of 100 ms = 80
// compute + 20 bubble (1/5, the ideal); 4 workers, 7 s epochs, steps of 70 ms = 40 compute + 30 bubble (3/7).
// Efficiency 10 x 2 / (7 x 4) = 71.43 %. Shares of the epoch (0.9 in the steps): bubble 0.18 and 0.3857, its
// points (7 x 0.3857 - 10 x 0.18 / 2) / 7 = 25.71; computation (3.6 - 7.2 / 2) / 7 = 0; outside the steps
// (0.7 - 1 / 2) / 7 = 2.86; they add up to the 28.57 lost. The ideal is the measured bubble here: 25.71 too.
TEST(PipelineLoss, BubbleIsACauseBesideItsIdeal) {
  ScalabilityData data;
  data.runs.push_back(pipe_run(2, 10, pipe_sums(80, 20, 20, 0.2), 2));
  data.runs.push_back(pipe_run(4, 7, pipe_sums(40, 30, 30, 3.0 / 7.0), 4));
  const ScalabilityAnalysis a = scaleprof::analysis::analyse_scalability(data, {});
  ASSERT_EQ(a.series.size(), 1u);
  ASSERT_EQ(a.series[0].losses.size(), 1u);
  const ScaleLoss& l = a.series[0].losses[0];
  EXPECT_EQ(l.basis, LossBasis::kDecomposition);
  EXPECT_NEAR(l.lost, 1.0 - 20.0 / 28.0, 1e-12);
  const auto* bubble = pipe_cause(l, "pipeline bubble");
  ASSERT_NE(bubble, nullptr);
  EXPECT_EQ(l.causes[3].name, "pipeline bubble");  // after communication
  EXPECT_NEAR(bubble->points, (7 * 0.9 * 3.0 / 7.0 - 10 * 0.18 / 2) / 7, 1e-9);
  EXPECT_NEAR(bubble->ideal_points, bubble->points, 1e-6);
  EXPECT_NEAR(pipe_cause(l, "communication")->points, 0.0, 1e-12);  // the bubble taken out of it
  EXPECT_NEAR(pipe_cause(l, "computation")->points, 0.0, 1e-12);
  EXPECT_NEAR(l.rest, 0.0, 1e-12);
  EXPECT_EQ(bubble->stages0, 2);
  EXPECT_EQ(bubble->stages1, 4);
  EXPECT_EQ(bubble->micro_batches1, 4);
  EXPECT_NEAR(bubble->step_fraction0, 0.2, 1e-12);
  EXPECT_NEAR(bubble->ideal_fraction1, 3.0 / 7.0, 1e-9);
  EXPECT_EQ(scaleprof::analysis::main_loss_cause(l).name, "pipeline bubble");
  // Every output: the detail beside the ideal, the JSON cause's figures, the table's columns.
  const std::string detail = scaleprof::report::cause_detail(*bubble, l);
  EXPECT_NE(detail.find("20.0 % of the profiled steps at 2 workers (p=2, m=4: ideal (p-1)/(m+p-1) 20.0 %)"),
            std::string::npos)
      << detail;
  EXPECT_NE(detail.find("42.9 % of the profiled steps at 4 workers (p=4, m=4: ideal (p-1)/(m+p-1) 42.9 %)"),
            std::string::npos)
      << detail;
  const auto sections = scaleprof::report::scalability_sections(a);
  const std::string json = scaleprof::report::render_sections_json(sections, a);
  EXPECT_NE(json.find("\"cause\": \"pipeline bubble\", \"pts\": 25.71428571428"), std::string::npos) << json;
  EXPECT_NE(json.find("\"stages_from\": 2, \"stages_to\": 4, \"micro_batches_from\": 4, \"micro_batches_to\": 4"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"pipeline_bubble_ideal_pts\": 25.71"), std::string::npos) << json;
  EXPECT_NE(json.find("\"pipeline_ideal_step_pct_to\": 42.857"), std::string::npos) << json;
  // HTML: the loss chart's bar names the ideal in its tooltip.
  const std::string svg = scaleprof::report::loss_chart_svg(scaleprof::report::loss_chart_bars(a));
  EXPECT_NE(svg.find("pipeline bubble: 25.7 points; at the ideal (p-1)/(m+p-1): 25.7 points"), std::string::npos)
      << svg;
  const std::string csv = scaleprof::report::render_sections_csv(sections);
  EXPECT_NE(csv.find("pipeline_bubble_pts"), std::string::npos);
}

// A pipeline at one scale only: the cause is listed at both (0 where there is none), so both scales are
// still compared on the decomposition.
TEST(PipelineLoss, PipelineAtOneScaleOnly) {
  ScalabilityData data;
  data.runs.push_back(pipe_run(2, 10, pipe_sums(80, 20, 0, 0), 0));
  data.runs.push_back(pipe_run(4, 7, pipe_sums(40, 30, 30, 3.0 / 7.0), 4));
  const ScalabilityAnalysis a = scaleprof::analysis::analyse_scalability(data, {});
  const ScaleLoss& l = a.series[0].losses[0];
  EXPECT_EQ(l.basis, LossBasis::kDecomposition);
  const auto* bubble = pipe_cause(l, "pipeline bubble");
  ASSERT_NE(bubble, nullptr);
  EXPECT_EQ(bubble->stages0, 0);
  EXPECT_NEAR(bubble->share0, 0.0, 1e-12);
  EXPECT_NEAR(bubble->points, 0.9 * 3.0 / 7.0, 1e-9);
  // Communication at 2 workers (20 ms of 100, no pipeline) is all communication.
  EXPECT_NEAR(pipe_cause(l, "communication")->share0, 0.18, 1e-12);
  EXPECT_NE(scaleprof::report::cause_detail(*bubble, l).find("none at 2 workers (no pipeline)"), std::string::npos);
}

// Without a pipeline nothing changes: no cause, no column.
TEST(PipelineLoss, NoPipelineNoCause) {
  ScalabilityData data;
  data.runs.push_back(pipe_run(2, 10, pipe_sums(80, 20, 0, 0), 0));
  data.runs.push_back(pipe_run(4, 7, pipe_sums(40, 30, 0, 0), 0));
  const ScalabilityAnalysis a = scaleprof::analysis::analyse_scalability(data, {});
  EXPECT_EQ(pipe_cause(a.series[0].losses[0], "pipeline bubble"), nullptr);
  const std::string csv = scaleprof::report::render_sections_csv(scaleprof::report::scalability_sections(a));
  EXPECT_EQ(csv.find("pipeline"), std::string::npos);
  EXPECT_EQ(csv.find("fsdp_exposed_pts"), std::string::npos);
}

// FSDP's exposed all-gathers and reduce-scatters: parts of communication, pooled by name over the runs of a
// scale, their points inside communication's. 2 workers: 10 ms of the 100 ms steps is layers.0's forward
// all-gather; 4 workers: 20 of 70 ms. Points (7 x 0.9 x 2/7 - 10 x 0.09 / 2) / 7 = 19.29.
TEST(PipelineLoss, FsdpPartsOfCommunication) {
  ScalabilityData data;
  data.runs.push_back(pipe_run(2, 10, pipe_sums(80, 20, 0, 0), 0));
  data.runs.push_back(pipe_run(4, 7, pipe_sums(40, 30, 0, 0), 0));
  data.runs[0].communication_parts = {{"allgather in forward, layers.0 (group 0)", 10 * kPipeMs}};
  data.runs[1].communication_parts = {{"allgather in forward, layers.0 (group 0)", 20 * kPipeMs},
                                      {"reduce_scatter in backward, layers.0 (group 0)", 5 * kPipeMs}};
  const ScalabilityAnalysis a = scaleprof::analysis::analyse_scalability(data, {});
  const ScaleLoss& l = a.series[0].losses[0];
  const auto* comm = pipe_cause(l, "communication");
  ASSERT_NE(comm, nullptr);
  ASSERT_EQ(comm->details.size(), 2u);
  EXPECT_EQ(comm->details[0].name, "allgather in forward, layers.0 (group 0)");
  EXPECT_NEAR(comm->details[0].points, (7 * 0.9 * 2.0 / 7.0 - 10 * 0.09 / 2) / 7, 1e-9);
  EXPECT_NEAR(comm->details[1].seconds0, 0.0, 1e-12);  // none at 2 workers
  EXPECT_LE(comm->details[0].points + comm->details[1].points, comm->points + 1e-12);
  const auto sections = scaleprof::report::scalability_sections(a);
  const std::string json = scaleprof::report::render_sections_json(sections, a);
  EXPECT_NE(json.find("\"part\": \"allgather in forward, layers.0 (group 0)\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"fsdp_exposed_pts\": "), std::string::npos) << json;
  EXPECT_EQ(json.find("alltoall_imbalance_pts"), std::string::npos) << json;  // no all-to-all here
  // HTML: communication's bar in the loss chart names its parts in its tooltip.
  const std::string svg = scaleprof::report::loss_chart_svg(scaleprof::report::loss_chart_bars(a));
  EXPECT_NE(svg.find("; of it in the exclusive split: allgather in forward, layers.0 (group 0) 19.3 points"),
            std::string::npos)
      << svg;
}

}  // namespace

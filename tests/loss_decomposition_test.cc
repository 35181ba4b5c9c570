// Issue 20 item 4: every lost point goes to a named cause, from the per-rank step decomposition of each
// scale (analysis/scalability.h, basis "decomposition"); answers known by construction.
#include <gtest/gtest.h>
#include <simdjson.h>

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

// Parts of the decomposed steps of the viewed rank, in ms (they add up to the steps).
struct Parts {
  int64_t compute, communication, wait, data, optimizer, host, idle;
};

TraceSums decomposed(const Parts& p) {
  constexpr int64_t kMs = 1'000'000;
  TraceSums t;
  t.ranks = 1;
  t.decomposed_runs = 1;
  t.step_compute_ns = p.compute * kMs;
  t.step_communication_ns = p.communication * kMs;
  t.step_wait_ns = p.wait * kMs;
  t.step_data_loading_ns = p.data * kMs;
  t.step_optimizer_ns = p.optimizer * kMs;
  t.step_host_overhead_ns = p.host * kMs;
  t.step_idle_ns = p.idle * kMs;
  t.decomposed_step_ns = t.step_compute_ns + t.step_communication_ns + t.step_wait_ns + t.step_data_loading_ns +
                         t.step_optimizer_ns + t.step_host_overhead_ns + t.step_idle_ns;
  return t;
}

RunData run(int64_t workers, double seconds, const TraceSums& traces) {
  RunData r;
  r.layout = "scaleprof";
  r.name = "ddp-w" + std::to_string(workers);
  r.strategy = "ddp";
  r.workers = workers;
  r.nodes = 1;
  // Warm-up epoch skipped; 10 % of each kept epoch outside the steps.
  r.epochs = {{0, seconds * 2, seconds * 1.8}, {1, seconds, seconds * 0.9}, {2, seconds, seconds * 0.9}};
  r.traces = traces;
  return r;
}

const ScaleLoss& only_loss(const ScalabilityAnalysis& a) {
  EXPECT_EQ(a.series.size(), 1u);
  EXPECT_EQ(a.series[0].losses.size(), 1u);
  return a.series[0].losses[0];
}

const scaleprof::analysis::LossCause* cause(const ScaleLoss& l, const std::string& name) {
  for (const auto& c : l.causes) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// 1 worker: 10 s epochs, steps 100 ms = 80 compute + 10 data loading + 10 host overhead.
// 2 workers: 8 s epochs, steps 100 ms = 40 compute + 10 communication + 30 waiting for rank 1 +
// 10 data loading + 10 host overhead (so data loading and host overhead did not shrink).
// Efficiency 10 / (2 x 8) = 62.5 %; each cause's points = (t1 f1 - t0 f0 / 2) / t1 with f the share of
// the epoch (0.9 of it in the steps): compute (8 x 0.36 - 10 x 0.72 / 2) / 8 = -9 points (gives back),
// communication 9, waiting 27, data loading (0.72 - 0.45) / 8 = 3.375, host overhead 3.375, outside
// the steps (0.8 - 0.5) / 8 = 3.75; they add up to the 37.5 lost: nothing unattributed.
// `data` is the caller's: the analysis refers to its runs.
ScalabilityAnalysis straggler_case(ScalabilityData& data) {
  data.runs.push_back(run(1, 10, decomposed({80, 0, 0, 10, 0, 10, 0})));
  RunData two = run(2, 8, decomposed({40, 10, 30, 10, 0, 10, 0}));
  two.rank_waits = {{0, 5, 300, 0, 0}, {1, 5, 0, 300, 5}};
  two.operators = {{"aten::mm", 30'000'000}, {"aten::add", 10'000'000}};
  RunData& one = data.runs[0];
  one.operators = {{"aten::mm", 70'000'000}, {"aten::add", 10'000'000}};
  data.runs.push_back(std::move(two));
  return scaleprof::analysis::analyse_scalability(data, {});
}

TEST(LossDecomposition, EveryLostPointGoesToANamedCause) {
  ScalabilityData data;
  const ScalabilityAnalysis a = straggler_case(data);
  const ScaleLoss& l = only_loss(a);
  EXPECT_EQ(l.basis, LossBasis::kDecomposition);
  EXPECT_NEAR(l.lost, 0.375, 1e-12);
  const std::vector<std::string> names = {"outside the steps", "computation", "communication", "waiting for stragglers",
                                          "data loading",      "optimizer",   "host overhead", "idle"};
  ASSERT_EQ(l.causes.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(l.causes[i].name, names[i]);
  EXPECT_NEAR(cause(l, "outside the steps")->points, 0.0375, 1e-12);
  EXPECT_NEAR(cause(l, "computation")->points, -0.09, 1e-12);
  EXPECT_NEAR(cause(l, "communication")->points, 0.09, 1e-12);
  EXPECT_NEAR(cause(l, "waiting for stragglers")->points, 0.27, 1e-12);
  EXPECT_NEAR(cause(l, "data loading")->points, 0.03375, 1e-12);
  EXPECT_NEAR(cause(l, "host overhead")->points, 0.03375, 1e-12);
  EXPECT_NEAR(cause(l, "optimizer")->points, 0.0, 1e-12);
  EXPECT_NEAR(l.rest, 0.0, 1e-12);
  // Seconds per epoch at both scales: waiting 0 s at 1 worker, 8 x 0.9 x 0.3 = 2.16 s at 2.
  EXPECT_NEAR(cause(l, "waiting for stragglers")->seconds0, 0.0, 1e-12);
  EXPECT_NEAR(cause(l, "waiting for stragglers")->seconds1, 2.16, 1e-12);
  EXPECT_EQ(cause(l, "waiting for stragglers")->rank, 1);  // the rank the others waited for
  // Operators per epoch: aten::add 10 % of the steps at both scales: 0.9 s -> 0.72 s where 0.45 s
  // would have shrunk with the workers: +0.27 s; aten::mm 6.3 s -> 2.16 s, less than 3.15 s: not listed.
  const auto& ops = cause(l, "computation")->operators;
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].name, "aten::add");
  EXPECT_NEAR(ops[0].excess_s, 0.27, 1e-12);
  // The main cause is named with the rank.
  EXPECT_EQ(scaleprof::analysis::main_loss_cause(l).name, "waiting for stragglers");
}

TEST(LossDecomposition, SentencesChartAndJsonUseTheSameCauses) {
  ScalabilityData data;
  const ScalabilityAnalysis a = straggler_case(data);
  const std::vector<std::string> lines = scaleprof::report::loss_sentences(a.series[0]);
  std::string all;
  for (const std::string& s : lines) all += s + "\n";
  EXPECT_NE(all.find("waiting for stragglers growth accounts for 27.0 points"), std::string::npos) << all;
  EXPECT_NE(all.find("the others waited most for rank 1"), std::string::npos) << all;
  EXPECT_NE(all.find("computation shrank faster than the workers grew and gives back 9.0 points"), std::string::npos)
      << all;
  EXPECT_NE(all.find("optimizer and idle account for 0.0 points together (less than 0.5 each)"), std::string::npos)
      << all;
  EXPECT_NE(all.find("unattributed accounts for 0.0 points"), std::string::npos) << all;
  EXPECT_NE(all.find("is the growth of waiting for stragglers (rank 1)."), std::string::npos) << all;
  EXPECT_NE(all.find("(Basis: at each scale the profiled steps of one rank split into exclusive parts"),
            std::string::npos)
      << all;
  EXPECT_EQ(all.find("everything else"), std::string::npos) << all;

  const auto bars = scaleprof::report::loss_chart_bars(a);
  ASSERT_EQ(bars.size(), 1u);
  ASSERT_EQ(bars[0].causes.size(), 9u);  // the eight causes and the unattributed rest
  EXPECT_EQ(bars[0].causes.back().name, "unattributed");
  EXPECT_NEAR(bars[0].causes[3].points, 27.0, 1e-9);

  const auto sections = scaleprof::report::scalability_sections(a);
  const std::string json = scaleprof::report::render_sections_json(sections, a);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(json).get(doc)) << json;
  simdjson::dom::element row = doc["scaling_loss"].at(0);
  EXPECT_EQ(std::string_view(row["basis"]), "decomposition");
  EXPECT_NEAR(double(row["waiting_for_stragglers_pts"]), 27.0, 1e-9);
  EXPECT_NEAR(double(row["unattributed_pts"]), 0.0, 1e-9);
  EXPECT_NEAR(double(row["other_pts"]), 0.0, 1e-9);  // the old name, kept for readers of earlier JSON
  simdjson::dom::array causes = row["causes"].get_array();
  ASSERT_EQ(causes.size(), 9u);
  double sum = 0;
  for (simdjson::dom::element c : causes) sum += double(c["pts"]);
  EXPECT_NEAR(sum, 37.5, 1e-9);
  simdjson::dom::element wait = causes.at(3);
  EXPECT_EQ(std::string_view(wait["cause"]), "waiting for stragglers");
  EXPECT_NEAR(double(wait["seconds_per_epoch_from"]), 0.0, 1e-12);
  EXPECT_NEAR(double(wait["seconds_per_epoch_to"]), 2.16, 1e-12);
  EXPECT_EQ(std::string_view(wait["detail"]), "the others waited most for rank 1");
  EXPECT_TRUE(causes.at(8)["seconds_per_epoch_from"].is_null());
  // Text and CSV leave the nested list out and show the rest under its new name.
  const std::string csv = scaleprof::report::render_sections_csv(sections);
  EXPECT_EQ(csv.find("\"cause\""), std::string::npos);
  EXPECT_NE(csv.find("unattributed_pts"), std::string::npos);
  EXPECT_EQ(csv.find("other_pts"), std::string::npos);

  const auto main = scaleprof::report::main_causes(a);
  ASSERT_EQ(main.size(), 1u);
  EXPECT_EQ(main[0].cause, "waiting for stragglers (rank 1)");
  EXPECT_NEAR(main[0].unattributed_pts, 0.0, 1e-9);
}

// A side without step records: the time outside the steps is not separated, a sentence says where,
// and the in-step causes are still attributed (on the whole epoch).
TEST(LossDecomposition, ASideWithoutStepRecordsIsNamed) {
  ScalabilityData data;
  data.runs.push_back(run(1, 10, decomposed({90, 0, 0, 10, 0, 0, 0})));
  RunData two = run(2, 6, decomposed({45, 0, 0, 10, 0, 0, 0}));
  for (auto& e : two.epochs) e.steps_seconds = scaleprof::tables::kNaN;
  data.runs.push_back(std::move(two));
  const ScalabilityAnalysis a = scaleprof::analysis::analyse_scalability(data, {});
  const ScaleLoss& l = only_loss(a);
  EXPECT_EQ(l.basis, LossBasis::kDecomposition);
  EXPECT_EQ(cause(l, "outside the steps"), nullptr);
  // Data loading 1 s of 10 at 1 worker, 6 x 10 / 55 at 2: (1.0909 - 0.5) / 6 = 9.85 points.
  EXPECT_NEAR(cause(l, "data loading")->points, (6.0 * 10 / 55 - 0.5) / 6, 1e-12);
  std::string all;
  for (const std::string& s : scaleprof::report::loss_sentences(a.series[0])) all += s + "\n";
  EXPECT_NE(all.find("there are no step records (run.step(), steps.csv) at 2 workers, only at 1"), std::string::npos)
      << all;
}

// Computation per sample, where both scales know their samples per worker (strong scaling: 1000 then
// 500 per worker): 8 s of computation per epoch on 1 worker, 5.4 s on each of 2 where 4 s would have
// shrunk with the workers: 8 ms per sample became 10.8 ms, (5.4 - 4) / 6 = 23.3 points.
TEST(LossDecomposition, ComputationPerSample) {
  scaleprof::analysis::ScaleShares base;
  base.workers = 1;
  base.seconds = 10;
  base.shares_basis = LossBasis::kDecomposition;
  base.trace_shares = {{"computation", 0.8}, {"idle", 0.2}};
  base.samples_per_worker = 1000;
  scaleprof::analysis::ScaleShares at = base;
  at.workers = 2;
  at.seconds = 6;
  at.trace_shares = {{"computation", 0.9}, {"idle", 0.1}};
  at.samples_per_worker = 500;
  const ScaleLoss l = scaleprof::analysis::attribute_scale_loss(base, at);
  const auto* c = cause(l, "computation");
  ASSERT_NE(c, nullptr);
  EXPECT_NEAR(c->points, (5.4 - 4.0) / 6, 1e-12);
  EXPECT_NEAR(c->seconds_per_sample0, 0.008, 1e-15);
  EXPECT_NEAR(c->seconds_per_sample1, 0.0108, 1e-15);
  EXPECT_EQ(scaleprof::report::cause_detail(*c, l), "8 ms per sample on a worker at 1 worker, 10.8 ms at 2");
  // Unknown samples at one scale: no per-sample figures.
  at.samples_per_worker = scaleprof::tables::kNaN;
  EXPECT_TRUE(
      std::isnan(cause(scaleprof::analysis::attribute_scale_loss(base, at), "computation")->seconds_per_sample1));
}

// One worker count only: no loss, and a sentence says why.
TEST(LossDecomposition, OneScaleOnlySaysSo) {
  ScalabilityData data;
  data.runs.push_back(run(4, 10, decomposed({90, 0, 0, 10, 0, 0, 0})));
  const ScalabilityAnalysis a = scaleprof::analysis::analyse_scalability(data, {});
  ASSERT_EQ(a.series.size(), 1u);
  EXPECT_FALSE(a.series[0].has_loss());
  const std::vector<std::string> lines = scaleprof::report::loss_sentences(a.series[0]);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "ddp: measured at 4 workers only; where scaling is lost needs a second worker count.");
}

// Nine causes fit the chart: the legend wraps onto a second row inside the width.
TEST(LossDecomposition, ChartLegendWrapsNineCauses) {
  ScalabilityData data;
  const ScalabilityAnalysis a = straggler_case(data);
  const std::string svg = scaleprof::report::loss_chart_svg(scaleprof::report::loss_chart_bars(a), 1000);
  size_t rows_y30 = 0;
  for (size_t p = svg.find("y=\"30\" width=\"14\""); p != std::string::npos;
       p = svg.find("y=\"30\" width=\"14\"", p + 1))
    ++rows_y30;
  EXPECT_GT(rows_y30, 0u) << svg;  // a second legend row
  // No legend entry starts beyond the right edge.
  for (size_t p = svg.find("<rect x=\""); p != std::string::npos; p = svg.find("<rect x=\"", p + 1)) {
    EXPECT_LT(std::stod(svg.substr(p + 9)), 1000.0);
  }
}

}  // namespace

// Failures in plain sight (issue 21): a configuration whose every run failed is shown as FAILED, never
// measured from the epochs its failed runs finished; a failed run beside a completed one of the same
// configuration is left out; each strategy's baseline is its smallest scale that completed, and the
// sentence, the tables, the JSON, the plots and the exit code say so.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

#include "analysis/scalability.h"
#include "cli_harness.h"
#include "importers/run_data_reader.h"
#include "report/plot_specs.h"
#include "report/scalability_explanation.h"
#include "report/scalability_report.h"
#include "scalability_fixtures.h"

namespace scaleprof::report {
namespace {

using importers::read_scalability_data;
using importers::ScalabilityReadOptions;
using testing::find_group;
using testing::ScratchDir;

// A run whose training command failed with `exit_code` after finishing the epochs `seconds`.
void make_failed_run(const ScratchDir& root, const std::string& folder, const std::string& strategy, int workers,
                     int exit_code, const std::vector<double>& seconds) {
  root.write("exp/" + folder + "/run.json",
             fmt::format(R"({{"schema_version": 1, "experiment": "exp", "run": "{}", "strategy": "{}", )"
                         R"("world_size": {}, "nodes": 1, "status": "failed", "exit_status": {}}})",
                         folder, strategy, workers, exit_code));
  for (int r = 0; r < workers; ++r) {
    const std::string rdir = fmt::format("exp/{}/rank-{:05d}", folder, r);
    root.write(rdir + "/rank.json", testing::rank_json(r, workers, "node01", strategy, "failed"));
    root.write(rdir + "/epochs.csv", testing::epochs_csv(seconds));
  }
}

// ddp: 1 worker failed (exit 1, SLURM job 4711, whose log `scaleprof slurm` recorded) after three
// epochs of 10, 9, 9 s; 2 and 4 workers completed. gloo: at 1 worker one run completed (10, 9, 9 s)
// and one failed (exit 137) after 20 s epochs.
void build(const ScratchDir& root) {
  using testing::make_run;
  make_failed_run(root, "ddp-n1-r1-slurm4711", "ddp", 1, 1, {10, 9, 9});
  root.write("exp/job-logs.txt", "4711 /logs/ddp-4711.err\n4712 /logs/ddp-4712.err\n");
  make_run(root, "exp", "ddp-w2", "ddp-w2", "ddp", 2, {{6, 5, 5}, {6, 5, 5}});
  make_run(root, "exp", "ddp-w4", "ddp-w4", "ddp", 4, {{4, 3, 3}, {4, 3, 3}, {4, 3, 3}, {4, 3, 3}});
  make_run(root, "exp", "gloo-w1", "gloo-w1", "gloo", 1, {{10, 9, 9}});
  make_failed_run(root, "gloo-w1-b", "gloo", 1, 137, {20, 20, 20});
  make_run(root, "exp", "gloo-w2", "gloo-w2", "gloo", 2, {{6, 5, 5}, {6, 5, 5}});
}

TEST(ScalabilityFailed, FailedSmallestScaleIsShownAndTheBaselineIsTheNextCompletedOne) {
  ScratchDir root("report-failed");
  build(root);
  ScalabilityReadOptions read;
  read.root = root.path();
  auto loaded = read_scalability_data(read);
  ASSERT_TRUE(loaded.ok());
  const ScalabilityData data = std::move(loaded).value();
  const ScalabilityAnalysis a = analyse_scalability(data, ScalabilityOptions{});

  // ddp at 1 worker: FAILED, no figures from its 2 finished epochs (after warm-up) of 9 s.
  const ScaleGroup* d1 = find_group(a, "ddp", 1);
  ASSERT_NE(d1, nullptr);
  EXPECT_TRUE(d1->failed);
  EXPECT_TRUE(d1->runs.empty());
  ASSERT_EQ(d1->failed_runs.size(), 1u);
  EXPECT_EQ(d1->epoch.count, 0);
  // ddp's baseline is 2 workers (mean 5 s): 4 workers (mean 3 s) are 5/3 faster, efficiency 5/3/2.
  const ScaleGroup* d2 = find_group(a, "ddp", 2);
  const ScaleGroup* d4 = find_group(a, "ddp", 4);
  ASSERT_NE(d2, nullptr);
  ASSERT_NE(d4, nullptr);
  EXPECT_FALSE(d2->failed);
  EXPECT_DOUBLE_EQ(d2->scaling.speedup, 1.0);
  EXPECT_DOUBLE_EQ(d2->scaling.efficiency, 1.0);
  EXPECT_DOUBLE_EQ(d4->scaling.speedup, 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(d4->scaling.efficiency, 5.0 / 3.0 / 2.0);
  EXPECT_EQ(analysis::baseline_workers(a, "ddp"), 2);
  // gloo at 1 worker: the completed run wins, the failed one's 20 s epochs are not pooled.
  const ScaleGroup* g1 = find_group(a, "gloo", 1);
  ASSERT_NE(g1, nullptr);
  EXPECT_FALSE(g1->failed);
  EXPECT_EQ(g1->runs.size(), 1u);
  EXPECT_EQ(g1->failed_runs.size(), 1u);
  EXPECT_DOUBLE_EQ(g1->epoch.mean, 9.0);
  EXPECT_DOUBLE_EQ(find_group(a, "gloo", 2)->scaling.speedup, 9.0 / 5.0);
  // The loss attribution starts at ddp's baseline too.
  for (const SeriesResult& s : a.series) {
    ASSERT_FALSE(s.losses.empty()) << s.series;
    EXPECT_EQ(s.losses.front().n0, s.series == "ddp" ? 2 : 1) << s.series;
  }
  // The failed configuration is an error (exit code 3); the failed run left out is a warning.
  const std::string ddp_w1 = root / "exp/ddp-n1-r1-slurm4711";
  const std::string gloo_b = root / "exp/gloo-w1-b";
  ASSERT_EQ(a.errors.size(), 1u);
  EXPECT_EQ(a.errors[0], "ddp at 1 worker(s): FAILED: every run of it failed: " + ddp_w1 +
                             " (status failed, exit 1, log /logs/ddp-4711.err); its finished epochs are no measurement "
                             "of it, so it has no "
                             "figures and the strategy's baseline is its smallest scale that completed");
  bool warned = false;
  for (const std::string& w : texts(a.warnings)) {
    warned |= w == gloo_b +
                       ": run failed (status failed, exit 137); left out: gloo at 1 worker(s) has 1 run(s) that "
                       "did not fail, which are used";
    EXPECT_EQ(w.find("finished epoch(s) are used"), std::string::npos) << w;
  }
  EXPECT_TRUE(warned);

  // The sentence says which smaller scale failed, with its exit code.
  EXPECT_EQ(failure_sentences(a), std::vector<std::string>{"ddp: baseline is 2 workers, its smallest scale that "
                                                           "completed; 1 worker failed (exit 1, log "
                                                           "/logs/ddp-4711.err)."});

  // JSON: the FAILED rows with status, exit code and baseline.
  const std::vector<ReportSection> sections = scalability_sections(a);
  const std::string json = render_sections_json(sections, a);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(json).get(doc)) << json;
  simdjson::dom::element e0 = doc["epoch_time"].at(0);
  EXPECT_EQ(std::string_view(e0["strategy"]), "ddp");
  EXPECT_EQ(int64_t(e0["workers"]), 1);
  EXPECT_EQ(std::string_view(e0["status"]), "FAILED");
  EXPECT_EQ(int64_t(e0["exit_code"]), 1);
  EXPECT_EQ(std::string_view(e0["log"]), "/logs/ddp-4711.err");
  EXPECT_TRUE(e0["mean_s"].is_null());
  EXPECT_EQ(std::string_view(doc["epoch_time"].at(1)["status"]), "measured");
  simdjson::dom::element s0 = doc["scaling"].at(0);
  EXPECT_EQ(std::string_view(s0["status"]), "FAILED");
  EXPECT_TRUE(s0["efficiency_pct"].is_null());
  EXPECT_EQ(int64_t(s0["baseline_workers"]), 2);
  simdjson::dom::element s1 = doc["scaling"].at(1);
  EXPECT_EQ(int64_t(s1["workers"]), 2);
  EXPECT_DOUBLE_EQ(double(s1["efficiency_pct"]), 100.0);
  EXPECT_EQ(int64_t(s1["baseline_workers"]), 2);
  EXPECT_EQ(std::string_view(doc["explanation"].at(0)), failure_sentences(a)[0]);
  // Runs read: every run's exit code.
  for (simdjson::dom::element run : doc["runs"].get_array()) {
    const std::string_view name = run["run"];
    const int64_t expected = name == "ddp-n1-r1-slurm4711" ? 1 : name == "gloo-w1-b" ? 137 : 0;
    EXPECT_EQ(int64_t(run["exit_code"]), expected) << name;
    EXPECT_EQ(run["log"].is_null(), name != "ddp-n1-r1-slurm4711") << name;
  }
  // Console: the FAILED row, and the sentence under the heading.
  const std::string text = render_sections_text(sections, RenderOptions{});
  EXPECT_NE(text.find(failure_sentences(a)[0]), std::string::npos) << text;
  EXPECT_NE(text.find("FAILED"), std::string::npos);
  // Plots: the failed configuration is a note on the epoch, speedup and efficiency plots, not a point.
  int noted = 0;
  for (const PlotSpec& p : scalability_plot_specs(a)) {
    if (p.note.empty()) continue;
    EXPECT_EQ(p.note, "FAILED, not plotted: ddp at 1 worker") << p.stem;
    for (const PlotSeries& s : p.series) {
      if (s.name == "ddp") {
        EXPECT_EQ(s.x.front(), 2.0) << p.stem;
      }
    }
    ++noted;
  }
  EXPECT_EQ(noted, 3);
}

// Nothing failed: no status, exit code or baseline column, and no sentence (outputs as before).
TEST(ScalabilityFailed, NothingFailedAddsNothing) {
  ScratchDir root("report-not-failed");
  testing::make_run(root, "exp", "ddp-w1", "ddp-w1", "ddp", 1, {{10, 9, 9}});
  testing::make_run(root, "exp", "ddp-w2", "ddp-w2", "ddp", 2, {{6, 5, 5}, {6, 5, 5}});
  ScalabilityReadOptions read;
  read.root = root.path();
  auto loaded = read_scalability_data(read);
  ASSERT_TRUE(loaded.ok());
  const ScalabilityData data = std::move(loaded).value();
  const ScalabilityAnalysis a = analyse_scalability(data, ScalabilityOptions{});
  EXPECT_FALSE(a.any_failed_run);
  EXPECT_TRUE(failure_sentences(a).empty());
  const std::string csv = render_sections_csv(scalability_sections(a));
  EXPECT_EQ(csv.find("status,exit_code"), std::string::npos);
  EXPECT_EQ(csv.find("baseline_workers"), std::string::npos);
  EXPECT_NE(csv.find("# scaling\nstrategy,workers,nodes,mean_s,speedup,ideal_speedup,efficiency_pct\n"),
            std::string::npos)
      << csv;
}

// `scaleprof report` on run directories written here: exit code 3, the FAILED row in every form.
TEST(ScalabilityFailed, ReportCliShowsTheFailedConfigurationAndExitsPartial) {
  ScratchDir root("report-failed-cli");
  build(root);
  const testing::CliRun json = testing::run_cli("report --no-plots --format json --root " + root.path());
  EXPECT_EQ(json.exit_code, 3) << json.err;
  EXPECT_NE(json.err.find("error: ddp at 1 worker(s): FAILED: every run of it failed: " +
                          (root / "exp/ddp-n1-r1-slurm4711") + " (status failed, exit 1, log /logs/ddp-4711.err)"),
            std::string::npos)
      << json.err;
  EXPECT_NE(json.err.find("report is partial: 1 input problem(s) (exit code 3)"), std::string::npos) << json.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(json.out).get(doc)) << json.out;
  simdjson::dom::element s0 = doc["scaling"].at(0);
  EXPECT_EQ(std::string_view(s0["strategy"]), "ddp");
  EXPECT_EQ(int64_t(s0["workers"]), 1);
  EXPECT_EQ(std::string_view(s0["status"]), "FAILED");
  EXPECT_EQ(int64_t(s0["baseline_workers"]), 2);
  EXPECT_EQ(int64_t(doc["epoch_time"].at(0)["exit_code"]), 1);
  const testing::CliRun csv = testing::run_cli("report --no-plots --format csv --root " + root.path());
  EXPECT_EQ(csv.exit_code, 3);
  EXPECT_NE(csv.out.find("\nddp,1,1,1,0,,,,,,FAILED,1,/logs/ddp-4711.err\n"), std::string::npos) << csv.out;
}

}  // namespace
}  // namespace scaleprof::report

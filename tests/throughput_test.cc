// Throughput and weak vs. strong scaling in the scalability report (analysis/throughput.h,
// report/throughput_report.h), on run directories made by hand: every figure is worked out in the
// comments from the samples and epoch times written.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <string>
#include <vector>

#include "analysis/scalability.h"
#include "cli_harness.h"
#include "importers/run_data_reader.h"
#include "report/plot_specs.h"
#include "report/scalability_report.h"
#include "report/throughput_report.h"
#include "scalability_fixtures.h"

namespace scaleprof::report {
namespace {

using importers::read_scalability_data;
using importers::ScalabilityReadOptions;
using testing::ScratchDir;

// epochs.csv: epoch i lasts seconds[i] and gives samples[i] ("" leaves the field empty).
std::string epochs_csv(const std::vector<double>& seconds, const std::vector<std::string>& samples) {
  std::string out = "epoch,start_unix_ns,end_unix_ns,duration_s,samples\n";
  for (size_t i = 0; i < seconds.size(); ++i) {
    out += fmt::format("{},{},{},{},{}\n", i, 1000 + i, 2000 + i, seconds[i], samples[i]);
  }
  return out;
}

// A run of `world` ranks; every rank's epochs last `seconds` and give `samples` each.
void make_run(const ScratchDir& root, const std::string& folder, const std::string& strategy, int world,
              const std::vector<double>& seconds, const std::vector<std::string>& samples) {
  const std::string dir = "exp/" + folder;
  root.write(dir + "/run.json", testing::run_json("exp", folder, strategy, world, 1));
  for (int r = 0; r < world; ++r) {
    const std::string rdir = fmt::format("{}/rank-{:05d}", dir, r);
    root.write(rdir + "/rank.json", testing::rank_json(r, world, "node01", strategy));
    root.write(rdir + "/epochs.csv", epochs_csv(seconds, samples));
  }
}

ScalabilityAnalysis analyse(const ScratchDir& root, ScalabilityData* data) {
  ScalabilityReadOptions read;
  read.root = root.path();
  auto loaded = read_scalability_data(read);
  EXPECT_TRUE(loaded.ok());
  *data = std::move(loaded).value();
  return analyse_scalability(*data, ScalabilityOptions{});
}

const ScaleGroup& group(const ScalabilityAnalysis& a, const std::string& series, int64_t workers) {
  for (const ScaleGroup& g : a.groups) {
    if (g.series == series && g.workers == workers) return g;
  }
  ADD_FAILURE() << series << " at " << workers;
  return a.groups.front();
}

const analysis::SeriesThroughput& series(const ScalabilityAnalysis& a, const std::string& name) {
  for (const analysis::SeriesThroughput& s : a.throughput) {
    if (s.series == name) return s;
  }
  ADD_FAILURE() << name;
  return a.throughput.front();
}

bool contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines) {
    if (l.find(part) != std::string::npos) return true;
  }
  return false;
}

bool contains(const std::vector<Diagnostic>& lines, const std::string& part) {
  return contains(texts(lines), part);
}

const Table* find_table(const std::vector<ReportSection>& sections, const std::string& key) {
  for (const ReportSection& s : sections) {
    for (size_t i = 0; i < s.tables.size(); ++i) {
      if (s.table_keys[i] == key) return &s.tables[i];
    }
  }
  return nullptr;
}

// weak: 640 samples per worker at 1 and 2 workers; epochs (warm-up first) 20, 9, 9 and 20, 10, 10.
// strong: 1,280 samples per epoch at both; 20, 8, 8 and 20, 5, 5.
void build_weak_and_strong(const ScratchDir& root) {
  make_run(root, "weak-w1", "weak", 1, {20, 9, 9}, {"640", "640", "640"});
  make_run(root, "weak-w2", "weak", 2, {20, 10, 10}, {"640", "640", "640"});
  make_run(root, "strong-w1", "strong", 1, {20, 8, 8}, {"1280", "1280", "1280"});
  make_run(root, "strong-w2", "strong", 2, {20, 5, 5}, {"640", "640", "640"});
}

TEST(Throughput, WeakAndStrongScalingFromSamples) {
  ScratchDir root("throughput-modes");
  build_weak_and_strong(root);
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root, &data);
  ASSERT_TRUE(a.errors.empty()) << a.errors.front();
  // Weak, 1 worker: 2 kept epochs of 640 samples in 9 s: 71.11 samples/s.
  const ScaleGroup& w1 = group(a, "weak", 1);
  EXPECT_EQ(w1.throughput.epochs, 2);
  EXPECT_DOUBLE_EQ(w1.throughput.samples_per_epoch, 640.0);
  EXPECT_DOUBLE_EQ(w1.throughput.samples_per_worker, 640.0);
  EXPECT_DOUBLE_EQ(w1.throughput.samples_per_s, 1280.0 / 18.0);
  // Weak, 2 workers: 1,280 samples per epoch (both ranks) in 10 s: 128/s, 64/s per worker; ideal 2 x 71.11.
  const ScaleGroup& w2 = group(a, "weak", 2);
  EXPECT_DOUBLE_EQ(w2.throughput.samples_per_epoch, 1280.0);
  EXPECT_DOUBLE_EQ(w2.throughput.samples_per_worker, 640.0);
  EXPECT_DOUBLE_EQ(w2.throughput.samples_per_s, 128.0);
  EXPECT_DOUBLE_EQ(w2.throughput.samples_per_s_per_worker, 64.0);
  EXPECT_DOUBLE_EQ(w2.throughput.ideal_samples_per_s, 2 * 1280.0 / 18.0);
  // Weak-scaling efficiency T(1)/T(2) = 9/10; the strong-scaling one stays 9/(10 x 2).
  EXPECT_EQ(series(a, "weak").mode, analysis::ScalingMode::kWeak);
  EXPECT_DOUBLE_EQ(w2.throughput.weak_efficiency, 0.9);
  EXPECT_DOUBLE_EQ(w1.throughput.weak_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(w2.scaling.efficiency, 0.45);
  // Strong: 1,280 samples per epoch at both scales: 160/s and 256/s; no weak efficiency.
  EXPECT_EQ(series(a, "strong").mode, analysis::ScalingMode::kStrong);
  const ScaleGroup& s2 = group(a, "strong", 2);
  EXPECT_DOUBLE_EQ(group(a, "strong", 1).throughput.samples_per_s, 160.0);
  EXPECT_DOUBLE_EQ(s2.throughput.samples_per_s, 256.0);
  EXPECT_DOUBLE_EQ(s2.throughput.samples_per_worker, 640.0);
  EXPECT_TRUE(std::isnan(s2.throughput.weak_efficiency));
  EXPECT_DOUBLE_EQ(s2.scaling.efficiency, 0.8);

  const std::vector<std::string> sentences = throughput_sentences(a);
  ASSERT_EQ(sentences.size(), 2u);
  EXPECT_TRUE(contains(sentences, "strong: strong scaling (the same samples per epoch at every scale, within 5%"))
      << sentences[0];
  EXPECT_TRUE(contains(sentences, "parallel efficiency T(1)·1/(T(2)·2) = 80.0%")) << sentences[0];
  EXPECT_TRUE(contains(sentences,
                       "weak: weak scaling (the same samples per worker at every scale, within 5%: 640 "
                       "per epoch at 1 worker, 640 at 2)"))
      << sentences[1];
  EXPECT_TRUE(contains(sentences,
                       "1.80x where 2.00x is ideal: weak-scaling efficiency T(1)/T(2) = 9.00 s / 10.00 s "
                       "= 90.0%"))
      << sentences[1];

  // The tables: scaling gets the mode and the weak efficiency; the throughput table every figure.
  const std::vector<ReportSection> sections = scalability_sections(a);
  const Table* scaling = find_table(sections, "scaling");
  ASSERT_NE(scaling, nullptr);
  ASSERT_EQ(scaling->columns.size(), 9u);
  EXPECT_EQ(scaling->columns[7].key, "scaling_mode");
  EXPECT_EQ(scaling->columns[8].key, "weak_efficiency_pct");
  for (const auto& row : scaling->rows) {
    ASSERT_EQ(row.size(), 9u);
    const std::string& strategy = std::get<std::string>(row[0].value);
    EXPECT_EQ(std::get<std::string>(row[7].value), strategy);  // the modes are named like the strategies
    if (strategy == "weak" && std::get<int64_t>(row[1].value) == 2) {
      EXPECT_DOUBLE_EQ(std::get<double>(row[8].value), 90.0);
    }
    if (strategy == "strong") {
      EXPECT_TRUE(std::holds_alternative<std::monostate>(row[8].value));
    }
  }
  const Table* tp = find_table(sections, "throughput");
  ASSERT_NE(tp, nullptr);
  ASSERT_EQ(tp->rows.size(), 4u);
  EXPECT_EQ(tp->columns[6].key, "throughput_sps");
  EXPECT_EQ(std::get<std::string>(tp->rows[3][0].value), "weak");
  EXPECT_DOUBLE_EQ(std::get<double>(tp->rows[3][6].value), 128.0);
  EXPECT_DOUBLE_EQ(std::get<double>(tp->rows[3][7].value), 64.0);
  EXPECT_EQ(std::get<std::string>(tp->rows[3][9].value), "weak");

  // The plot: measured and ideal per strategy.
  const std::vector<PlotSpec> specs = scalability_plot_specs(a);
  const PlotSpec* plot = nullptr;
  for (const PlotSpec& p : specs) {
    if (p.stem == "throughput") plot = &p;
  }
  ASSERT_NE(plot, nullptr);
  ASSERT_EQ(plot->series.size(), 4u);
  EXPECT_EQ(plot->series[2].name, "weak");
  EXPECT_EQ(plot->series[2].y, (std::vector<double>{1280.0 / 18.0, 128.0}));
  EXPECT_EQ(plot->series[3].name, "weak (ideal)");
  EXPECT_TRUE(plot->series[3].dashed);
  EXPECT_DOUBLE_EQ(plot->series[3].y[1], 2 * 1280.0 / 18.0);
}

TEST(Throughput, NeitherOneScaleAndMissingSamplesAreSaid) {
  ScratchDir root("throughput-bad");
  // neither: 640 per worker at 1, 960 per worker (1,920 per epoch) at 2: both change by more than 5 %.
  make_run(root, "mixed-w1", "mixed", 1, {20, 8, 8}, {"640", "640", "640"});
  make_run(root, "mixed-w2", "mixed", 2, {20, 6, 6}, {"960", "960", "960"});
  // One worker count only.
  make_run(root, "solo-w2", "solo", 2, {20, 4, 4}, {"100", "100", "100"});
  // A side without samples: throughput at 1 worker only.
  make_run(root, "half-w1", "half", 1, {20, 5, 5}, {"500", "500", "500"});
  make_run(root, "half-w2", "half", 2, {20, 3, 3}, {"", "", ""});
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root, &data);
  EXPECT_EQ(series(a, "mixed").mode, analysis::ScalingMode::kNeither);
  EXPECT_DOUBLE_EQ(group(a, "mixed", 2).throughput.samples_per_s, 320.0);  // 1,920 / 6
  EXPECT_EQ(series(a, "solo").mode, analysis::ScalingMode::kUnknown);
  EXPECT_EQ(series(a, "solo").why, "one worker count");
  EXPECT_DOUBLE_EQ(group(a, "solo", 2).throughput.samples_per_s, 50.0);  // 200 / 4
  EXPECT_EQ(series(a, "half").mode, analysis::ScalingMode::kUnknown);
  EXPECT_EQ(series(a, "half").why, "no samples at 2 workers");
  EXPECT_DOUBLE_EQ(group(a, "half", 1).throughput.samples_per_s, 100.0);
  EXPECT_EQ(group(a, "half", 2).throughput.epochs, 0);
  EXPECT_TRUE(std::isnan(group(a, "half", 2).throughput.samples_per_s));
  // The rest of the report is still there: half's epoch times and strong-scaling efficiency (5 / (3 x 2)).
  EXPECT_NEAR(group(a, "half", 2).scaling.efficiency, 5.0 / 6.0, 1e-12);
  EXPECT_TRUE(contains(a.warnings, "half at 2 workers: no epoch has samples from every rank"));
  const std::vector<std::string> sentences = throughput_sentences(a);
  EXPECT_TRUE(contains(sentences,
                       "half: weak or strong scaling cannot be told (no samples at 2 workers); "
                       "throughput 100.0 samples/s at 1 worker."));
  EXPECT_TRUE(contains(sentences,
                       "solo: weak or strong scaling cannot be told (one worker count); throughput 50.0 "
                       "samples/s at 2 workers."));
  EXPECT_TRUE(contains(sentences,
                       "mixed: neither weak nor strong scaling: samples per worker went from 640 to 960 "
                       "and samples per epoch from 640 to 1920 between 1 worker and 2"));
}

TEST(Throughput, SamplesFromStepsAndOnlyFromEveryRank) {
  ScratchDir root("throughput-steps");
  // Rank 0 and 1 give no epoch samples but step samples (3 x 32 per epoch); epochs 20, 6, 6.
  make_run(root, "steps-w2", "steps", 2, {20, 6, 6}, {"", "", ""});
  for (int r = 0; r < 2; ++r) {
    std::string steps = "epoch,step,start_unix_ns,duration_s,samples\n";
    for (int e = 0; e < 3; ++e) {
      for (int s = 0; s < 3; ++s) steps += fmt::format("{},{},{},1.0,32\n", e, s, 1000 + s);
    }
    root.write(fmt::format("exp/steps-w2/rank-{:05d}/steps.csv", r), steps);
  }
  // A run one of whose ranks gives no samples: no epoch of it has every rank's samples.
  make_run(root, "partial-w2", "partial", 2, {20, 6, 6}, {"100", "100", "100"});
  root.write("exp/partial-w2/rank-00001/epochs.csv", epochs_csv({20, 6, 6}, {"", "", ""}));
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root, &data);
  // 2 ranks x 96 samples per epoch in 6 s: 32 samples/s.
  EXPECT_DOUBLE_EQ(group(a, "steps", 2).throughput.samples_per_epoch, 192.0);
  EXPECT_DOUBLE_EQ(group(a, "steps", 2).throughput.samples_per_s, 32.0);
  EXPECT_EQ(group(a, "partial", 2).throughput.epochs, 0);
  EXPECT_TRUE(contains(a.warnings, "partial at 2 workers: no epoch has samples from every rank"));
}

TEST(Throughput, DataWithoutSamplesKeepsTheReportItHad) {
  ScratchDir root("throughput-none");
  make_run(root, "a-w1", "ddp", 1, {20, 8, 8}, {"", "", ""});
  make_run(root, "a-w2", "ddp", 2, {20, 5, 5}, {"", "", ""});
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root, &data);
  EXPECT_FALSE(analysis::has_throughput(a));
  EXPECT_TRUE(a.throughput.empty());
  const std::vector<ReportSection> sections = scalability_sections(a);
  EXPECT_EQ(find_table(sections, "throughput"), nullptr);
  EXPECT_EQ(find_table(sections, "scaling")->columns.size(), 7u);
  EXPECT_TRUE(throughput_sentences(a).empty());
  for (const PlotSpec& p : scalability_plot_specs(a)) EXPECT_NE(p.stem, "throughput");
  EXPECT_FALSE(contains(a.warnings, "samples"));
}

TEST(ThroughputCli, JsonCsvAndTableColumns) {
  ScratchDir root("throughput-cli");
  build_weak_and_strong(root);
  testing::CliRun r = testing::run_cli("report --no-plots --format json --root " + root.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc)) << r.out;
  bool weak_seen = false;
  for (simdjson::dom::element row : doc["throughput"].get_array()) {
    if (std::string_view(row["strategy"]) != "weak" || int64_t(row["workers"]) != 2) continue;
    weak_seen = true;
    EXPECT_EQ(int64_t(row["epochs"]), 2);
    EXPECT_DOUBLE_EQ(double(row["samples_per_epoch"]), 1280.0);
    EXPECT_DOUBLE_EQ(double(row["samples_per_worker"]), 640.0);
    EXPECT_DOUBLE_EQ(double(row["throughput_sps"]), 128.0);
    EXPECT_DOUBLE_EQ(double(row["throughput_per_worker_sps"]), 64.0);
    EXPECT_NEAR(double(row["ideal_throughput_sps"]), 2 * 1280.0 / 18.0, 1e-3);
    EXPECT_EQ(std::string_view(row["scaling_mode"]), "weak");
  }
  EXPECT_TRUE(weak_seen);
  for (simdjson::dom::element row : doc["scaling"].get_array()) {
    const std::string_view strategy = row["strategy"];
    EXPECT_EQ(std::string_view(row["scaling_mode"]), strategy);
    if (strategy == "weak" && int64_t(row["workers"]) == 2) {
      EXPECT_DOUBLE_EQ(double(row["weak_efficiency_pct"]), 90.0);
      EXPECT_DOUBLE_EQ(double(row["efficiency_pct"]), 45.0);
    }
    if (strategy == "strong") {
      EXPECT_TRUE(row["weak_efficiency_pct"].is_null());
    }
  }
  bool said = false;
  for (simdjson::dom::element line : doc["explanation"].get_array()) {
    said |= std::string_view(line).find("weak-scaling efficiency T(1)/T(2)") != std::string_view::npos;
  }
  EXPECT_TRUE(said);

  testing::CliRun csv = testing::run_cli("report --no-plots --format csv --root " + root.path());
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("# scaling\nstrategy,workers,nodes,mean_s,speedup,ideal_speedup,efficiency_pct,scaling_mode,"
                         "weak_efficiency_pct\n"),
            std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find("# throughput\nstrategy,workers,nodes,epochs,samples_per_epoch,samples_per_worker,"
                         "throughput_sps,throughput_per_worker_sps,ideal_throughput_sps,scaling_mode\n"),
            std::string::npos)
      << csv.out;

  // --wide: every column with its title on one line (by default long titles wrap to fit 120 columns).
  testing::CliRun table = testing::run_cli("report --no-plots --wide --root " + root.path());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("######## Throughput Report ########"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Throughput (samples/s)"), std::string::npos);
  EXPECT_NE(table.out.find("Weak-scaling efficiency (%)"), std::string::npos);

  // The HTML page: the section and its table (the plot needs gnuplot, as every plot does).
  const std::string html = root / "report.html";
  testing::CliRun page = testing::run_cli("report --no-plots --html " + html + " --root " + root.path());
  ASSERT_EQ(page.exit_code, 0) << page.err;
  const std::string text = testing::slurp(html);
  EXPECT_NE(text.find("<section id=\"section-throughput\">"), std::string::npos);
  EXPECT_NE(text.find("id=\"table-throughput\""), std::string::npos);
  EXPECT_NE(text.find("weak-scaling efficiency T(1)/T(2)"), std::string::npos);
}

}  // namespace
}  // namespace scaleprof::report

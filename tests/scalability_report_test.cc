// The scalability report on hand-made inputs: every number checked against values worked out by
// hand (in the comments), for scaleprof run directories and for itwinai's CSV layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "analysis/scalability.h"
#include "engine/run_trace_metrics.h"
#include "importers/csv.h"
#include "importers/run_data_reader.h"
#include "report/plot_specs.h"
#include "report/scalability_explanation.h"
#include "report/scalability_report.h"
#include "scalability_fixtures.h"

namespace scaleprof::report {
namespace {

using engine::add_trace_metrics;
using importers::CsvFile;
using importers::parse_csv;
using importers::read_scalability_data;
using importers::ScalabilityReadOptions;
using testing::find_group;
using testing::ScratchDir;

const SeriesResult* find_series(const ScalabilityAnalysis& a, const std::string& series) {
  for (const SeriesResult& s : a.series) {
    if (s.series == series) return &s;
  }
  return nullptr;
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

// The number in column `key` of the row of (strategy, workers) in the table named `table`.
double table_value(const std::vector<ReportSection>& sections, const std::string& table, const std::string& strategy,
                   int64_t workers, const std::string& key) {
  for (const ReportSection& s : sections) {
    for (size_t i = 0; i < s.tables.size(); ++i) {
      if (s.table_keys[i] != table) continue;
      const Table& t = s.tables[i];
      size_t col = t.columns.size();
      for (size_t c = 0; c < t.columns.size(); ++c) {
        if (t.columns[c].key == key) col = c;
      }
      EXPECT_LT(col, t.columns.size()) << key;
      for (const auto& row : t.rows) {
        if (std::get<std::string>(row[0].value) == strategy && std::get<int64_t>(row[1].value) == workers &&
            col < row.size() && std::holds_alternative<double>(row[col].value)) {
          return std::get<double>(row[col].value);
        }
      }
    }
  }
  ADD_FAILURE() << "no " << table << " row for " << strategy << " at " << workers;
  return tables::kNaN;
}

// ddp at 1 (two repetitions), 2 and 4 workers, gloo at 2; GPU samples and traces on some runs.
void build_resnet(const ScratchDir& root) {
  using testing::make_run;
  // 1 worker, run a: epochs 10 (warm-up), 8, 9. GPU 0: 100, 200, 300 W at 0, 1, 2 s -> 150 + 250 = 400 J.
  const std::string a = make_run(root, "resnet", "ddp-w1-a", "ddp-w1-a", "ddp", 1, {{10, 8, 9}});
  root.write("resnet/ddp-w1-a/rank-00000/gpu.csv",
             "time_unix_ns,device,utilization_pct,power_w,memory_used_bytes,energy_j\n"
             "1000000000,0,50,100,1,\n2000000000,0,70,200,1,\n3000000000,0,90,300,1,\n");
  // Trace: 80 us computation, no gap, 20 us communication: 20% communication, 0% idle.
  root.write("resnet/ddp-w1-a/rank-00000/traces/host.pt.trace.json", testing::tiny_trace(0, 80, 0, 20));
  // 1 worker, run b: epochs 12 (warm-up), 10.
  make_run(root, "resnet", "ddp-w1-b", "ddp-w1-b", "ddp", 1, {{12, 10}});
  // 2 workers: per-epoch maximum over ranks = 6, 5, 5 -> kept 5, 5.
  make_run(root, "resnet", "ddp-w2", "ddp-w2", "ddp", 2, {{6, 5, 4.5}, {5.5, 4, 5}});
  // Node-level samples (preferred): device 0 has the counter (250 J), device 1 lacks it on one
  // sample -> trapezoid over 60 W for 2 s = 120 J. 370 J in all; utilization mean of 10..60 = 35.
  root.write("resnet/ddp-w2/node-node01/gpu.csv",
             "time_unix_ns,device,utilization_pct,power_w,memory_used_bytes,energy_j\n"
             "0,0,10,10,1,0\n0,1,40,60,1,0\n1000000000,0,20,10,1,100\n1000000000,1,50,60,1,50\n"
             "2000000000,0,30,10,1,250\n2000000000,1,60,60,1,\n");
  // Rank samples of the same run are ignored when the node's exist.
  root.write("resnet/ddp-w2/rank-00000/gpu.csv",
             "time_unix_ns,device,utilization_pct,power_w,memory_used_bytes,energy_j\n0,0,99,9999,1,\n"
             "1000000000,0,99,9999,1,\n");
  // 4 workers: maxima 4, 3, 3 -> kept 3, 3. Trace: 70 us computation, 10 us idle, 20 us communication.
  make_run(root, "resnet", "ddp-w4", "ddp-w4", "ddp", 4,
           {{3.9, 2.9, 2.8}, {3.9, 2.9, 2.8}, {3.9, 2.9, 2.8}, {4, 3, 3}});
  root.write("resnet/ddp-w4/rank-00000/traces/host.pt.trace.json", testing::tiny_trace(0, 70, 10, 20));
  // gloo at 2 workers: kept 6, 6.
  make_run(root, "resnet", "gloo-w2", "gloo-w2", "gloo", 2, {{7, 6, 6}, {7, 6, 6}});
}

ScalabilityAnalysis analyse(const std::string& root, int skip, ScalabilityData* data,
                            ScalabilityReadOptions read = {}) {
  read.root = root;
  auto loaded = read_scalability_data(read);
  EXPECT_TRUE(loaded.ok());
  *data = std::move(loaded).value();
  add_trace_metrics(data);
  ScalabilityOptions options;
  options.skip_epochs = skip;
  return analyse_scalability(*data, options);
}

TEST(ScalabilityReport, RunDirectoriesEveryNumber) {
  ScratchDir root("report-runs");
  build_resnet(root);
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root.path(), 1, &data);
  EXPECT_TRUE(a.errors.empty()) << a.errors.front();
  ASSERT_EQ(data.runs.size(), 5u);
  ASSERT_EQ(a.groups.size(), 4u);

  // Pooling and warm-up: 1 worker keeps 8, 9 (run a) and 10 (run b): mean 9, median 9, std 1.
  const ScaleGroup* w1 = find_group(a, "ddp", 1);
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(w1->runs.size(), 2u);
  EXPECT_EQ(w1->epochs_read, 5);
  EXPECT_EQ(w1->epoch.count, 3);
  EXPECT_DOUBLE_EQ(w1->epoch.mean, 9.0);
  EXPECT_DOUBLE_EQ(w1->epoch.median, 9.0);
  EXPECT_DOUBLE_EQ(w1->epoch.std, 1.0);
  EXPECT_DOUBLE_EQ(w1->epoch.min, 8.0);
  EXPECT_DOUBLE_EQ(w1->epoch.max, 10.0);
  // The slowest rank per epoch: 2 workers keep 5, 5; 4 workers keep 3, 3.
  const ScaleGroup* w2 = find_group(a, "ddp", 2);
  const ScaleGroup* w4 = find_group(a, "ddp", 4);
  ASSERT_NE(w2, nullptr);
  ASSERT_NE(w4, nullptr);
  EXPECT_DOUBLE_EQ(w2->epoch.mean, 5.0);
  EXPECT_DOUBLE_EQ(w2->epoch.std, 0.0);
  EXPECT_DOUBLE_EQ(w4->epoch.mean, 3.0);
  EXPECT_EQ(w4->nodes, 1);

  // Speedup 9/5 = 1.8 (ideal 2, efficiency 0.9) and 9/3 = 3 (ideal 4, efficiency 0.75).
  EXPECT_DOUBLE_EQ(w1->scaling.speedup, 1.0);
  EXPECT_DOUBLE_EQ(w2->scaling.speedup, 1.8);
  EXPECT_DOUBLE_EQ(w2->scaling.ideal_speedup, 2.0);
  EXPECT_DOUBLE_EQ(w2->scaling.efficiency, 0.9);
  EXPECT_DOUBLE_EQ(w4->scaling.speedup, 3.0);
  EXPECT_DOUBLE_EQ(w4->scaling.efficiency, 0.75);

  // Amdahl: 9, 5, 3 at 1, 2, 4 is exactly T = 1 + 8/n: serial fraction 1/9; projected at 8 and 16
  // workers: T = 2 and 1.5, speedup 4.5 and 6, efficiency 0.5625 and 0.375.
  const SeriesResult* ddp = find_series(a, "ddp");
  ASSERT_NE(ddp, nullptr);
  ASSERT_TRUE(ddp->amdahl.ok);
  EXPECT_NEAR(ddp->amdahl.serial_fraction, 1.0 / 9.0, 1e-12);
  EXPECT_NEAR(ddp->amdahl.serial_s, 1.0, 1e-12);
  EXPECT_NEAR(ddp->amdahl.parallel_s, 8.0, 1e-12);
  EXPECT_EQ(ddp->projected_workers[0], 8);
  EXPECT_EQ(ddp->projected_workers[1], 16);
  EXPECT_NEAR(ddp->projected_speedup[0], 4.5, 1e-12);
  EXPECT_NEAR(ddp->projected_speedup[1], 6.0, 1e-12);
  EXPECT_NEAR(ddp->projected_efficiency[0], 0.5625, 1e-12);
  EXPECT_NEAR(ddp->projected_efficiency[1], 0.375, 1e-12);

  // Energy. 1 worker: 400 J in run a only: 400/3600 Wh per run, over its 3 epochs per epoch;
  // utilization mean of 50, 70, 90.
  EXPECT_EQ(w1->gpus, 1);
  EXPECT_DOUBLE_EQ(w1->energy_wh_total, 400.0 / 3600.0);
  EXPECT_DOUBLE_EQ(w1->energy_wh_per_run, 400.0 / 3600.0);
  EXPECT_DOUBLE_EQ(w1->energy_wh_per_epoch, 400.0 / 3.0 / 3600.0);
  EXPECT_DOUBLE_EQ(w1->utilization_pct, 70.0);
  EXPECT_EQ(w1->energy_method, "trapezoid");
  // 2 workers: node file only, 250 J (counter) + 120 J (trapezoid).
  EXPECT_EQ(w2->gpus, 2);
  EXPECT_DOUBLE_EQ(w2->energy_wh_total, 370.0 / 3600.0);
  EXPECT_DOUBLE_EQ(w2->energy_wh_per_epoch, 370.0 / 3.0 / 3600.0);
  EXPECT_DOUBLE_EQ(w2->utilization_pct, 35.0);
  EXPECT_EQ(w2->energy_method, "counter+trapezoid");
  EXPECT_EQ(find_group(a, "ddp", 4)->gpus, 0);

  // Traces through the trace engine: spans of 100 us.
  ASSERT_TRUE(w1->traces.has_value());
  EXPECT_EQ(w1->traces->span_ns, 100'000);
  EXPECT_EQ(w1->traces->computation_ns, 80'000);
  EXPECT_EQ(w1->traces->communication_ns, 20'000);
  EXPECT_EQ(w1->traces->idle_ns, 0);
  ASSERT_TRUE(w4->traces.has_value());
  EXPECT_EQ(w4->traces->idle_ns, 10'000);
  EXPECT_EQ(w4->traces->computation_ns, 70'000);
  EXPECT_EQ(w4->traces->other_ns, 0);
  EXPECT_DOUBLE_EQ(w4->trace_share(&TraceSums::idle_ns), 0.1);
  // itwinai's computation fraction from the same trace: aten::mm's self device time (its two kernels,
  // 100 us) over all rows' self device time (aten::mm 100 + sgemm 80 + nccl 20) = 0.5.
  ASSERT_TRUE(w1->computation.has_value());
  EXPECT_EQ(w1->computation->computation_ns, 100'000);
  EXPECT_EQ(w1->computation->total_ns, 200'000);
  EXPECT_DOUBLE_EQ(w1->computation_fraction, 0.5);

  // Where scaling is lost from 1 to 4 workers (9 s -> 3 s): efficiency 0.75, 25 points lost;
  // communication 20% -> 20%: (0.6 - 9 x 0.2 / 4) / 3 = 0.05; idle 0% -> 10%: 0.3 / 3 = 0.1; rest 0.1.
  ASSERT_TRUE(ddp->has_loss());
  // One loss per scale above the smallest: 2 workers (no traces there: nothing attributed) and 4.
  ASSERT_EQ(ddp->losses.size(), 2u);
  EXPECT_EQ(ddp->losses[0].n1, 2);
  EXPECT_EQ(ddp->losses[0].basis, analysis::LossBasis::kNone);
  const analysis::ScaleLoss& l4 = ddp->largest_loss();
  EXPECT_EQ(l4.n1, 4);
  EXPECT_EQ(l4.basis, analysis::LossBasis::kTraces);
  EXPECT_DOUBLE_EQ(l4.efficiency, 0.75);
  ASSERT_EQ(l4.causes.size(), 2u);
  EXPECT_NEAR(l4.causes[0].points, 0.05, 1e-12);
  EXPECT_NEAR(l4.causes[1].points, 0.10, 1e-12);
  EXPECT_NEAR(l4.rest, 0.10, 1e-12);
  ASSERT_GE(loss_sentences(*ddp).size(), 2u);
  EXPECT_NE(loss_sentences(*ddp)[0].find("from 1 to 4 workers the epoch time went from 9.00 s to 3.00 s"),
            std::string::npos)
      << loss_sentences(*ddp)[0];
  EXPECT_NE(loss_sentences(*ddp)[1].find("Of the 25.0 points of efficiency lost, communication growth accounts for 5.0 "
                                         "points"),
            std::string::npos)
      << loss_sentences(*ddp)[1];
  EXPECT_NE(loss_sentences(*ddp)[1].find("idle growth accounts for 10.0 points"), std::string::npos);
  EXPECT_NE(loss_sentences(*ddp)[1].find("unattributed accounts for 10.0 points"), std::string::npos);

  // Best strategy at 2 workers: ddp 5 s vs gloo 6 s.
  ASSERT_EQ(a.best.size(), 3u);
  EXPECT_EQ(a.best[1].workers, 2);
  EXPECT_EQ(a.best[1].strategy, "ddp");
  EXPECT_EQ(a.best[1].runner_up, "gloo");
  ASSERT_EQ(best_strategy_sentences(a).size(), 1u);
  EXPECT_EQ(best_strategy_sentences(a)[0],
            "At 2 workers ddp is fastest (5.00 s per epoch), 16.7% faster than gloo (6.00 s).");

  // Missing pieces are warnings: gloo has no GPU data, but GPU data exists elsewhere.
  EXPECT_FALSE(contains(a.warnings, "No GPU data found"));
  EXPECT_TRUE(contains(a.warnings, "traces of 1 of 4 ranks"));
}

// A run held in memory: `workers` ranks, epochs of `seconds` (the first is skipped as warm-up).
RunData run_in_memory(const std::string& strategy, int64_t workers, double seconds, const TraceSums& traces) {
  RunData r;
  r.layout = "scaleprof";
  r.name = strategy + "-w" + std::to_string(workers);
  r.strategy = strategy;
  r.workers = workers;
  r.nodes = 1;
  r.epochs = {{0, seconds * 2}, {1, seconds}, {2, seconds}};
  r.traces = traces;
  return r;
}

TraceSums collective_sums(int64_t ranks, int64_t step_ns, int64_t calls, int64_t matched, int64_t latency_ns,
                          int64_t wait_ns) {
  TraceSums t;
  t.ranks = ranks;
  t.step_ns = step_ns;
  t.collective_calls = calls;
  t.collectives_matched = matched;
  t.collective_latency_ns = latency_ns;
  t.collective_wait_ns = wait_ns;
  return t;
}

// CPU runs (no device work), collectives matched at both scales: 1 -> 2 workers, 8 s -> 5 s, 20 points
// lost. At 2 workers 2 x 100 ms of steps hold 20 ms of latency and 8 ms of waits (10 % and 4 %): 10
// and 4 points; 6 points are everything else.
TEST(ScalabilityReport, GlooCollectivesSplitCommunicationFromWaiting) {
  ScalabilityData data;
  data.runs.push_back(run_in_memory("ddp", 1, 8, collective_sums(1, 100'000'000, 2, 2, 0, 0)));
  data.runs.push_back(run_in_memory("ddp", 2, 5, collective_sums(2, 200'000'000, 2, 2, 20'000'000, 8'000'000)));
  const ScalabilityAnalysis a = analyse_scalability(data, {});
  const SeriesResult* s = find_series(a, "ddp");
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->has_loss());
  const analysis::ScaleLoss& l = s->largest_loss();
  EXPECT_EQ(l.basis, analysis::LossBasis::kCollectives);
  ASSERT_EQ(l.causes.size(), 2u);
  EXPECT_EQ(l.causes[0].name, "communication");
  EXPECT_NEAR(l.causes[0].share1, 0.10, 1e-12);
  EXPECT_NEAR(l.causes[0].points, 0.10, 1e-12);
  EXPECT_EQ(l.causes[1].name, "waiting for stragglers");
  EXPECT_NEAR(l.causes[1].points, 0.04, 1e-12);
  EXPECT_NEAR(l.rest, 0.06, 1e-12);
  const std::vector<std::string> lines = loss_sentences(*s);
  EXPECT_TRUE(contains(lines, "waiting for stragglers growth accounts for 4.0 points")) << lines[1];
  EXPECT_TRUE(contains(lines, "in the collectives matched across ranks at both scales"));
  EXPECT_TRUE(contains(lines, "The main reason ddp does not scale better is the growth of communication."));
  // The section states the shares per scale.
  bool found = false;
  for (const ReportSection& sec : scalability_sections(a)) {
    if (sec.key != "collectives") continue;
    found = true;
    ASSERT_EQ(sec.tables[0].rows.size(), 2u);
  }
  EXPECT_TRUE(found);
}

// Issue 23: peak device memory per GPU against workers, from the runs' traces' [memory] events (the
// largest and smallest peak over each run's ranks, engine/run_trace_metrics.cc); the section exists
// only where some run has it. ddp at 1 worker: 6 GB; at 2 workers two runs, ranks 5-7 GB and 4-5 GB.
TEST(ScalabilityReport, PeakDeviceMemoryAgainstWorkers) {
  ScalabilityData data;
  data.runs.push_back(run_in_memory("ddp", 1, 8, collective_sums(1, 100'000'000, 0, 0, 0, 0)));
  data.runs.push_back(run_in_memory("ddp", 2, 5, collective_sums(2, 200'000'000, 0, 0, 0, 0)));
  auto none = [](const ScalabilityAnalysis& a) {
    for (const ReportSection& sec : scalability_sections(a)) {
      if (sec.key == "memory") return false;
    }
    return true;
  };
  EXPECT_TRUE(none(analyse_scalability(data, {})));
  data.runs[0].peak_device_memory_bytes = data.runs[0].min_peak_device_memory_bytes = 6'000'000'000;
  data.runs.push_back(data.runs[1]);
  data.runs[1].peak_device_memory_bytes = 7'000'000'000;
  data.runs[1].min_peak_device_memory_bytes = 5'000'000'000;
  data.runs[2].peak_device_memory_bytes = 5'000'000'000;
  data.runs[2].min_peak_device_memory_bytes = 4'000'000'000;
  const ScalabilityAnalysis a = analyse_scalability(data, {});
  ASSERT_FALSE(none(a));
  for (const ReportSection& sec : scalability_sections(a)) {
    if (sec.key != "memory") continue;
    ASSERT_EQ(sec.table_keys, std::vector<std::string>{"peak_device_memory"});
    const auto rows = sec.tables[0].all_rows();
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(std::get<int64_t>(rows[0][1].value), 1);
    EXPECT_DOUBLE_EQ(std::get<double>(rows[0][2].value), 6.0);
    EXPECT_DOUBLE_EQ(std::get<double>(rows[0][4].value), 1.0);
    EXPECT_EQ(std::get<int64_t>(rows[1][1].value), 2);
    EXPECT_DOUBLE_EQ(std::get<double>(rows[1][2].value), 7.0);
    EXPECT_DOUBLE_EQ(std::get<double>(rows[1][3].value), 4.0);
    EXPECT_DOUBLE_EQ(std::get<double>(rows[1][4].value), 1.75);
  }
  bool plotted = false;
  for (const report::PlotSpec& p : report::scalability_plot_specs(a)) {
    if (p.stem != "peak_device_memory") continue;
    plotted = true;
    EXPECT_EQ(p.categories, (std::vector<std::string>{"1", "2"}));
    ASSERT_EQ(p.series.size(), 1u);
    EXPECT_EQ(p.series[0].y, (std::vector<double>{6.0, 7.0}));
  }
  EXPECT_TRUE(plotted);
}

// Issue 7 item 7: two runs of one configuration whose trace sums (each exact) add up past int64 ns.
// The group's trace shares and computation fraction are left out with a warning naming the
// configuration, never summed into a wrapped, negative number.
TEST(ScalabilityReport, GroupSumsPastInt64AreLeftOutNotWrapped) {
  ScalabilityData data;
  data.runs.push_back(run_in_memory("ddp", 1, 8, collective_sums(1, 100'000'000, 2, 2, 0, 0)));
  const int64_t huge = INT64_C(5'000'000'000'000'000'000);
  for (int i = 0; i < 2; ++i) {
    RunData r = run_in_memory("ddp", 2, 5, collective_sums(2, huge, 2, 2, 20'000'000, 8'000'000));
    r.name += "-" + std::to_string(i);
    ComputationSums c;
    c.computation_ns = huge;
    c.total_ns = huge;
    c.ranks = 2;
    r.computation = c;
    data.runs.push_back(std::move(r));
  }
  const ScalabilityAnalysis a = analyse_scalability(data, {});
  const ScaleGroup* two = nullptr;
  for (const ScaleGroup& g : a.groups) two = g.workers == 2 ? &g : two;
  ASSERT_NE(two, nullptr);
  EXPECT_FALSE(two->traces.has_value());
  EXPECT_FALSE(two->computation.has_value());
  EXPECT_TRUE(std::isnan(two->computation_fraction));
  EXPECT_TRUE(contains(a.warnings, "ddp at 2 workers: the runs' trace times summed exceed 292 years"));
  EXPECT_TRUE(contains(a.warnings, "ddp at 2 workers: the runs' operator self times summed exceed 292 years"));
  const analysis::ScaleLoss& l = find_series(a, "ddp")->largest_loss();
  EXPECT_EQ(l.basis, analysis::LossBasis::kNone);
  EXPECT_TRUE(l.causes.empty());
}

// One call at the larger scale could not be matched: the split would undercount, so it is not used
// (no traces basis either: nothing attributed).
TEST(ScalabilityReport, UnmatchedCollectivesAreNotSplit) {
  ScalabilityData data;
  data.runs.push_back(run_in_memory("ddp", 1, 8, collective_sums(1, 100'000'000, 2, 2, 0, 0)));
  data.runs.push_back(run_in_memory("ddp", 2, 5, collective_sums(2, 200'000'000, 3, 2, 20'000'000, 8'000'000)));
  const ScalabilityAnalysis a = analyse_scalability(data, {});
  const analysis::ScaleLoss& l = find_series(a, "ddp")->largest_loss();
  EXPECT_EQ(l.basis, analysis::LossBasis::kNone);
  EXPECT_TRUE(l.causes.empty());
}

// GPU runs with matched collectives: the exposed communication (20 % of the GPU span at 4 workers) is
// split 3:1 by the matched calls' latency (30 ms) and waits (10 ms): 15 % communication, 5 % waiting;
// idle stays. 1 -> 4 workers, 9 s -> 3 s: communication 20 % -> 15 %: 0.45 - 0.45 = 0 points; waiting
// 0 -> 5 %: 0.15 s of 3 s = 5 points; idle 0 -> 20 %: 20 points.
TEST(ScalabilityReport, GpuCommunicationSplitByMatchedCollectives) {
  TraceSums one = collective_sums(1, 1'000'000, 0, 0, 0, 0);
  one.span_ns = 100'000;
  one.computation_ns = 80'000;
  one.communication_ns = 20'000;
  TraceSums four = collective_sums(4, 4'000'000, 5, 5, 30'000'000, 10'000'000);
  four.span_ns = 400'000;
  four.computation_ns = 240'000;
  four.communication_ns = 80'000;
  four.idle_ns = 80'000;
  ScalabilityData data;
  data.runs.push_back(run_in_memory("ddp", 1, 9, one));
  data.runs.push_back(run_in_memory("ddp", 4, 3, four));
  const ScalabilityAnalysis a = analyse_scalability(data, {});
  const analysis::ScaleLoss& l = find_series(a, "ddp")->largest_loss();
  EXPECT_EQ(l.basis, analysis::LossBasis::kTracesCollectives);
  ASSERT_EQ(l.causes.size(), 3u);
  EXPECT_NEAR(l.causes[0].share0, 0.20, 1e-12);
  EXPECT_NEAR(l.causes[0].share1, 0.15, 1e-12);
  EXPECT_NEAR(l.causes[0].points, 0.0, 1e-12);
  EXPECT_EQ(l.causes[1].name, "waiting for stragglers");
  EXPECT_NEAR(l.causes[1].share1, 0.05, 1e-12);
  EXPECT_NEAR(l.causes[1].points, 0.05, 1e-12);
  EXPECT_EQ(l.causes[2].name, "idle");
  EXPECT_NEAR(l.causes[2].points, 0.20, 1e-12);
  EXPECT_NEAR(l.rest, 0.0, 1e-12);
}

TEST(ScalabilityReport, SkipEpochsZeroPoolsEverything) {
  ScratchDir root("report-skip0");
  build_resnet(root);
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root.path(), 0, &data);
  // 1 worker without skipping: 10, 8, 9, 12, 10 -> mean 49/5, median 10.
  const ScaleGroup* w1 = find_group(a, "ddp", 1);
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(w1->epoch.count, 5);
  EXPECT_DOUBLE_EQ(w1->epoch.mean, 9.8);
  EXPECT_DOUBLE_EQ(w1->epoch.median, 10.0);
  // Skipping more epochs than a run has drops that run's epochs with a warning.
  ScalabilityData data2;
  const ScalabilityAnalysis b = analyse(root.path(), 2, &data2);
  EXPECT_TRUE(contains(b.warnings, "all 2 epoch(s) skipped as warm-up"));
  EXPECT_DOUBLE_EQ(find_group(b, "ddp", 1)->epoch.mean, 9.0);  // run a's last epoch only
}

TEST(ScalabilityReport, FiltersByExperimentAndRunName) {
  ScratchDir root("report-filter");
  build_resnet(root);
  testing::make_run(root, "other", "r1", "r1", "ddp", 1, {{1, 1}});
  ScalabilityData data;
  ScalabilityReadOptions only;
  only.experiment = "other";
  ScalabilityAnalysis a = analyse(root.path(), 1, &data, only);
  ASSERT_EQ(data.runs.size(), 1u);
  EXPECT_EQ(data.runs[0].name, "r1");
  ScalabilityReadOptions names;
  names.run_names = {"ddp-w2", "gloo-w2"};
  a = analyse(root.path(), 1, &data, names);
  ASSERT_EQ(data.runs.size(), 2u);
  // Both experiments together: series are named experiment/strategy.
  a = analyse(root.path(), 1, &data);
  EXPECT_NE(find_group(a, "resnet/ddp", 4), nullptr);
  EXPECT_NE(find_group(a, "other/ddp", 1), nullptr);
}

// A run name or an experiment that selects nothing is an error naming it, not an empty report.
TEST(ScalabilityReport, SelectionThatMatchesNothingIsAnError) {
  ScratchDir root("report-filter-miss");
  build_resnet(root);
  ScalabilityReadOptions read;
  read.root = root.path();
  read.run_names = {"ddp-w2", "ddp-w3", "nope"};
  auto r = read_scalability_data(read);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "--run-names: no run named 'ddp-w3', 'nope' under " + root.path());
  read.run_names = {};
  read.experiment = "resnt";
  r = read_scalability_data(read);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "--experiment: no experiment named 'resnt' under " + root.path());
}

// itwinai's CSV layout has no experiment names: --experiment leaves its folders out (and says so), and
// naming an experiment on itwinai data alone is an error that says how to select its runs.
TEST(ScalabilityReport, ExperimentFilterOnItwinaiData) {
  ScratchDir root("report-filter-itwinai");
  root.write("run1/epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n1,2,ddp,1\n2,1,ddp,1\n");
  ScalabilityReadOptions read;
  read.root = root.path();
  read.experiment = "mnist";
  auto r = read_scalability_data(read);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "--experiment: no experiment named 'mnist' under " + root.path() +
                                   " (itwinai's CSV layout has no experiment names: select its runs with --run-ids)");
  testing::make_run(root, "mnist", "r1", "r1", "ddp", 1, {{1, 1}});
  r = read_scalability_data(read);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().runs.size(), 1u);
  EXPECT_EQ(r.value().runs[0].layout, "scaleprof");
  EXPECT_TRUE(contains(r.value().warnings, root / "run1" +
                                               ": itwinai CSV data left out: its layout has no experiment name to "
                                               "match --experiment mnist"));
  // Without --experiment both are read.
  read.experiment = "";
  r = read_scalability_data(read);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().runs.size(), 2u);
}

// Nodes of 8 GPUs: itwinai's epoch-time files count nodes, and the GPU files of the same run say how
// many GPUs those nodes have (num_global_gpus over the nodes sampled). The epoch times must land on
// 8 and 16 workers, together with the GPU data of the same configuration.
TEST(ScalabilityReport, ItwinaiGpusPerNodeFromTheData) {
  ScratchDir root("report-itwinai-8gpu");
  const std::string gpu_header =
      "sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval\n";
  root.write("job1/epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n1,9,ddp,1\n2,8,ddp,1\n");
  root.write("job1/gpu-energy-data/ddp_8.csv", gpu_header + "0,50,100,0,0,8,ddp,1\n0,50,100,7,0,8,ddp,1\n");
  root.write("job2/epoch-time/epochtime_ddp_2N.csv", "epoch_id,time,name,nodes\n1,6,ddp,2\n2,5,ddp,2\n");
  root.write("job2/gpu-energy-data/ddp_16.csv", gpu_header + "0,60,100,0,0,16,ddp,1\n0,60,100,3,1,16,ddp,1\n");
  ScalabilityData data;
  ScalabilityAnalysis a = analyse(root.path(), 1, &data);
  ASSERT_EQ(a.groups.size(), 2u);
  const ScaleGroup* g8 = find_group(a, "ddp", 8);
  const ScaleGroup* g16 = find_group(a, "ddp", 16);
  ASSERT_TRUE(g8 && g16);
  EXPECT_EQ(g8->nodes, 1);
  EXPECT_EQ(g16->nodes, 2);
  EXPECT_DOUBLE_EQ(g8->epoch.mean, 8.0);
  EXPECT_DOUBLE_EQ(g16->epoch.mean, 5.0);
  EXPECT_EQ(g8->gpus, 2);
  EXPECT_DOUBLE_EQ(g16->utilization_pct, 60.0);
  EXPECT_DOUBLE_EQ(g16->scaling.efficiency, 8.0 / 5.0 / 2.0);
  EXPECT_EQ(find_group(a, "ddp", 4), nullptr);
  EXPECT_FALSE(contains(a.warnings, "gpus-per-node"));

  // An option that contradicts the data is warned about; the data's count is used.
  ScalabilityData data4;
  ScalabilityReadOptions four;
  four.gpus_per_node = 4;
  ScalabilityAnalysis b = analyse(root.path(), 1, &data4, four);
  EXPECT_NE(find_group(b, "ddp", 16), nullptr);
  EXPECT_TRUE(contains(b.warnings, root / "job2" +
                                       ": --gpus-per-node 4 contradicts the GPU data, 8 GPUs per node in "
                                       "gpu-energy-data/ddp_16.csv (16 GPUs on 2 nodes); the data's count is used"));
  // Without GPU files the option (else 4) decides.
  ScratchDir bare("report-itwinai-bare");
  bare.write("job1/epoch-time/epochtime_ddp_2N.csv", "epoch_id,time,name,nodes\n1,6,ddp,2\n2,5,ddp,2\n");
  ScalabilityData data_bare;
  ScalabilityAnalysis c = analyse(bare.path(), 1, &data_bare);
  EXPECT_NE(find_group(c, "ddp", 8), nullptr);
  ScalabilityData data_six;
  ScalabilityReadOptions six;
  six.gpus_per_node = 6;
  ScalabilityAnalysis d = analyse(bare.path(), 1, &data_six, six);
  EXPECT_NE(find_group(d, "ddp", 12), nullptr);
}

// itwinai's stored profiler traces (<run>/torch-traces/worker_<rank>.<time>.pt.trace.json) feed the
// GPU time split like scaleprof's.
TEST(ScalabilityReport, ItwinaiTorchTraces) {
  ScratchDir root("report-itwinai-traces");
  root.write("job1/epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n1,9,ddp,1\n2,8,ddp,1\n");
  root.write("job1/torch-traces/worker_0.1712345678901.pt.trace.json", testing::tiny_trace(0, 80, 0, 20));
  root.write("job1/torch-traces/worker_1.1712345678902.pt.trace.json", testing::tiny_trace(1, 60, 20, 20));
  ScalabilityData data;
  ScalabilityAnalysis a = analyse(root.path(), 1, &data);
  const ScaleGroup* g = find_group(a, "ddp", 4);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->traces.has_value());
  EXPECT_EQ(g->traces->ranks, 2);
  // Spans 100 + 100 us; communication 20 + 20, idle 0 + 20.
  EXPECT_DOUBLE_EQ(g->trace_share(&TraceSums::communication_ns), 0.2);
  EXPECT_DOUBLE_EQ(g->trace_share(&TraceSums::idle_ns), 0.1);
  EXPECT_EQ(data.runs[0].trace_files.size(), 2u);
}

// Issue 7 item 7, one run: each rank's device span (about 237 years) is within the reader's bounds,
// the two ranks' spans summed are not. The run's traces are not used, with an error naming the run,
// instead of shares computed from a wrapped, negative span.
TEST(ScalabilityReport, RunTraceSumsPastInt64AreNotUsed) {
  ScratchDir root("report-huge-traces");
  root.write("job1/epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n1,9,ddp,1\n2,8,ddp,1\n");
  for (int rank = 0; rank < 2; ++rank) {
    root.write(fmt::format("job1/torch-traces/worker_{}.1.pt.trace.json", rank),
               fmt::format(R"({{"distributedInfo":{{"rank":{}}},"traceEvents":[
{{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":-570000000000000,"dur":1,"args":{{"stream":7}}}},
{{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":6900000000000000,"dur":1,"args":{{"stream":7}}}}
]}})",
                           rank));
  }
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root.path(), 1, &data);
  ASSERT_EQ(data.runs.size(), 1u);
  EXPECT_FALSE(data.runs[0].traces.has_value());
  EXPECT_TRUE(contains(a.errors, "traces not used: the 2 ranks' times summed exceed 292 years"));
  const ScaleGroup* g = find_group(a, "ddp", 4);
  ASSERT_NE(g, nullptr);
  EXPECT_FALSE(g->traces.has_value());
}

TEST(ScalabilityReport, BadDataNamesFileAndLine) {
  ScratchDir root("report-bad");
  const std::string run = testing::make_run(root, "exp", "r", "r", "ddp", 2, {{3, 2, 2}});
  // Line 3 has a bad number, the last line is torn (no newline).
  root.write("exp/r/rank-00000/epochs.csv",
             "epoch,start_unix_ns,end_unix_ns,duration_s,samples\n0,1,2,3,\n1,1,2,abc,\n2,1,2,2,\n3,1,2,2");
  // rank-00001 says world size 4, run.json says 2.
  root.write("exp/r/rank-00001/rank.json", testing::rank_json(1, 4, "node01", "ddp"));
  root.write("exp/r/rank-00001/epochs.csv", "epoch,duration_s\n0,3\n1,2\n2,2\n");
  // A gpu.csv without the device column.
  root.write("exp/r/rank-00001/gpu.csv", "time_unix_ns,power_w\n1,2\n");
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root.path(), 1, &data);
  const std::string epochs = root / "exp/r/rank-00000/epochs.csv";
  EXPECT_TRUE(contains(a.errors, epochs + ":3: a required field is missing or not a number; line skipped"));
  EXPECT_TRUE(contains(a.warnings, epochs + ":5: torn last line"));
  EXPECT_TRUE(contains(a.errors, root / "exp/r/rank-00001/rank.json" + ": world_size 4 contradicts run.json's 2"));
  // The run-directory importer keeps the file apart from the problem, as an error (exit code 3).
  EXPECT_TRUE(std::any_of(a.errors.begin(), a.errors.end(), [&](const Diagnostic& d) {
    return d.where == root / "exp/r/rank-00001/rank.json" && d.severity == Severity::kError &&
           d.message == "world_size 4 contradicts run.json's 2; run.json's is used";
  }));
  EXPECT_TRUE(contains(a.errors, root / "exp/r/rank-00001/gpu.csv" + ":2: a required field is missing"));
  // The rest is still read: epochs 0 and 2 (max over ranks 3, 2), 1 from rank 1 only: 3, 2, 2 -> 2, 2.
  ASSERT_EQ(a.groups.size(), 1u);
  EXPECT_EQ(a.groups[0].workers, 2);
  EXPECT_DOUBLE_EQ(a.groups[0].epoch.mean, 2.0);
  EXPECT_TRUE(contains(a.warnings, "No GPU data found"));
  EXPECT_TRUE(contains(a.warnings, "No profiler traces found"));
}

TEST(ScalabilityReport, MissingRootIsAnError) {
  ScalabilityReadOptions read;
  read.root = "/nonexistent/scaleprof-root";
  auto r = read_scalability_data(read);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/scaleprof-root: no such directory"), std::string::npos);
}

// itwinai's CSV layout, modelled on the MNIST example of its documentation (epoch times 2.65 s ... and
// computation fractions 75.47 % ...), in two nodes counts with 4 GPUs per node.
void build_itwinai(const ScratchDir& root) {
  // deepspeed 1 node: warm-up 5.00, then 2.60 and 2.70 -> mean 2.65 (the documented value).
  root.write("run1/epoch-time/epochtime_deepspeed_1N.csv",
             "epoch_id,time,name,nodes\n1,5.00,deepspeed,1\n2,2.60,deepspeed,1\n3,2.70,deepspeed,1\n");
  // deepspeed 2 nodes: 3.00, then 1.68, 1.70 -> 1.69.
  root.write("run1/epoch-time/epochtime_deepspeed_2N.csv",
             "epoch_id,time,name,nodes\n1,3.00,deepspeed,2\n2,1.68,deepspeed,2\n3,1.70,deepspeed,2\n");
  // torch-ddp 1 node: 6.00, 2.90, 2.94 -> 2.92; 2 nodes: 4.00, 1.98, 2.00 -> 1.99.
  root.write("run1/epoch-time/epochtime_torch-ddp_1N.csv",
             "epoch_id,time,name,nodes\n1,6.00,torch-ddp,1\n2,2.90,torch-ddp,1\n3,2.94,torch-ddp,1\n");
  root.write("run1/epoch-time/epochtime_torch-ddp_2N.csv",
             "epoch_id,time,name,nodes\n1,4.00,torch-ddp,2\n2,1.98,torch-ddp,2\n3,2.00,torch-ddp,2\n");
  // Computation data of deepspeed on 4 GPUs, two ranks (pandas index column first; a kernel name with
  // commas is quoted). Sum 2000 us, ProfilerStep* 1000 us, ATen/at:: 300+300+154.7 = 754.7 us:
  // fraction 754.7 / 1000 = 75.47 %.
  const std::string header =
      ",name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,global_rank\n";
  root.write("run1/computation-data/deepspeed_4_0.csv",
             header +
                 "0,ProfilerStep*,0,500.0,900.0,900us,2,deepspeed,4,0\n1,aten::mm,0,300.0,300.0,300us,10,"
                 "deepspeed,4,0\n2,\"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<"
                 "float>, at::detail::Array<char*, 1> >(int, float, char*)\",0,154.7,154.7,154us,3,deepspeed,4,"
                 "0\n");
  root.write("run1/computation-data/deepspeed_4_1.csv",
             header +
                 "0,ProfilerStep*,0,500.0,900.0,900us,2,deepspeed,4,1\n1,aten::mm,0,300.0,300.0,300us,10,"
                 "deepspeed,4,1\n2,ncclKernel_AllReduce_RING_LL_Sum_float,0,245.3,245.3,245us,4,deepspeed,4,1\n");
  // deepspeed on 8 GPUs: 100 us ProfilerStep*, 30.66 us aten::add_, 69.34 us NCCL: 30.66 %.
  root.write("run1/computation-data/deepspeed_8_0.csv",
             header +
                 "0,ProfilerStep*,0,100.0,0,,1,deepspeed,8,0\n1,aten::add_,0,30.66,0,,1,deepspeed,8,0\n"
                 "2,ncclDevKernel_AllReduce,0,69.34,0,,1,deepspeed,8,0\n");
  // GPU data of deepspeed on 4 GPUs: two GPUs x 3 samples every 2 s. Energy (itwinai's rule):
  // (100 + 200 + 300 + 50 + 50 + 50) W x 2 s = 1500 J; utilization mean of 10..60 = 35 %.
  root.write("run1/gpu-energy-data/deepspeed_4.csv",
             "sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval\n"
             "0,10,100,0,0,4,deepspeed,2\n1,20,200,0,0,4,deepspeed,2\n2,30,300,0,0,4,deepspeed,2\n"
             "0,40,50,1,0,4,deepspeed,2\n1,50,50,1,0,4,deepspeed,2\n2,60,50,1,0,4,deepspeed,2\n");
}

TEST(ScalabilityReport, ItwinaiCsvLayout) {
  ScratchDir root("report-itwinai");
  build_itwinai(root);
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root.path(), 1, &data);
  EXPECT_TRUE(a.errors.empty()) << a.errors.front();
  const ScaleGroup* ds4 = find_group(a, "deepspeed", 4);
  const ScaleGroup* ds8 = find_group(a, "deepspeed", 8);
  const ScaleGroup* ddp4 = find_group(a, "torch-ddp", 4);
  const ScaleGroup* ddp8 = find_group(a, "torch-ddp", 8);
  ASSERT_TRUE(ds4 && ds8 && ddp4 && ddp8);
  EXPECT_EQ(ds4->nodes, 1);
  EXPECT_EQ(ds8->nodes, 2);
  // Epoch times after the warm-up epoch: the documented table.
  EXPECT_NEAR(ds4->epoch.mean, 2.65, 1e-12);
  EXPECT_NEAR(ds8->epoch.mean, 1.69, 1e-12);
  EXPECT_NEAR(ddp4->epoch.mean, 2.92, 1e-12);
  EXPECT_NEAR(ddp8->epoch.mean, 1.99, 1e-12);
  EXPECT_EQ(ds4->epoch.count, 2);
  EXPECT_NEAR(ds4->epoch.std, std::sqrt(0.005), 1e-12);  // 2.60, 2.70: (0.05^2 x 2) / 1
  // Speedup 2.65 / 1.69 and 2.92 / 1.99; efficiency half of it (8 vs 4 workers).
  EXPECT_NEAR(ds8->scaling.speedup, 2.65 / 1.69, 1e-12);
  EXPECT_NEAR(ds8->scaling.efficiency, 2.65 / 1.69 / 2, 1e-12);
  EXPECT_NEAR(ddp8->scaling.speedup, 2.92 / 1.99, 1e-12);
  // Computation fraction 75.47 % and 30.66 %, pooled over ranks.
  ASSERT_TRUE(ds4->computation.has_value());
  EXPECT_EQ(ds4->computation->total_ns, 2'000'000);
  EXPECT_EQ(ds4->computation->profiler_step_ns, 1'000'000);
  EXPECT_EQ(ds4->computation->computation_ns, 754'700);
  EXPECT_EQ(ds4->computation->ranks, 2);
  EXPECT_NEAR(ds4->computation_fraction, 0.7547, 1e-12);
  EXPECT_NEAR(ds8->computation_fraction, 0.3066, 1e-12);
  EXPECT_FALSE(ddp4->computation.has_value());
  // Energy by itwinai's rule: 1500 J over deepspeed's 3 epochs on 4 GPUs.
  EXPECT_DOUBLE_EQ(ds4->energy_wh_total, 1500.0 / 3600.0);
  EXPECT_DOUBLE_EQ(ds4->energy_wh_per_epoch, 500.0 / 3600.0);
  EXPECT_DOUBLE_EQ(ds4->utilization_pct, 35.0);
  EXPECT_EQ(ds4->energy_method, "rectangle");
  // Without traces only itwinai's computation fraction is known (deepspeed has it at both scales): a
  // share of operator self time, not of the epoch time, so nothing is attributed: efficiency
  // E = 2.65 x 4 / (1.69 x 8), all of 1 - E unattributed; the non-computation share 24.53% -> 69.34%
  // is an indication in words, with itwinai's caveat.
  const SeriesResult* ds = find_series(a, "deepspeed");
  ASSERT_NE(ds, nullptr);
  const analysis::ScaleLoss& dl = ds->largest_loss();
  EXPECT_EQ(dl.basis, analysis::LossBasis::kComputationFraction);
  EXPECT_NEAR(dl.efficiency, 2.65 * 4 / (1.69 * 8), 1e-12);
  EXPECT_TRUE(dl.causes.empty());
  EXPECT_NEAR(dl.rest, 1 - 2.65 * 4 / (1.69 * 8), 1e-12);
  EXPECT_NEAR(dl.non_computation0, 0.2453, 1e-12);
  EXPECT_NEAR(dl.non_computation1, 0.6934, 1e-12);
  const std::vector<std::string> why = loss_sentences(*ds);
  ASSERT_EQ(why.size(), 3u);
  EXPECT_FALSE(contains(why, "accounts for"));
  EXPECT_NE(why[1].find("the data cannot say where"), std::string::npos) << why[1];
  EXPECT_NE(why[1].find("a share of summed operator self time, not of the epoch time (itwinai's caveat"),
            std::string::npos)
      << why[1];
  EXPECT_NE(why[2].find("took 24.5% of the summed operator self time at 4 workers and 69.3% at 8; a growing share"),
            std::string::npos)
      << why[2];
  EXPECT_EQ(find_series(a, "torch-ddp")->largest_loss().basis, analysis::LossBasis::kNone);
  // Two scale points: the Amdahl fit passes through both, so its residual says nothing.
  const std::vector<ReportSection> amdahl = scalability_sections(a);
  bool exact_shown = false;
  for (const ReportSection& sec : amdahl) {
    if (sec.key != "amdahl") continue;
    for (const auto& row : sec.tables[0].rows) {
      EXPECT_TRUE(std::holds_alternative<std::monostate>(row[5].value)) << "RMS shown for a 2-point fit";
      exact_shown |=
          std::get<std::string>(row.back().value) == "projection (exact through 2 points: no evidence of fit quality)";
    }
  }
  EXPECT_TRUE(exact_shown);

  // itwinai's own numbers: every epoch pooled (--skip-epochs 0): (5.00 + 2.60 + 2.70) / 3.
  ScalabilityData data_all;  // `a` still points into `data`
  const ScalabilityAnalysis all = analyse(root.path(), 0, &data_all);
  EXPECT_NEAR(find_group(all, "deepspeed", 4)->epoch.mean, 10.3 / 3, 1e-12);

  // The tables show the same numbers.
  const std::vector<ReportSection> sections = scalability_sections(a);
  EXPECT_NEAR(table_value(sections, "epoch_time", "deepspeed", 4, "mean_s"), 2.65, 1e-12);
  EXPECT_NEAR(table_value(sections, "epoch_time", "torch-ddp", 8, "mean_s"), 1.99, 1e-12);
  EXPECT_NEAR(table_value(sections, "scaling", "deepspeed", 8, "speedup"), 2.65 / 1.69, 1e-12);
  EXPECT_NEAR(table_value(sections, "scaling", "deepspeed", 8, "efficiency_pct"), 2.65 / 1.69 / 2 * 100, 1e-9);
  EXPECT_NEAR(table_value(sections, "scaling", "torch-ddp", 8, "speedup"), 2.92 / 1.99, 1e-12);
  EXPECT_NEAR(table_value(sections, "computation_fraction", "deepspeed", 4, "computation_fraction_pct"), 75.47, 1e-9);
  EXPECT_NEAR(table_value(sections, "computation_fraction", "deepspeed", 8, "computation_fraction_pct"), 30.66, 1e-9);
  EXPECT_NEAR(table_value(sections, "gpu", "deepspeed", 4, "energy_wh_total"), 1500.0 / 3600.0, 1e-12);
  // Text form: itwinai-style heading and two-decimal cells.
  const std::string text = render_sections_text(sections, RenderOptions{});
  EXPECT_NE(text.find("######## Epoch Time Report ########"), std::string::npos);
  EXPECT_NE(text.find("######## Computation Data Report ########"), std::string::npos);
  EXPECT_NE(text.find("75.47"), std::string::npos);
}

// itwinai's deprecated --include-communication report: computation / (computation + communication) by
// its NCCL name rule (utils.py calculate_comp_and_comm_time). Rows: aten::mm 600 us (computation),
// nccl:all_reduce 300 us and cudaStreamSynchronize 50 us (communication), ncclKernel_AllReduce 50 us
// (neither: the rule matches record_function names, not kernels), ProfilerStep* 1000 us (neither):
// 600 / (600 + 350) = 63.157...%, while computation vs. other is 600 / 1000 = 60 %.
TEST(ScalabilityReport, ItwinaiDeprecatedCommunicationReport) {
  ScratchDir root("report-itwinai-comm");
  root.write("epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n1,2,ddp,1\n2,1,ddp,1\n");
  root.write("computation-data/ddp_4_0.csv",
             ",name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,"
             "global_rank\n0,ProfilerStep*,0,1000,0,,1,ddp,4,0\n1,aten::mm,0,600,0,,1,ddp,4,0\n"
             "2,nccl:all_reduce,0,300,0,,1,ddp,4,0\n3,cudaStreamSynchronize,0,50,0,,1,ddp,4,0\n"
             "4,ncclKernel_AllReduce_RING_LL_Sum_float,0,50,0,,1,ddp,4,0\n");
  ScalabilityData data;
  ScalabilityReadOptions read;
  read.root = root.path();
  auto loaded = read_scalability_data(read);
  ASSERT_TRUE(loaded.ok());
  data = std::move(loaded).value();
  ScalabilityOptions options;
  const ScalabilityAnalysis plain = analyse_scalability(data, options);
  const ScaleGroup* g = find_group(plain, "ddp", 4);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->computation.has_value());
  EXPECT_EQ(g->computation->communication_ns, 350'000);
  EXPECT_NEAR(g->computation_fraction, 0.6, 1e-12);
  EXPECT_NEAR(g->computation_vs_communication, 600.0 / 950.0, 1e-12);
  for (const ReportSection& s : scalability_sections(plain)) EXPECT_NE(s.key, "communication");

  options.include_communication = true;
  const ScalabilityAnalysis with = analyse_scalability(data, options);
  const std::vector<ReportSection> sections = scalability_sections(with);
  EXPECT_NEAR(table_value(sections, "computation_vs_communication", "ddp", 4, "computation_fraction_pct"),
              600.0 / 950.0 * 100, 1e-9);
  EXPECT_NEAR(table_value(sections, "computation_vs_communication", "ddp", 4, "communication_s"), 350e-6, 1e-15);
  EXPECT_NEAR(table_value(sections, "computation_fraction", "ddp", 4, "computation_fraction_pct"), 60.0, 1e-9);
  const std::string text = render_sections_text(sections, RenderOptions{});
  EXPECT_NE(text.find("######## Communication Data Report ########"), std::string::npos) << text;
  EXPECT_NE(text.find("63.16"), std::string::npos) << text;
}

// Issue 7 item 7: each self time is within bounds (1e12 us), but 9,225 of them pass int64 ns: the
// first 9,223 rows are summed (9.223e18 ns), each row after is skipped with an error naming its line,
// never wrapped into a negative sum.
TEST(ScalabilityReport, ItwinaiProfilingSumsPastInt64SkipTheLine) {
  ScratchDir root("report-itwinai-overflow");
  root.write("epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n1,2,ddp,1\n2,1,ddp,1\n");
  std::string csv =
      ",name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,"
      "global_rank\n";
  for (int i = 0; i < 9225; ++i) csv += std::to_string(i) + ",aten::mm,0,1e12,0,,1,ddp,4,0\n";
  root.write("computation-data/ddp_4_0.csv", csv);
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root.path(), 1, &data);
  const ScaleGroup* g = find_group(a, "ddp", 4);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->computation.has_value());
  EXPECT_EQ(g->computation->total_ns, INT64_C(9'223'000'000'000'000'000));
  EXPECT_EQ(g->computation->computation_ns, INT64_C(9'223'000'000'000'000'000));
  EXPECT_TRUE(contains(a.errors, root / "computation-data/ddp_4_0.csv" +
                                     ":9225: the sum of self_cuda_time_total overflows; line skipped"));
  EXPECT_TRUE(contains(a.errors, root / "computation-data/ddp_4_0.csv" +
                                     ":9226: the sum of self_cuda_time_total overflows; line skipped"));
  // The place is a field of its own: the file and line, apart from what is wrong there (the first
  // line skipped).
  const auto overflow = std::find_if(a.errors.begin(), a.errors.end(), [](const Diagnostic& d) {
    return d.message == "the sum of self_cuda_time_total overflows; line skipped";
  });
  ASSERT_NE(overflow, a.errors.end());
  EXPECT_EQ(overflow->where, root / "computation-data/ddp_4_0.csv" + ":9225");
  EXPECT_EQ(overflow->severity, Severity::kError);
}

TEST(ScalabilityReport, ItwinaiInconsistentProbingInterval) {
  ScratchDir root("report-itwinai-bad");
  root.write("epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n1,2,ddp,1\n2,1,ddp,1\n");
  root.write("gpu-energy-data/ddp_4.csv",
             "sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval\n"
             "0,10,100,0,0,4,ddp,1\n1,10,100,0,0,4,ddp,2\n");
  ScalabilityData data;
  const ScalabilityAnalysis a = analyse(root.path(), 1, &data);
  EXPECT_TRUE(
      contains(a.errors, root / "gpu-energy-data/ddp_4.csv" + ":3: probing_interval 2 differs from 1 on line 2"));
  // The root itself is the run: run name = folder name; 1 node x 4 GPUs.
  ASSERT_EQ(a.groups.size(), 1u);
  EXPECT_EQ(a.groups[0].workers, 4);
  EXPECT_DOUBLE_EQ(a.groups[0].epoch.mean, 1.0);
  EXPECT_DOUBLE_EQ(a.groups[0].energy_wh_total, 100.0 / 3600.0);
}

TEST(ScalabilityReport, CsvParserQuotesAndTornLines) {
  std::vector<Diagnostic> warnings;
  std::vector<Diagnostic> errors;
  CsvFile f = parse_csv("a,b\n\"x,\"\"y\"\"\",2\n\"multi\nline\",3\n1,2,3\n4", "f.csv", true, &warnings, &errors);
  ASSERT_EQ(f.rows.size(), 2u);
  EXPECT_EQ(f.rows[0][0], "x,\"y\"");
  EXPECT_EQ(f.rows[1][0], "multi\nline");
  EXPECT_EQ(f.lines[1], 3);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "f.csv:5: 3 fields, the header has 2; line skipped");
  EXPECT_EQ(errors[0].where, "f.csv:5");  // the place apart from the problem
  EXPECT_EQ(errors[0].severity, Severity::kError);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "f.csv:6: torn last line (the writer stopped mid-record); line skipped");
  EXPECT_EQ(warnings[0].severity, Severity::kWarning);
  // Not appended (itwinai's whole-file CSVs): a last line without newline is a record.
  warnings.clear();
  CsvFile g = parse_csv("a,b\r\n1,2", "g.csv", false, &warnings, &errors);
  ASSERT_EQ(g.rows.size(), 1u);
  EXPECT_EQ(g.rows[0][1], "2");
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
}  // namespace scaleprof::report

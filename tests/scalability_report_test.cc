// The scalability report on hand-made inputs: every number checked against values worked out by
// hand (in the comments), for scaleprof run directories (itwinai's CSV layout:
// scalability_report_itwinai_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "analysis/scalability.h"
#include "engine/run_trace_metrics.h"
#include "importers/run_data_reader.h"
#include "report/plot_specs.h"
#include "report/scalability_explanation.h"
#include "report/scalability_report.h"
#include "scalability_fixtures.h"
#include "scalability_report_helpers.h"

namespace scaleprof::report {
namespace {

using engine::add_trace_metrics;
using importers::read_scalability_data;
using importers::ScalabilityReadOptions;
using testing::find_group;
using testing::ScratchDir;
using namespace report_test;  // NOLINT(google-build-using-namespace): the helpers of these tests

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

}  // namespace
}  // namespace scaleprof::report

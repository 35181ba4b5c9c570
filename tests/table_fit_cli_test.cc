// Issue 22 item 4: every console table of `report` and `trace` fits a 100-column terminal, and
// --wide keeps every column. The report on a run root made here (several strategies and scales,
// throughput, the loss and Amdahl tables); every trace subcommand on the shared traces (skipped
// without ../shared).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "report/name_shorten.h"
#include "scalability_fixtures.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
using scaleprof::testing::CliRun;
using scaleprof::testing::ScratchDir;

CliRun run(const std::string& args, const std::string& env) {
  return scaleprof::testing::run_cli(args, env);
}

// Lines wider than `width` display columns (UTF-8 aware: an ellipsis is one), each with its width.
std::string too_wide(const std::string& text, size_t width) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line = std::string_view(text).substr(start, end - start);
    const size_t w = scaleprof::report::display_width(line);
    if (w > width) out += std::to_string(w) + ": " + std::string(line) + "\n";
    start = end + 1;
  }
  return out;
}

size_t widest(const std::string& text) {
  size_t w = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    w = std::max(w, scaleprof::report::display_width(std::string_view(text).substr(start, end - start)));
    start = end + 1;
  }
  return w;
}

// epochs.csv with samples: every epoch of every rank `samples` samples.
std::string epochs_with_samples(const std::vector<double>& seconds, int samples) {
  std::string out = "epoch,start_unix_ns,end_unix_ns,duration_s,samples\n";
  for (size_t i = 0; i < seconds.size(); ++i) {
    out += std::to_string(i) + "," + std::to_string(1000 + i) + "," + std::to_string(2000 + i) + "," +
           std::to_string(seconds[i]) + "," + std::to_string(samples) + "\n";
  }
  return out;
}

// Two strategies at three scales each, with samples (throughput and scaling mode), GPU samples and
// traces at both ends (the loss table with its causes), so every console table of the report is there.
void build_root(const ScratchDir& root) {
  using scaleprof::testing::make_run;
  for (const char* strategy : {"ddp", "deepspeed"}) {
    const std::string s = strategy;
    const double slow = s == "ddp" ? 0.0 : 0.5;
    int workers = 1;
    for (const std::vector<double>& times : {std::vector<double>{10, 9, 9}, {6, 5, 5}, {4, 3, 3}}) {
      std::vector<std::vector<double>> ranks(workers, times);
      for (auto& r : ranks) {
        for (double& t : r) t += slow;
      }
      const std::string folder = s + "-w" + std::to_string(workers);
      make_run(root, "exp", folder, folder, s, workers, ranks);
      for (int r = 0; r < workers; ++r) {
        root.write("exp/" + folder + "/rank-0000" + std::to_string(r) + "/epochs.csv",
                   epochs_with_samples(ranks[r], 64));
      }
      root.write("exp/" + folder + "/rank-00000/gpu.csv",
                 "time_unix_ns,device,utilization_pct,power_w,memory_used_bytes,energy_j\n"
                 "0,0,50,100,1,\n1000000000,0,70,200,1,\n2000000000,0,90,300,1,\n");
      workers *= 2;
    }
    root.write("exp/" + s + "-w1/rank-00000/traces/r0.pt.trace.json", scaleprof::testing::tiny_trace(0, 80, 0, 20));
    root.write("exp/" + s + "-w4/rank-00000/traces/r0.pt.trace.json", scaleprof::testing::tiny_trace(0, 70, 10, 20));
  }
  root.write("exp/gloo-w2/run.json", scaleprof::testing::run_json("exp", "gloo-w2", "gloo", 2, 1));
  for (int r = 0; r < 2; ++r) {
    const std::string dir = "exp/gloo-w2/rank-0000" + std::to_string(r);
    root.write(dir + "/rank.json", scaleprof::testing::rank_json(r, 2, "node01", "gloo"));
    root.write(dir + "/epochs.csv", epochs_with_samples({7, 6, 6}, 64));
  }
  root.write("exp/gloo-w2/rank-00000/traces/r0.pt.trace.json", scaleprof::testing::gloo_trace(0, 100, 300));
  root.write("exp/gloo-w2/rank-00001/traces/r1.pt.trace.json", scaleprof::testing::gloo_trace(1, 200, 200));
}

TEST(TableFit, EveryReportTableFitsAHundredColumnsAndWideKeepsAll) {
  ScratchDir root("table-fit-report");
  build_root(root);
  const std::string args = "report --no-plots --root " + root.path();
  const CliRun fit = run(args, "COLUMNS=100 SCALEPROF_GNUPLOT=");
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  // Every section with a table is there: the test covers what it claims.
  for (const char* title :
       {"Epoch time per strategy", "Relative speedup", "Amdahl fit", "Throughput per strategy", "GPU utilization",
        "GPU time by kind", "Time in collectives", "Efficiency lost", "Best strategy per scale", "Runs read"}) {
    EXPECT_NE(fit.out.find(title), std::string::npos) << title << "\n" << fit.out;
  }
  EXPECT_EQ(too_wide(fit.out, 100), "") << fit.out;
  // The Amdahl and loss tables had to give columns up, and say so under the table.
  EXPECT_NE(fit.out.find("Left out to fit 100 columns:"), std::string::npos) << fit.out;
  EXPECT_NE(fit.out.find("--wide shows every column"), std::string::npos) << fit.out;
  EXPECT_EQ(fit.out.find("Fit RMS (s)"), fit.out.rfind("Fit RMS (s)")) << "named once, in the note";

  // 120 columns without a terminal and without COLUMNS.
  const CliRun piped = run(args, "env -u COLUMNS SCALEPROF_GNUPLOT=");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(too_wide(piped.out, 120), "") << piped.out;

  // --wide: every column, headers on one line, wider than the terminal.
  const CliRun wide = run(args + " --wide", "COLUMNS=100 SCALEPROF_GNUPLOT=");
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_GT(widest(wide.out), 200u);
  EXPECT_EQ(wide.out.find("Left out to fit"), std::string::npos) << wide.out;
  EXPECT_EQ(wide.out.find("(continued)"), std::string::npos) << wide.out;
  for (const char* header :
       {"Serial fraction (%)", "a: serial (s)", "Fit RMS (s)", "Proj. eff. @4x (%)", "Kind",
        "Non-computation op. self time, from (%)", "Basis", "Ideal (samples/s)", "Energy rule", "Runner-up (s)"}) {
    EXPECT_NE(wide.out.find(header), std::string::npos) << header;
  }
  // CSV and JSON are no narrower than before: every column, whatever the terminal.
  const CliRun csv = run("report --no-plots --format csv --root " + root.path(), "COLUMNS=100 SCALEPROF_GNUPLOT=");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("rms_residual_s"), std::string::npos);
  EXPECT_NE(csv.out.find("non_computation_from_pct"), std::string::npos);
}

std::string shared_trace(const std::string& relative) {
  const fs::path p = fs::path(SCALEPROF_SHARED_DIR) / "traces/hta" / relative;
  return fs::exists(p) ? p.string() : "";
}

TEST(TableFit, EveryTraceTableFitsAHundredColumnsAndWideKeepsAll) {
  const std::string r0 = shared_trace("trace_filter/sampled_rank-0.json.gz");
  const std::string r1 = shared_trace("trace_filter/sampled_rank-1.json.gz");
  const std::string nccl = shared_trace("nccl_parser_config/nccl_data.json.gz");
  if (r0.empty() || r1.empty() || nccl.empty()) GTEST_SKIP() << "../shared/traces/hta not available";
  const std::string both = r0 + " " + r1;
  const std::vector<std::string> commands = {
      "summary " + both,   "breakdown " + both,   "kernels " + both,    "idle " + both,         "overlap " + nccl,
      "launch " + both,    "ops " + both,         "ops --top 0 " + r0,  "steps " + both,        "phases " + both,
      "decompose " + both, "collectives " + nccl, "stragglers " + both, "diff " + r0 + " " + r1};
  size_t dropped = 0;
  for (const std::string& command : commands) {
    const CliRun fit = run("trace " + command, "COLUMNS=100");
    ASSERT_TRUE(fit.exit_code == 0 || fit.exit_code == 3) << command << "\n" << fit.err;
    EXPECT_FALSE(fit.out.empty()) << command;
    EXPECT_EQ(too_wide(fit.out, 100), "") << command;
    if (fit.out.find("Left out to fit 100 columns") != std::string::npos) ++dropped;
    // --wide: nothing left out or folded. --wide --full-names: the layout of before, every name whole.
    const CliRun wide = run("trace " + command + " --wide", "COLUMNS=100");
    EXPECT_EQ(wide.out.find("Left out to fit"), std::string::npos) << command;
    EXPECT_EQ(wide.out.find("(continued)"), std::string::npos) << command;
  }
  EXPECT_GE(dropped, 3u) << "the wide trace tables (summary, ops, launch) give up columns at 100";

  // The operator table: 203 columns before; at 100 its key columns and times stay, the rest is named.
  const CliRun ops = run("trace ops --sort self_device " + both, "COLUMNS=100");
  ASSERT_EQ(ops.exit_code, 0) << ops.err;
  EXPECT_NE(ops.out.find("Left out to fit 100 columns:"), std::string::npos) << ops.out;
  EXPECT_NE(ops.out.find("CPU avg (us)"), std::string::npos) << ops.out;  // named in the note
  EXPECT_NE(ops.out.find("Calls"), std::string::npos) << ops.out;
  const CliRun ops_wide = run("trace ops --sort self_device --wide " + both, "COLUMNS=100");
  EXPECT_GT(widest(ops_wide.out), 150u) << ops_wide.out;
  for (const char* header : {"Self CPU (%)", "CPU avg (us)", "Device avg (us)", "Async", "Side"}) {
    EXPECT_NE(ops_wide.out.find(header), std::string::npos) << header;
  }
  // --full-names keeps names whole yet still leaves columns out; CSV has them all.
  const CliRun full = run("trace ops --sort self_device --full-names " + both, "COLUMNS=100");
  EXPECT_GT(widest(full.out), 1000u);
  EXPECT_NE(full.out.find("Left out to fit 100 columns:"), std::string::npos);
  const CliRun csv = run("trace ops --sort self_device --format csv " + both, "COLUMNS=100");
  EXPECT_NE(csv.out.find("rank,name,side,self_cpu_pct"), std::string::npos) << csv.out.substr(0, 300);
}

}  // namespace

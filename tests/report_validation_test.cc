// The report refuses absurd numbers instead of hanging on them or printing silently wrong results:
// each case names the file (and line where there is one), and exits 3 (input problem) or 4 (plots).
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_harness.h"
#include "scalability_fixtures.h"

namespace {

namespace fs = std::filesystem;
using scaleprof::testing::make_run;
using scaleprof::testing::ScratchDir;

using scaleprof::testing::CliRun;
using scaleprof::testing::slurp;

// `scaleprof ARGS` under a time limit (a runaway loop fails the test instead of hanging it).
CliRun run_limited(const std::string& args, const std::string& env = "") {
  return scaleprof::testing::run_cli(args, env, 60);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The row of `table` (in the report's JSON) whose `key` equals `value`.
simdjson::dom::element row_where(simdjson::dom::element doc, const char* table, const char* key, int64_t value) {
  for (simdjson::dom::element row : doc[table].get_array()) {
    if (int64_t(row[key]) == value) return row;
  }
  ADD_FAILURE() << "no row with " << key << " = " << value << " in " << table;
  return {};
}

void good_runs(const ScratchDir& root) {
  make_run(root, "exp", "w1", "w1", "ddp", 1, {{10, 8, 8}});
  make_run(root, "exp", "w2", "w2", "ddp", 2, {{6, 4, 4}, {6, 4, 4}});
}

// Item 4: one number must not hang the report, plots off or on.
TEST(ReportValidation, HugeWorldSizeIsAnErrorNotAHang) {
  ScratchDir root("validation-world");
  good_runs(root);
  const std::string dir = make_run(root, "exp", "huge", "huge", "ddp", 1, {{5, 3, 3}});
  root.write("exp/huge/run.json", R"({"schema_version": 1, "experiment": "exp", "run": "huge", "strategy": "ddp", )"
                                  R"("world_size": 1152921504606846976, "nodes": 1, "status": "completed"})");
  for (const char* plots : {"--no-plots", "--plot-dir"}) {
    const std::string extra = std::string(plots) == "--no-plots" ? "--no-plots" : "--plot-dir " + (root / "plots");
    CliRun r = run_limited("report --format json " + extra + " --root " + root.path(), "SCALEPROF_GNUPLOT=");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_TRUE(contains(r.err, "error: " + dir + "/run.json: world_size 1152921504606846976 is out of range (1 to " +
                                    "16777216); 1 worker(s) taken from the rank folders instead"))
        << r.err;
  }
}

TEST(ReportValidation, NegativeWorldSizeIsAnError) {
  ScratchDir root("validation-negative-world");
  good_runs(root);
  const std::string dir = make_run(root, "exp", "neg", "neg", "ddp", 2, {{5, 3, 3}, {5, 3, 3}});
  root.write("exp/neg/run.json", R"({"schema_version": 1, "run": "neg", "strategy": "ddp", "world_size": -4})");
  CliRun r = run_limited("report --no-plots --root " + root.path());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(
      r.err, "error: " + dir +
                 "/run.json: world_size -4 is out of range (1 to 16777216); 2 worker(s) taken from the rank folders "
                 "instead"))
      << r.err;
}

TEST(ReportValidation, HugeItwinaiNodesIsAnErrorNotAHang) {
  ScratchDir root("validation-nodes");
  root.write("epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n0,10,ddp,1\n1,9,ddp,1\n2,9,ddp,1\n");
  const std::string bad = root.write("epoch-time/epochtime_ddp_2N.csv",
                                     "epoch_id,time,name,nodes\n0,6,ddp,1152921504606846976\n1,5,ddp,2\n2,5,ddp,2\n");
  CliRun r = run_limited("report --no-plots --format json --root " + root.path());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "error: " + bad + ":2: nodes 1152921504606846976 is out of range (1 to 4194304 with " +
                                  "--gpus-per-node 4); line skipped"))
      << r.err;
}

// Item 7: numbers that used to come out silently wrong.
TEST(ReportValidation, DuplicateEpochLinesKeepTheFirstAndWarn) {
  ScratchDir root("validation-duplicates");
  make_run(root, "exp", "w1", "w1", "ddp", 1, {{10, 8, 8}});
  const std::string dir = make_run(root, "exp", "w2", "w2", "ddp", 2, {{6, 4, 4}, {6, 4, 4}});
  // Rank 1 wrote epoch 1 twice (a restarted process appending to the same file).
  root.write("exp/w2/rank-00001/epochs.csv",
             "epoch,start_unix_ns,end_unix_ns,duration_s,samples\n0,1,2,6,\n1,3,4,4,\n2,5,6,4,\n1,7,8,0.08,\n");
  CliRun r = run_limited("report --no-plots --format json --root " + root.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "warning: " + dir +
                                  "/rank-00001/epochs.csv:5: epoch 1 recorded again (first on line 3); the "
                                  "first record is used"))
      << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc)) << r.out;
  EXPECT_DOUBLE_EQ(double(row_where(doc, "scaling", "workers", 2)["efficiency_pct"]), 100.0);
}

TEST(ReportValidation, HugeItwinaiSelfTimeIsAnError) {
  ScratchDir root("validation-self-time");
  root.write("epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n0,10,ddp,1\n1,9,ddp,1\n");
  const std::string bad = root.write("computation-data/ddp_4_0.csv",
                                     "name,self_cuda_time_total,strategy,num_gpus,global_rank\n"
                                     "ProfilerStep#1,100,ddp,4,0\naten::mm,1e300,ddp,4,0\naten::mm,50,ddp,4,0\n");
  CliRun r = run_limited("report --no-plots --format json --root " + root.path());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(
      contains(r.err, "error: " + bad + ":3: self_cuda_time_total 1e+300 is out of range (0 to 1e12 us); line skipped"))
      << r.err;
  EXPECT_FALSE(contains(r.out, "-9.2")) << r.out;
}

TEST(ReportValidation, NegativePowerAndUtilizationAbove100AreRejected) {
  ScratchDir root("validation-gpu");
  good_runs(root);
  const std::string gpu = root.write("exp/w1/rank-00000/gpu.csv",
                                     "time_unix_ns,device,utilization_pct,power_w,memory_used_bytes,energy_j\n"
                                     "0,0,50,100,1,\n1000000000,0,250,-5000,1,\n2000000000,0,70,100,1,\n");
  CliRun r = run_limited("report --no-plots --format json --root " + root.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "warning: " + gpu + ":3: utilization_pct 250 is outside 0 to 100; value ignored"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "warning: " + gpu + ":3: power_w -5000 is negative; value ignored")) << r.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(r.out).get(doc)) << r.out;
  simdjson::dom::element g = row_where(doc, "gpu", "workers", 1);
  EXPECT_DOUBLE_EQ(double(g["utilization_pct"]), 60.0);              // (50 + 70) / 2
  EXPECT_NEAR(double(g["energy_wh_total"]), 200.0 / 3600.0, 1e-12);  // 100 W over 2 s
}

TEST(ReportValidation, ItwinaiGpuValuesAreCheckedToo) {
  ScratchDir root("validation-itwinai-gpu");
  root.write("epoch-time/epochtime_ddp_1N.csv", "epoch_id,time,name,nodes\n0,10,ddp,1\n1,9,ddp,1\n");
  const std::string gpu =
      root.write("gpu-energy-data/ddp_4.csv",
                 "sample_idx,utilization,power,local_rank,node_idx,num_global_gpus,strategy,probing_interval\n"
                 "0,50,100,0,0,4,ddp,1\n1,250,-100,0,0,4,ddp,1\n2,70,100,0,0,4,ddp,1\n");
  CliRun r = run_limited("report --no-plots --format json --root " + root.path());
  EXPECT_TRUE(contains(r.err, "warning: " + gpu + ":3: utilization 250 is outside 0 to 100; value ignored")) << r.err;
  EXPECT_TRUE(contains(r.err, "warning: " + gpu + ":3: power -100 is negative; value ignored")) << r.err;
}

// Item 10: a plot failure is not an input problem.
TEST(ReportValidation, PlotFailureHasItsOwnExitCode) {
  ScratchDir root("validation-plots");
  good_runs(root);
  CliRun r =
      run_limited("report --root " + root.path() + " --plot-dir " + (root / "plots"), "SCALEPROF_GNUPLOT=/bin/false");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "error: plots: gnuplot failed")) << r.err;
  EXPECT_FALSE(contains(r.err, "input problem")) << r.err;
  EXPECT_TRUE(contains(r.out, "Epoch Time Report"));
  // With an input problem as well, the input problem wins (exit 3) and is the only one counted.
  root.write("exp/w2/rank-00001/epochs.csv", "epoch,duration_s\n0,6\n1,oops\n2,4\n");
  CliRun both =
      run_limited("report --root " + root.path() + " --plot-dir " + (root / "plots"), "SCALEPROF_GNUPLOT=/bin/false");
  EXPECT_EQ(both.exit_code, 3) << both.err;
  EXPECT_TRUE(contains(both.err, "report is partial: 1 input problem(s)")) << both.err;
}

}  // namespace

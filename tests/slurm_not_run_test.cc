// Jobs of `scaleprof slurm` that never ran their configuration (issue 32): a job cancelled while
// pending has no run directory; `slurm status` records it in <root>/<experiment>/jobs-not-run.txt
// and the report shows its configuration as one that did not run, with SLURM's state, beside the
// configurations that ran (stand-in sbatch and squeue on PATH; no SLURM needed).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "importers/jobs_not_run.h"
#include "scalability_fixtures.h"
#include "test_paths.h"

namespace scaleprof {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

// sbatch answering 100, 101, ...; squeue answering with the text of the file `squeue.txt` beside it.
std::string fake_slurm(const ScratchDir& dir) {
  dir.write("bin/sbatch",
            "#!/bin/bash\nf=\"$(dirname \"$0\")/next\"\nn=$(cat \"$f\" 2>/dev/null || echo 100)\n"
            "echo $((n + 1)) > \"$f\"\necho \"$n\"\n");
  dir.write("bin/squeue", "#!/bin/bash\ncat \"$(dirname \"$0\")/squeue.txt\"\n");
  dir.write("bin/scontrol", "#!/bin/bash\nexit 0\n");
  dir.write("bin/sacct", "#!/bin/bash\necho 'Slurm accounting storage is disabled' >&2\nexit 1\n");
  for (const char* tool : {"sbatch", "squeue", "scontrol", "sacct"}) {
    fs::permissions(dir / (std::string("bin/") + tool), fs::perms::owner_all);
  }
  return "cd " + dir.path() + " && PATH=" + (dir / "bin") + ":$PATH ";
}

TEST(SlurmNotRun, JobCancelledWhilePendingIsAConfigurationThatDidNotRun) {
  ScratchDir dir("not-run");
  ScratchDir metrics("not-run-metrics");
  const std::string env = fake_slurm(dir);
  dir.write("a.yaml", "experiment: cnn\nroot: " + metrics.path() +
                          "\ntraining_cmd: python t.py\ngpus_per_node: 2\nmode: scaling-test\n"
                          "strategies: [ddp]\nscalability_nodes: [1, 2, 4]\nreport: false\n");
  const testing::CliRun submitted = testing::run_shell(env + SCALEPROF_CLI_PATH + " slurm -c a.yaml");
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err << submitted.out;  // 100: 1 node, 101: 2, 102: 4
  EXPECT_NE(testing::slurp(dir / "slurm-scripts/submitted.jsonl").find("\"processes_per_node\": 2"), std::string::npos);
  // 100 and 102 ran; 101 was cancelled while it was pending (SLURM: CANCELLED, 0:00 elapsed).
  testing::make_run(metrics, "cnn", "ddp-n1-r1-slurm100", "ddp-n1-r1-slurm100", "ddp", 2, {{50, 50, 50}, {50, 50, 50}});
  testing::make_run(
      metrics, "cnn", "ddp-n4-r1-slurm102", "ddp-n4-r1-slurm102", "ddp", 8,
      {{20, 20, 20}, {20, 20, 20}, {20, 20, 20}, {20, 20, 20}, {20, 20, 20}, {20, 20, 20}, {20, 20, 20}, {20, 20, 20}},
      4);
  dir.write("bin/squeue.txt", "100|COMPLETED|0:50\n101|CANCELLED|0:00\n102|COMPLETED|0:30\n");
  const testing::CliRun status =
      testing::run_shell(env + SCALEPROF_CLI_PATH + " slurm status --script-dir slurm-scripts --format csv");
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("101,job,ddp,2,1,cancelled,CANCELLED"), std::string::npos) << status.out;
  EXPECT_EQ(testing::slurp(metrics / "cnn/jobs-not-run.txt"),
            "job_id\tstrategy\tnodes\tworkers\trepetition\trun_prefix\tslurm_state\tstate\telapsed_s\n"
            "101\tddp\t2\t4\t1\tddp-n2-r1\tCANCELLED\tcancelled\t0\n");

  const std::string report_args = " report --root " + metrics.path() + " --experiment cnn --no-plots --format csv";
  const testing::CliRun report = testing::run_shell(env + SCALEPROF_CLI_PATH + report_args);
  EXPECT_EQ(report.exit_code, 3) << report.err;  // partial: a configuration has no figures
  EXPECT_NE(report.out.find("ddp,4,2,1,0,,,,,,\"NOT RUN: cancelled before it ran (SLURM state CANCELLED, job 101)\",,"),
            std::string::npos)
      << report.out;
  // The explanation (JSON's `explanation`, the console's Epoch Time Report) says what did not run.
  const testing::CliRun json = testing::run_shell(env + SCALEPROF_CLI_PATH + " report --root " + metrics.path() +
                                                  " --experiment cnn --no-plots --format json");
  EXPECT_EQ(json.exit_code, 3) << json.err;
  EXPECT_NE(json.out.find("ddp: baseline is 2 workers, its smallest scale that completed; 4 workers did not run "
                          "(cancelled before it ran (SLURM state CANCELLED, job 101))."),
            std::string::npos)
      << json.out.substr(0, 3000);
  EXPECT_NE(report.err.find("did not run: cancelled before it ran (SLURM state CANCELLED, job 101)"), std::string::npos)
      << report.err;

  // When the job runs after all (requeued), its run replaces the record: nothing is left to show.
  testing::make_run(metrics, "cnn", "ddp-n2-r1-slurm101", "ddp-n2-r1-slurm101", "ddp", 4,
                    {{30, 30, 30}, {30, 30, 30}, {30, 30, 30}, {30, 30, 30}}, 2);
  dir.write("bin/squeue.txt", "100|COMPLETED|0:50\n101|COMPLETED|0:40\n102|COMPLETED|0:30\n");
  ASSERT_EQ(testing::run_shell(env + SCALEPROF_CLI_PATH + " slurm status --script-dir slurm-scripts").exit_code, 0);
  EXPECT_EQ(testing::slurp(metrics / "cnn/jobs-not-run.txt"),
            "job_id\tstrategy\tnodes\tworkers\trepetition\trun_prefix\tslurm_state\tstate\telapsed_s\n");
  const testing::CliRun all_ran = testing::run_shell(env + SCALEPROF_CLI_PATH + report_args);
  EXPECT_EQ(all_ran.exit_code, 0) << all_ran.err;
  EXPECT_EQ(all_ran.out.find("NOT RUN"), std::string::npos) << all_ran.out;
}

TEST(SlurmNotRun, RecordsAreParsedStrictly) {
  std::vector<std::string> warnings;
  const auto jobs = importers::parse_jobs_not_run(
      "job_id\tstrategy\tnodes\tworkers\trepetition\trun_prefix\tslurm_state\tstate\telapsed_s\n"
      "7\tddp\t2\t8\t1\tddp-n2-r1\tCANCELLED\tcancelled\t0\n"
      "8\tddp\t0\t8\t1\tddp-n0-r1\tCANCELLED\tcancelled\t0\n"  // no nodes
      "9\tddp;rm\t2\t8\t1\tx\tFAILED\tfailed\t-\n"             // not a strategy name
      "10\tfsdp\t1\t4\t2\tfsdp-n1-r2\tNODE_FAIL\tfailed\t65\n"
      "11\tddp\t1\t4\t1\tddp-n1-r1\tPENDING\tpen",  // torn
      "x/jobs-not-run.txt", &warnings);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(importers::not_run_reason(jobs[0]), "cancelled before it ran (SLURM state CANCELLED, job 7)");
  EXPECT_EQ(importers::not_run_reason(jobs[1]),
            "failed after 0:01:05 without recording a run (SLURM state NODE_FAIL, job 10)");
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_EQ(warnings[0].rfind("x/jobs-not-run.txt:3: not a job record", 0), 0u) << warnings[0];
  EXPECT_EQ(warnings[2], "x/jobs-not-run.txt:6: torn last line (the writer stopped mid-record); skipped");
}

}  // namespace
}  // namespace scaleprof

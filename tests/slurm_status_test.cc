// SLURM job status: the clients' output parsed (squeue, scontrol, sacct), the run directory as the
// fallback when SLURM has forgotten a job, and the submitted-jobs records.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "collect/run_records.h"
#include "launch/job_status.h"
#include "launch/submission.h"

namespace scaleprof::launch {
namespace {

namespace fs = std::filesystem;

TEST(SlurmStatus, ParsesTheClientsOutput) {
  auto q = parse_squeue("12|PENDING|0:00\n13|RUNNING|1:05\n14|COMPLETED|1-02:03:04\n");
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q["12"].state, "PENDING");
  EXPECT_EQ(q["13"].elapsed_s, 65);
  EXPECT_EQ(q["14"].elapsed_s, 93784);
  auto s = parse_scontrol_job(
      "JobId=15 JobName=it-ddp-n1-r1\n   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)\n"
      "   RunTime=00:00:07 TimeLimit=00:10:00\n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, "FAILED");
  EXPECT_EQ(s->elapsed_s, 7);
  auto a = parse_sacct("16|COMPLETED|00:01:00\n16.batch|COMPLETED|00:01:00\n17|CANCELLED by 0|00:00:00\n");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a["16"].elapsed_s, 60);
  EXPECT_EQ(state_class(a["17"].state), "cancelled");
  EXPECT_EQ(state_class("PENDING"), "pending");
  EXPECT_EQ(state_class("COMPLETING"), "running");
  EXPECT_EQ(state_class("TIMEOUT"), "failed");
  EXPECT_EQ(parse_slurm_duration("INVALID"), std::nullopt);
}

// When SLURM no longer knows a job (squeue and scontrol forgot it, no accounting database), the run
// directory the job wrote gives its outcome; each silent source is named in a note.
TEST(SlurmStatus, FallsBackToTheRunDirectoryWhenSlurmHasForgotten) {
  const fs::path dir = fs::temp_directory_path() / ("scaleprof-status-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "bin");
  const std::vector<std::pair<std::string, std::string>> tools = {
      {"squeue", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)"},
      {"scontrol", "slurm_load_jobs error: Invalid job id specified"},
      {"sacct", "Slurm accounting storage is disabled"}};
  for (const auto& tool : tools) {
    std::ofstream(dir / "bin" / tool.first) << "#!/bin/sh\necho '" << tool.second << "' >&2\nexit 1\n";
    fs::permissions(dir / "bin" / tool.first, fs::perms::owner_all);
  }
  collect::RunInfo info;
  info.experiment = "exp";
  info.run = "ddp-n2-r1-slurm42";
  info.strategy = "ddp";
  info.start_unix_ns = 1'763'767'200'000'000'000;
  info.end_unix_ns = *info.start_unix_ns + 65'000'000'000;
  info.exit_status = 0;
  info.status = "completed";
  info.writer = "wrapper";
  fs::create_directories(dir / "root" / "exp" / info.run);
  std::ofstream(dir / "root" / "exp" / info.run / "run.json") << collect::to_json(info);
  for (int64_t r = 0; r < 2; ++r) {
    collect::RankInfo rank;
    rank.rank = r;
    rank.world_size = 2;
    rank.host = "n" + std::to_string(r + 1);
    rank.start_unix_ns = info.start_unix_ns;
    rank.end_unix_ns = info.end_unix_ns;
    rank.status = "completed";
    rank.experiment = "exp";
    rank.run = info.run;
    const fs::path rank_dir = dir / "root" / "exp" / info.run / collect::rank_dir_name(r);
    fs::create_directories(rank_dir);
    std::ofstream(rank_dir / "rank.json") << collect::to_json(rank);
  }

  std::vector<SubmittedJob> jobs(2);
  for (SubmittedJob& j : jobs) {
    j.experiment = "exp";
    j.root = (dir / "root").string();
    j.strategy = "ddp";
    j.nodes = 2;
    j.repetition = 1;
    j.run_prefix = "ddp-n2-r1";
  }
  jobs[0].job_id = "42";
  jobs[1].job_id = "43";  // never wrote a run directory
  const std::string old_path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  ::setenv("PATH", ((dir / "bin").string() + ":" + old_path).c_str(), 1);
  std::vector<std::string> notes;
  const std::vector<JobStatus> st = job_statuses(jobs, &notes);
  ::setenv("PATH", old_path.c_str(), 1);
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].state, "completed");
  EXPECT_EQ(st[0].source, "run directory");
  EXPECT_EQ(st[0].run, "ddp-n2-r1-slurm42");
  EXPECT_EQ(st[0].elapsed_s, 65);
  EXPECT_EQ(st[0].slurm_state, "");
  EXPECT_EQ(st[1].state, "unknown");
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "squeue: slurm_load_jobs error: Unable to contact slurm controller (connect failure)",
                       "sacct: Slurm accounting storage is disabled"}));
  fs::remove_all(dir);
}

TEST(SlurmStatus, SubmittedRecordsRoundTrip) {
  SubmittedJob j;
  j.job_id = "42";
  j.job_name = "it-ddp-n2-r1";
  j.script = "dir/ddp \"n2\".sh";
  j.strategy = "ddp";
  j.nodes = 2;
  j.repetition = 1;
  j.experiment = "cnn";
  j.root = "/r";
  j.run_prefix = "ddp-n2-r1";
  j.submitted_unix_ns = 1763767200000000000;
  const fs::path path = fs::temp_directory_path() / ("scaleprof-submitted-" + std::to_string(::getpid()) + ".jsonl");
  std::ofstream(path) << submitted_line(j) << "{torn\n" << submitted_line(j).substr(0, 20);
  std::vector<std::string> warnings;
  auto jobs = read_submitted(path.string(), &warnings);
  ASSERT_TRUE(jobs);
  ASSERT_EQ(jobs.value().size(), 1u);
  EXPECT_EQ(jobs.value()[0].script, j.script);
  EXPECT_EQ(jobs.value()[0].nodes, 2);
  EXPECT_EQ(jobs.value()[0].submitted_unix_ns, j.submitted_unix_ns);
  EXPECT_EQ(warnings.size(), 2u);
  EXPECT_EQ(parse_job_id("1234\n"), "1234");
  EXPECT_EQ(parse_job_id("1234;cluster\n"), "1234");
  EXPECT_EQ(parse_job_id("sbatch: error\n"), "");
  fs::remove(path);
}

}  // namespace
}  // namespace scaleprof::launch

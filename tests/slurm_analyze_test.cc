// `scaleprof slurm analyze` (launch/analysis_jobs.h): shards planned from the input's ranks, the
// array's and the merge job's scripts against expected text and run with stand-in tools, the
// command with a stand-in sbatch (array first, merge with --dependency=afterok on it, both recorded;
// no overwrite without --force; --preview), and `slurm status` showing each array task and the merge.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "config/config.h"
#include "launch/analysis_jobs.h"
#include "launch/job_status.h"
#include "launch/launch_config.h"
#include "launch/submission.h"
#include "scalability_fixtures.h"
#include "test_paths.h"

namespace scaleprof::launch {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

LaunchConfig analysis_config(const std::string& yaml) {
  config::Config c(launch_fields());
  EXPECT_TRUE(c.merge_text(yaml, "a.yaml"));
  auto l = make_launch_config(c, "/work", "/opt/scaleprof", LaunchPurpose::kAnalysis);
  EXPECT_TRUE(l) << (l ? "" : l.error().message);
  return l ? l.value() : LaunchConfig{};
}

std::vector<ShardInput> ranks_of(const std::vector<int64_t>& ranks) {
  std::vector<ShardInput> out;
  for (int64_t r : ranks) out.push_back({r, {}});
  return out;
}

std::vector<std::string> ranks_text(const std::vector<AnalysisShard>& shards) {
  std::vector<std::string> out;
  for (const AnalysisShard& s : shards) out.push_back(s.ranks);
  return out;
}

AnalysisPlan ten_ranks_plan() {
  AnalysisPlan plan;
  plan.input = "/data/job 7/traces";
  plan.output_dir = "/data/job 7/traces/slurm-analysis";
  plan.analyses = {"collectives", "stragglers"};
  plan.format = "json";
  plan.gpus_per_node = 4;
  plan.common_paths = {"/data/job 7/traces"};
  plan.shards = plan_shards(ranks_of({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), 4);
  plan.rank_count = 10;
  plan.ranks_per_task = 4;
  return plan;
}

TEST(SlurmAnalyze, ShardsAreConsecutiveRunsOfRanks) {
  EXPECT_EQ(ranks_text(plan_shards(ranks_of({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), 4)),
            (std::vector<std::string>{"0-3", "4-7", "8-9"}));
  EXPECT_EQ(ranks_text(plan_shards(ranks_of({0, 2, 3, 7, 9}), 2)), (std::vector<std::string>{"0,2", "3,7", "9"}));
  EXPECT_EQ(ranks_text(plan_shards(ranks_of({5, 6}), 1)), (std::vector<std::string>{"5", "6"}));
  EXPECT_EQ(ranks_text(plan_shards(ranks_of({0, 1, 2}), 100)), (std::vector<std::string>{"0-2"}));
  // A run directory's ranks carry their own files; a shard gets exactly those of its ranks.
  std::vector<ShardInput> run = {{0, {"/r/rank-00000/traces/a.json"}},
                                 {1, {"/r/rank-00001/traces/b.json", "/r/rank-00001/traces/c.json"}},
                                 {2, {"/r/rank-00002/traces/d.json"}}};
  const std::vector<AnalysisShard> shards = plan_shards(run, 2);
  ASSERT_EQ(shards.size(), 2u);
  EXPECT_EQ(shards[0].paths, (std::vector<std::string>{"/r/rank-00000/traces/a.json", "/r/rank-00001/traces/b.json",
                                                       "/r/rank-00001/traces/c.json"}));
  EXPECT_EQ(shards[1].paths, (std::vector<std::string>{"/r/rank-00002/traces/d.json"}));
}

TEST(SlurmAnalyze, PlanChecksNameWhatIsWrong) {
  AnalysisPlan plan = ten_ranks_plan();
  EXPECT_TRUE(check_analysis_plan(plan));
  plan.analyses = {"summary"};
  auto bad = check_analysis_plan(plan);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, ErrorKind::kUsage);
  EXPECT_NE(bad.error().message.find("'summary' cannot be split into shards; choose collectives or stragglers"),
            std::string::npos)
      << bad.error().message;
  plan = ten_ranks_plan();
  plan.analyses = {"collectives", "collectives"};
  EXPECT_FALSE(check_analysis_plan(plan));
  plan = ten_ranks_plan();
  plan.format = "html";
  EXPECT_FALSE(check_analysis_plan(plan));
  plan = ten_ranks_plan();
  plan.output_dir = "/data/100%/out";  // SLURM would read %/ in --output as a pattern
  EXPECT_FALSE(check_analysis_plan(plan));
  plan.output_dir = "relative/out";
  EXPECT_FALSE(check_analysis_plan(plan));
  // The input is named in a comment of the script: a line break there would start a command.
  plan = ten_ranks_plan();
  plan.input = "/data/x\nrm -rf ~";
  auto hostile = check_analysis_plan(plan);
  ASSERT_FALSE(hostile);
  EXPECT_NE(hostile.error().message.find("is not allowed"), std::string::npos) << hostile.error().message;
  plan = ten_ranks_plan();
  plan.shards[1].paths = {"/r/a\u202Eb.json"};
  EXPECT_FALSE(check_analysis_plan(plan));
  plan = ten_ranks_plan();
  plan.shards = plan_shards(ranks_of(std::vector<int64_t>(kMaxShards + 1, 0)), 1);
  auto many = check_analysis_plan(plan);
  ASSERT_FALSE(many);
  EXPECT_EQ(many.error().kind, ErrorKind::kTooLarge);
}

const char* kShardExpected = R"sh(#!/bin/bash
#SBATCH --job-name=big-analyze
#SBATCH --account=proj
#SBATCH --partition=debug
#SBATCH --time=00:20:00
#SBATCH --output="/data/job 7/traces/slurm-analysis/logs/%x-%A_%a.out"
#SBATCH --error="/data/job 7/traces/slurm-analysis/logs/%x-%A_%a.err"
#SBATCH --array=0-2
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=4
#SBATCH --mem=8G

# scaleprof slurm analyze: collectives and stragglers of 10 rank(s) of /data/job 7/traces, in 3 array task(s) of at most 4 rank(s);
# task i writes /data/job 7/traces/slurm-analysis/shards/<analysis>-i.json; merge.sh, which waits for every task to succeed, makes the result.
set -eo pipefail

# Environment (env: the values are expanded by this shell)
export OMP_NUM_THREADS=1

# This task's ranks (every task lists /data/job 7/traces and reads only the files of its ranks)
paths=('/data/job 7/traces')
case "$SLURM_ARRAY_TASK_ID" in
  0) ranks=0-3 ;;
  1) ranks=4-7 ;;
  2) ranks=8-9 ;;
  *) echo "scaleprof slurm analyze: no task $SLURM_ARRAY_TASK_ID in this array (0-2)" >&2; exit 2 ;;
esac
echo "scaleprof slurm analyze: task $SLURM_ARRAY_TASK_ID of array job $SLURM_ARRAY_JOB_ID on ${SLURMD_NODENAME:-$(hostname -s)}, ranks $ranks, cpus per task ${SLURM_CPUS_PER_TASK:-not set}"

# A failing shard fails its task (exit 3: some trace unreadable), so the merge never runs on a part.
/opt/scaleprof trace collectives "${paths[@]}" --ranks="$ranks" --threads=4 --gpus-per-node=4 --partial='/data/job 7/traces/slurm-analysis/shards/collectives-'"$SLURM_ARRAY_TASK_ID".json
/opt/scaleprof trace stragglers "${paths[@]}" --ranks="$ranks" --threads=4 --gpus-per-node=4 --partial='/data/job 7/traces/slurm-analysis/shards/stragglers-'"$SLURM_ARRAY_TASK_ID".json
)sh";

const char* kMergeExpected = R"sh(#!/bin/bash
#SBATCH --job-name=big-analyze-merge
#SBATCH --account=proj
#SBATCH --partition=debug
#SBATCH --time=00:20:00
#SBATCH --output="/data/job 7/traces/slurm-analysis/logs/%x-%j.out"
#SBATCH --error="/data/job 7/traces/slurm-analysis/logs/%x-%j.err"
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=4
#SBATCH --mem=8G

# scaleprof slurm analyze: merges the 3 shard(s) of shards.sh (submitted with --dependency=afterok
# on its array) into the output of one run over all 10 rank(s).
set -eo pipefail

# Environment (env: the values are expanded by this shell)
export OMP_NUM_THREADS=1

echo "scaleprof slurm analyze: merge job $SLURM_JOB_ID on ${SLURMD_NODENAME:-$(hostname -s)}"

# collectives: every task's shard, by task number
shards=()
for task in $(seq 0 2); do shards+=('/data/job 7/traces/slurm-analysis/shards/collectives-'"$task".json); done
/opt/scaleprof trace merge "${shards[@]}" --format=json --gpus-per-node=4 --output='/data/job 7/traces/slurm-analysis/collectives.json'

# stragglers: every task's shard, by task number
shards=()
for task in $(seq 0 2); do shards+=('/data/job 7/traces/slurm-analysis/shards/stragglers-'"$task".json); done
/opt/scaleprof trace merge "${shards[@]}" --format=json --gpus-per-node=4 --output='/data/job 7/traces/slurm-analysis/stragglers.json'
)sh";

// The configuration needs no training_cmd for analysis jobs, and only its scheduling and environment
// fields reach the scripts.
TEST(SlurmAnalyze, ScriptsExpectedText) {
  const LaunchConfig c = analysis_config(
      "partition: debug\naccount: proj\ntime: 00:20:00\ncpus_per_task: 4\nmem: 8G\njob_name: big\n"
      "gpus_per_node: 4\nenv:\n  OMP_NUM_THREADS: '1'\n");
  const AnalysisPlan plan = ten_ranks_plan();
  EXPECT_EQ(render_shard_script(c, plan), kShardExpected);
  EXPECT_EQ(render_merge_script(c, plan), kMergeExpected);
}

// The scripts do what they say: run with stand-in tools that print their arguments, task 1 analyses
// ranks 4-7 of the folder and writes its shards; the merge reads every task's shard in task order.
TEST(SlurmAnalyze, ScriptsRunWithStandInTools) {
  ScratchDir dir("analyze-run");
  dir.write("bin/scaleprof", "#!/bin/bash\nprintf '%s|' \"$@\"\necho\n");
  fs::permissions(dir / "bin/scaleprof", fs::perms::owner_all);
  const LaunchConfig c = analysis_config("scaleprof_bin: " + (dir / "bin/scaleprof") + "\ncpus_per_task: 2\n");
  AnalysisPlan plan = ten_ranks_plan();
  plan.gpus_per_node = 0;
  plan.output_dir = dir / "out dir";
  dir.write("shards.sh", render_shard_script(c, plan));
  dir.write("merge.sh", render_merge_script(c, plan));
  const std::string env = "cd " + dir.path() + " && SLURM_ARRAY_JOB_ID=7 SLURMD_NODENAME=n1 ";
  testing::CliRun task = testing::run_shell(env + "SLURM_ARRAY_TASK_ID=1 bash shards.sh");
  ASSERT_EQ(task.exit_code, 0) << task.err;
  EXPECT_EQ(task.out,
            "scaleprof slurm analyze: task 1 of array job 7 on n1, ranks 4-7, cpus per task not set\n"
            "trace|collectives|/data/job 7/traces|--ranks=4-7|--threads=2|--partial=" +
                plan.output_dir +
                "/shards/collectives-1.json|\n"
                "trace|stragglers|/data/job 7/traces|--ranks=4-7|--threads=2|--partial=" +
                plan.output_dir + "/shards/stragglers-1.json|\n");
  testing::CliRun none = testing::run_shell(env + "SLURM_ARRAY_TASK_ID=3 bash shards.sh");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, "scaleprof slurm analyze: no task 3 in this array (0-2)\n");
  testing::CliRun merge =
      testing::run_shell("cd " + dir.path() + " && SLURM_JOB_ID=8 SLURMD_NODENAME=n2 bash merge.sh");
  ASSERT_EQ(merge.exit_code, 0) << merge.err;
  const std::string shards = plan.output_dir + "/shards/";
  EXPECT_EQ(merge.out,
            "scaleprof slurm analyze: merge job 8 on n2\n"
            "trace|merge|" +
                shards + "collectives-0.json|" + shards + "collectives-1.json|" + shards +
                "collectives-2.json|--format=json|--output=" + plan.output_dir +
                "/collectives.json|\n"
                "trace|merge|" +
                shards + "stragglers-0.json|" + shards + "stragglers-1.json|" + shards +
                "stragglers-2.json|--format=json|--output=" + plan.output_dir + "/stragglers.json|\n");
  // A run directory's ranks: each task gets its own files, no folder to list.
  plan.common_paths.clear();
  plan.shards = plan_shards({{0, {"/r/rank-00000/traces/a b.json"}}, {1, {"/r/rank-00001/traces/c.json"}}}, 1);
  dir.write("run.sh", render_shard_script(c, plan));
  testing::CliRun run = testing::run_shell(env + "SLURM_ARRAY_TASK_ID=0 bash run.sh");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("trace|collectives|/r/rank-00000/traces/a b.json|--ranks=0|"), std::string::npos) << run.out;
}

// A stand-in sbatch on PATH: answers job ids from 100 up and appends each call's arguments to bin/calls.
std::string fake_sbatch(const ScratchDir& dir) {
  dir.write("bin/sbatch",
            "#!/bin/bash\nd=\"$(dirname \"$0\")\"\nn=$(cat \"$d/next\" 2>/dev/null || echo 100)\n"
            "echo $((n + 1)) > \"$d/next\"\necho \"$*\" >> \"$d/calls\"\necho \"$n\"\n");
  fs::permissions(dir / "bin/sbatch", fs::perms::owner_all);
  return "cd " + dir.path() + " && PATH=" + (dir / "bin") + ":$PATH ";
}

TEST(SlurmAnalyzeCommand, SubmitsTheArrayThenTheMergeAfterIt) {
  ScratchDir dir("analyze-cmd");
  const std::string env = fake_sbatch(dir);
  // Planning reads no trace: the ranks come from the file names.
  for (int r = 0; r < 6; ++r) dir.write("traces/rank-" + std::to_string(r) + ".json", "{}");
  const std::string cli = std::string(SCALEPROF_CLI_PATH) + " slurm analyze traces --ranks-per-task 4";
  const std::string out = dir / "traces/slurm-analysis";
  testing::CliRun first = testing::run_shell(env + cli + " --partition debug");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out,
            "submitted job array 100: 2 task(s), 4 rank(s) each at most\n"
            "submitted job 101: merge (runs when every task succeeded)\n"
            "result: " +
                out +
                "/collectives.txt\n"
                "recorded in " +
                out + "/submitted.jsonl; follow with: scaleprof slurm status --script-dir " + out + "\n");
  EXPECT_EQ(testing::slurp(dir / "bin/calls"),
            "--parsable " + out + "/shards.sh\n--parsable --dependency=afterok:100 " + out + "/merge.sh\n");
  const std::string shards = testing::slurp(out + "/shards.sh");
  EXPECT_NE(shards.find("#SBATCH --partition=debug\n"), std::string::npos) << shards;
  EXPECT_NE(shards.find("#SBATCH --array=0-1\n"), std::string::npos) << shards;
  EXPECT_NE(shards.find("  0) ranks=0-3 ;;\n  1) ranks=4-5 ;;\n"), std::string::npos) << shards;
  EXPECT_TRUE(fs::is_directory(out + "/logs"));
  EXPECT_TRUE(fs::is_directory(out + "/shards"));
  std::vector<std::string> warnings;
  auto recorded = read_submitted(out + "/submitted.jsonl", &warnings);
  ASSERT_TRUE(recorded);
  ASSERT_EQ(recorded.value().size(), 2u);
  EXPECT_EQ(recorded.value()[0].kind, "analysis-shards");
  EXPECT_EQ(recorded.value()[0].job_id, "100");
  EXPECT_EQ(recorded.value()[0].job_name, "scaleprof-analyze");
  EXPECT_EQ(recorded.value()[0].array_tasks, 2);
  EXPECT_EQ(recorded.value()[0].output, out + "/shards/collectives-%a.json");
  EXPECT_EQ(recorded.value()[1].kind, "analysis-merge");
  EXPECT_EQ(recorded.value()[1].job_id, "101");
  EXPECT_EQ(recorded.value()[1].output, out + "/collectives.txt");

  // The same folder again: refused, nothing submitted.
  testing::CliRun again = testing::run_shell(env + cli);
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(
      again.err.find(out + "/shards.sh exists already: an earlier analysis went to " + out + "; --force replaces it"),
      std::string::npos)
      << again.err;
  // A preview looks at nothing and submits nothing.
  testing::CliRun preview = testing::run_shell(env + cli + " --preview");
  EXPECT_EQ(preview.exit_code, 0) << preview.err;
  EXPECT_EQ(preview.out.rfind("#################### shards.sh ####################\n#!/bin/bash\n", 0), 0u)
      << preview.out;
  EXPECT_NE(preview.out.find("#################### merge.sh ####################\n"), std::string::npos);
  EXPECT_EQ(testing::run_shell(env + cli + " --preview -j").exit_code, 2);
  // --force: the earlier shards are removed (never merged with the new ones), the jobs superseded.
  dir.write("traces/slurm-analysis/shards/collectives-7.json", "{}");
  testing::CliRun forced = testing::run_shell(env + cli + " --analysis collectives,stragglers --format csv --force");
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(forced.err.find("superseded the earlier analysis in " + out + ": job(s) 100, 101; they are not cancelled"),
            std::string::npos)
      << forced.err;
  EXPECT_FALSE(fs::exists(out + "/shards/collectives-7.json"));
  EXPECT_NE(forced.out.find("result: " + out + "/stragglers.csv\n"), std::string::npos) << forced.out;
  recorded = read_submitted(out + "/submitted.jsonl", &warnings);
  ASSERT_TRUE(recorded);
  ASSERT_EQ(recorded.value().size(), 4u);
  EXPECT_TRUE(recorded.value()[0].superseded);
  EXPECT_TRUE(recorded.value()[1].superseded);
  EXPECT_FALSE(recorded.value()[2].superseded);
  EXPECT_EQ(recorded.value()[3].output, out + "/stragglers.csv");
  EXPECT_TRUE(warnings.empty());
}

TEST(SlurmAnalyzeCommand, BadRequestsAreUsageErrors) {
  ScratchDir dir("analyze-bad");
  const std::string env = fake_sbatch(dir);
  dir.write("traces/rank-0.json", "{}");
  const std::string cli = std::string(SCALEPROF_CLI_PATH) + " slurm analyze ";
  testing::CliRun summary = testing::run_shell(env + cli + "traces --ranks-per-task 4 --analysis summary");
  EXPECT_EQ(summary.exit_code, 2);
  EXPECT_NE(summary.err.find("'summary' cannot be split into shards"), std::string::npos) << summary.err;
  EXPECT_EQ(testing::run_shell(env + cli + "traces").exit_code, 2);  // --ranks-per-task is required
  EXPECT_EQ(testing::run_shell(env + cli + "traces --ranks-per-task 0").exit_code, 2);
  EXPECT_EQ(testing::run_shell(env + cli + "traces --ranks-per-task 1 --time soon").exit_code, 2);
  testing::CliRun missing = testing::run_shell(env + cli + "nowhere --ranks-per-task 4");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no such file or directory"), std::string::npos) << missing.err;
  // Two files naming one rank would make two shards read it.
  dir.write("dup/rank-0.json", "{}");
  dir.write("dup/trace_rank_0.json", "{}");
  testing::CliRun dup = testing::run_shell(env + cli + "dup --ranks-per-task 4");
  EXPECT_EQ(dup.exit_code, 1);
  EXPECT_NE(dup.err.find("both name rank 0"), std::string::npos) << dup.err;
  EXPECT_FALSE(fs::exists(dir / "bin/calls"));  // nothing was submitted
}

// Stand-in SLURM clients: squeue lists array tasks one per line (when given --array), scontrol knows
// one task only by ArrayJobId/ArrayTaskId, sacct has no accounting.
void fake_clients(const ScratchDir& dir, const std::string& squeue_out, const std::string& scontrol_out) {
  dir.write("bin/squeue",
            "#!/bin/bash\necho \"$*\" >> \"$(dirname \"$0\")/squeue-args\"\nprintf '" + squeue_out + "'\n");
  dir.write("bin/scontrol", "#!/bin/bash\nprintf '" + scontrol_out + "'\n");
  dir.write("bin/sacct", "#!/bin/bash\necho 'Slurm accounting storage is disabled' >&2\nexit 1\n");
  for (const char* tool : {"bin/squeue", "bin/scontrol", "bin/sacct"}) {
    fs::permissions(dir / tool, fs::perms::owner_all);
  }
}

std::vector<SubmittedJob> analysis_records(const std::string& out) {
  SubmittedJob shards;
  shards.kind = "analysis-shards";
  shards.job_id = "100";
  shards.array_tasks = 3;
  shards.output = out + "/shards/collectives-%a.json";
  SubmittedJob merge;
  merge.kind = "analysis-merge";
  merge.job_id = "101";
  merge.output = out + "/collectives.txt";
  return {shards, merge};
}

std::vector<JobStatus> statuses_with_path(const ScratchDir& dir, const std::vector<SubmittedJob>& jobs,
                                          std::vector<std::string>* notes) {
  const std::string old_path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  ::setenv("PATH", ((dir / "bin") + ":" + old_path).c_str(), 1);
  std::vector<JobStatus> st = job_statuses(jobs, notes);
  ::setenv("PATH", old_path.c_str(), 1);
  return st;
}

TEST(SlurmAnalyzeStatus, OneRowPerArrayTaskAndOneForTheMerge) {
  ScratchDir dir("analyze-status");
  fake_clients(dir, "100_0|COMPLETED|0:05\\n100_1|RUNNING|0:03\\n101|PENDING|0:00\\n",
               "JobId=104 ArrayJobId=100 ArrayTaskId=2 JobState=FAILED RunTime=00:00:02\\n");
  std::vector<std::string> notes;
  const std::vector<JobStatus> st = statuses_with_path(dir, analysis_records(dir / "out"), &notes);
  ASSERT_EQ(st.size(), 4u);
  EXPECT_EQ(st[0].job.job_id, "100_0");
  EXPECT_EQ(st[0].job.kind, "analysis-shard");
  EXPECT_EQ(st[0].state, "completed");
  EXPECT_EQ(st[0].source, "squeue");
  EXPECT_EQ(st[0].run, "collectives-0.json");
  EXPECT_EQ(st[0].run_status, "");  // not written: the stand-in wrote nothing
  EXPECT_EQ(st[1].job.job_id, "100_1");
  EXPECT_EQ(st[1].state, "running");
  EXPECT_EQ(st[2].job.job_id, "100_2");
  EXPECT_EQ(st[2].state, "failed");
  EXPECT_EQ(st[2].source, "scontrol");
  EXPECT_EQ(st[2].elapsed_s, 2);
  EXPECT_EQ(st[3].job.job_id, "101");
  EXPECT_EQ(st[3].job.kind, "analysis-merge");
  EXPECT_EQ(st[3].state, "pending");
  EXPECT_EQ(st[3].run, "collectives.txt");
  EXPECT_EQ(testing::slurp(dir / "bin/squeue-args"), "--noheader --array --states=all --format=%i|%T|%M\n");
}

// Once SLURM has forgotten the jobs (no accounting here), the files they wrote give the outcome.
TEST(SlurmAnalyzeStatus, OutputFilesGiveTheOutcomeOnceSlurmForgot) {
  ScratchDir dir("analyze-forgot");
  fake_clients(dir, "", "");
  dir.write("out/shards/collectives-0.json", "{}");
  dir.write("out/collectives.txt", "table\n");
  std::vector<SubmittedJob> jobs = analysis_records(dir / "out");
  std::vector<std::string> notes;
  std::vector<JobStatus> st = statuses_with_path(dir, jobs, &notes);
  ASSERT_EQ(st.size(), 4u);
  EXPECT_EQ(st[0].state, "completed");
  EXPECT_EQ(st[0].source, "output file");
  EXPECT_EQ(st[0].run_status, "written");
  EXPECT_EQ(st[1].state, "unknown");  // no file: not called failed either
  EXPECT_EQ(st[1].run_status, "");
  EXPECT_EQ(st[3].state, "completed");
  EXPECT_EQ(notes, (std::vector<std::string>{"sacct: Slurm accounting storage is disabled"}));
  // A superseded job's file may be the new job's: it gives the old one no outcome.
  for (SubmittedJob& j : jobs) j.superseded = true;
  st = statuses_with_path(dir, jobs, &notes);
  EXPECT_EQ(st[0].state, "unknown");
  EXPECT_EQ(st[0].run_status, "written");
}

TEST(SlurmAnalyzeStatus, ScontrolNamesArrayTasksByArrayJobAndTask) {
  const auto jobs = parse_scontrol_jobs(
      "JobId=124 ArrayJobId=123 ArrayTaskId=1 JobState=COMPLETED RunTime=00:00:07\n"
      "JobId=123 ArrayJobId=123 ArrayTaskId=2-5 JobState=PENDING RunTime=00:00:00\n"
      "JobId=130 JobState=RUNNING RunTime=00:01:00\n");
  EXPECT_EQ(jobs.size(), 4u);
  ASSERT_EQ(jobs.count("123_1"), 1u);
  EXPECT_EQ(jobs.at("123_1").state, "COMPLETED");
  EXPECT_EQ(jobs.at("123_1").elapsed_s, 7);
  EXPECT_EQ(jobs.count("124"), 1u);
  EXPECT_EQ(jobs.at("123").state, "PENDING");  // the pending rest, known by the array's id only
  EXPECT_EQ(jobs.count("123_2"), 0u);
  EXPECT_EQ(jobs.at("130").state, "RUNNING");
}

TEST(SlurmAnalyzeStatus, ArrayRecordsRoundTrip) {
  ScratchDir dir("analyze-records");
  const std::vector<SubmittedJob> jobs = analysis_records("/o");
  dir.write("s.jsonl", submitted_line(jobs[0]) + submitted_line(jobs[1]));
  std::vector<std::string> warnings;
  auto read = read_submitted(dir / "s.jsonl", &warnings);
  ASSERT_TRUE(read);
  ASSERT_EQ(read.value().size(), 2u);
  EXPECT_EQ(read.value()[0].array_tasks, 3);
  EXPECT_EQ(read.value()[0].output, "/o/shards/collectives-%a.json");
  EXPECT_EQ(read.value()[1].array_tasks, 0);
  // A training job's line carries neither field: its text is what it was before arrays existed.
  SubmittedJob job;
  job.job_id = "5";
  EXPECT_EQ(submitted_line(job).find("array_tasks"), std::string::npos);
  EXPECT_EQ(submitted_line(job).find("output"), std::string::npos);
  const std::vector<SubmittedJob> expanded = expand_array_tasks(read.value());
  ASSERT_EQ(expanded.size(), 4u);
  EXPECT_EQ(expanded[2].job_id, "100_2");
  EXPECT_EQ(expanded[2].output, "/o/shards/collectives-2.json");
  EXPECT_EQ(expanded[3].job_id, "101");
}

}  // namespace
}  // namespace scaleprof::launch

// `scaleprof run` and `scaleprof runs` as a user runs them: exit codes, signals, the environment the
// command gets, the node's GPU samples, and the listing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "collect_test_util.h"
#include "importers/run_reader.h"
#include "test_paths.h"

namespace scaleprof::collect {
namespace {

using testing::read_file;
using testing::TempDir;
namespace fs = std::filesystem;

struct Cli {
  pid_t pid = -1;
  std::string out_path, err_path;
};

// Starts the CLI with extra environment variables; stdout and stderr go to files in `dir`.
Cli start(const TempDir& dir, const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  static int counter = 0;
  Cli cli;
  cli.out_path = dir.file("out" + std::to_string(counter));
  cli.err_path = dir.file("err" + std::to_string(counter++));
  std::vector<std::string> argv_s = {SCALEPROF_CLI_PATH};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  cli.pid = fork();
  if (cli.pid == 0) {
    int out = ::open(cli.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(cli.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    // No real GPU library interferes, unless a test sets its own.
    setenv("SCALEPROF_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    setenv("SCALEPROF_ROCM_SMI_LIBRARY", "/nonexistent/librocm_smi64.so", 1);
    for (const std::string& kv : env) putenv(const_cast<char*>(kv.c_str()));  // NOLINT: child only
    std::vector<char*> argv;
    for (std::string& s : argv_s) argv.push_back(s.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(99);
  }
  return cli;
}

// Waits up to `seconds`; the exit code, or -1 on timeout (the process is then killed).
int wait_exit(const Cli& cli, int seconds = 30) {
  for (int i = 0; i < seconds * 100; ++i) {
    int status = 0;
    if (waitpid(cli.pid, &status, WNOHANG) == cli.pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(cli.pid, SIGKILL);
  waitpid(cli.pid, nullptr, 0);
  return -1;
}

bool wait_for_file(const std::string& path, int seconds = 20) {
  for (int i = 0; i < seconds * 100; ++i) {
    if (fs::exists(path) && !read_file(path).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// The single run folder of an experiment.
importers::RunData only_run(const TempDir& dir, const std::string& experiment) {
  auto runs = importers::read_runs(dir.file("m"), experiment);
  EXPECT_TRUE(runs.ok());
  EXPECT_EQ(runs.ok() ? runs.value().size() : 0u, 1u);
  return runs.ok() && !runs.value().empty() ? runs.value()[0] : importers::RunData{};
}

TEST(RunCommand, PropagatesTheExitCode) {
  TempDir dir("runexit");
  const std::string root = dir.file("m");
  EXPECT_EQ(wait_exit(start(dir, {"run", "--root", root, "--experiment", "ok", "--", "true"})), 0);
  EXPECT_EQ(wait_exit(start(dir, {"run", "--root", root, "--experiment", "seven", "--", "sh", "-c", "exit 7"})), 7);
  // Killed by a signal: 128 + N, as shells report it.
  EXPECT_EQ(wait_exit(start(dir, {"run", "--root", root, "--experiment", "killed", "--", "sh", "-c", "kill -9 $$"})),
            137);
  Cli missing = start(dir, {"run", "--root", root, "--experiment", "missing", "--", "no-such-command-xyz"});
  EXPECT_EQ(wait_exit(missing), 127);
  EXPECT_NE(read_file(missing.err_path).find("cannot run no-such-command-xyz: command not found"), std::string::npos);

  importers::RunData ok = only_run(dir, "ok");
  ASSERT_TRUE(ok.info);
  EXPECT_EQ(ok.info->status, "completed");
  EXPECT_EQ(ok.info->exit_status, 0);
  EXPECT_EQ(ok.info->command, (std::vector<std::string>{"true"}));
  EXPECT_EQ(ok.info->writer, "wrapper");
  ASSERT_TRUE(ok.info->start_unix_ns && ok.info->end_unix_ns);
  EXPECT_GE(*ok.info->end_unix_ns, *ok.info->start_unix_ns);
  importers::RunData seven = only_run(dir, "seven");
  ASSERT_TRUE(seven.info);
  EXPECT_EQ(seven.info->exit_status, 7);
  EXPECT_EQ(seven.status, "failed");
  EXPECT_EQ(only_run(dir, "killed").info->exit_status, 137);
  EXPECT_EQ(only_run(dir, "missing").info->exit_status, 127);
}

TEST(RunCommand, RecordsWallTime) {
  TempDir dir("runwall");
  ASSERT_EQ(wait_exit(start(dir, {"run", "--root", dir.file("m"), "--experiment", "w", "--", "sleep", "0.3"})), 0);
  importers::RunData r = only_run(dir, "w");
  ASSERT_TRUE(r.info && r.info->end_unix_ns && r.info->start_unix_ns);
  const double wall_s = static_cast<double>(*r.info->end_unix_ns - *r.info->start_unix_ns) * 1e-9;
  EXPECT_GE(wall_s, 0.3);
  EXPECT_LT(wall_s, 5.0);
}

TEST(RunCommand, HandsTheRunToTheCommandThroughTheEnvironment) {
  TempDir dir("runenv");
  const std::string env_file = dir.file("child-env");
  Cli cli = start(dir,
                  {"run", "--root", dir.file("m"), "--experiment", "resnet", "--strategy", "ddp", "--run-name",
                   "ddp-w1-test", "--", "sh", "-c", "env > " + env_file},
                  {"MY_OWN_VARIABLE=kept"});
  ASSERT_EQ(wait_exit(cli), 0);
  const std::string env = read_file(env_file);
  EXPECT_NE(env.find("SCALEPROF_ROOT=" + dir.file("m") + "\n"), std::string::npos) << env;
  EXPECT_NE(env.find("SCALEPROF_EXPERIMENT=resnet\n"), std::string::npos);
  EXPECT_NE(env.find("SCALEPROF_RUN=ddp-w1-test\n"), std::string::npos);
  EXPECT_NE(env.find("SCALEPROF_STRATEGY=ddp\n"), std::string::npos);
  EXPECT_NE(env.find("SCALEPROF_GPU_MONITOR=node\n"), std::string::npos);
  EXPECT_NE(env.find("SCALEPROF_WRAPPER_PID=" + std::to_string(cli.pid) + "\n"), std::string::npos);
  EXPECT_NE(env.find("MY_OWN_VARIABLE=kept\n"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir.file("m/resnet/ddp-w1-test/run.json")));
  // The same run name again would mix two launches: refused before the command starts.
  Cli again = start(dir, {"run", "--root", dir.file("m"), "--experiment", "resnet", "--run-name", "ddp-w1-test", "--",
                          "sh", "-c", "touch " + dir.file("must-not-exist")});
  const std::string before = read_file(dir.file("m/resnet/ddp-w1-test/run.json"));
  EXPECT_EQ(wait_exit(again), 1);
  EXPECT_NE(read_file(again.err_path).find("exists already"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.file("must-not-exist")));
  EXPECT_EQ(read_file(dir.file("m/resnet/ddp-w1-test/run.json")), before);  // nothing was changed
}

TEST(RunCommand, ForwardsSigtermAndSigintToTheCommand) {
  TempDir dir("runsig");
  const std::string ready = dir.file("ready"), got = dir.file("got");
  // The command traps SIGTERM and exits 42: the wrapper must pass the signal on and return 42.
  Cli cli = start(
      dir, {"run", "--root", dir.file("m"), "--experiment", "term", "--", "sh", "-c",
            "trap 'echo term > " + got + "; exit 42' TERM; echo up > " + ready + "; while :; do sleep 0.02; done"});
  ASSERT_TRUE(wait_for_file(ready));
  ASSERT_EQ(kill(cli.pid, SIGTERM), 0);
  EXPECT_EQ(wait_exit(cli), 42);
  EXPECT_EQ(read_file(got), "term\n");
  importers::RunData term = only_run(dir, "term");
  ASSERT_TRUE(term.info);
  EXPECT_EQ(term.info->exit_status, 42);
  EXPECT_EQ(term.info->status, "failed");

  // No trap: SIGINT kills the command, and the wrapper reports 128 + 2.
  const std::string ready2 = dir.file("ready2");
  Cli cli2 = start(dir, {"run", "--root", dir.file("m"), "--experiment", "int", "--", "sh", "-c",
                         "echo up > " + ready2 + "; while :; do sleep 0.02; done"});
  ASSERT_TRUE(wait_for_file(ready2));
  ASSERT_EQ(kill(cli2.pid, SIGINT), 0);
  EXPECT_EQ(wait_exit(cli2), 130);
  EXPECT_EQ(only_run(dir, "int").info->exit_status, 130);
}

TEST(RunCommand, SamplesTheNodeGpusWithTheLibraryItFinds) {
  TempDir dir("rungpu");
  dir.write("script.txt",
            "devices=2\nenergy_counter=0\nutil.0=40\nutil.1=60\npower_base_w.0=100\npower_base_w.1=200\n");
  Cli cli =
      start(dir, {"run", "--root", dir.file("m"), "--experiment", "g", "--gpu-interval", "20ms", "--", "sleep", "0.5"},
            {std::string("SCALEPROF_NVML_LIBRARY=") + SCALEPROF_FAKE_NVML_PATH,
             "SCALEPROF_FAKE_NVML_SCRIPT=" + dir.file("script.txt")});
  ASSERT_EQ(wait_exit(cli), 0);
  EXPECT_EQ(read_file(cli.err_path), "");  // a library was found: nothing to say
  importers::RunData r = only_run(dir, "g");
  ASSERT_TRUE(r.info);
  EXPECT_EQ(r.info->gpus_per_node, 2);
  ASSERT_EQ(r.nodes.size(), 1u);
  const auto& gpu = r.nodes[0].gpu;
  ASSERT_GE(gpu.size(), 2u * 15);  // 0.5 s at 20 ms, both devices
  size_t dev1 = 0;
  for (const GpuSample& s : gpu) {
    dev1 += s.device == 1 ? 1 : 0;
    EXPECT_DOUBLE_EQ(*s.utilization_pct, s.device == 0 ? 40.0 : 60.0);
  }
  EXPECT_EQ(dev1 * 2, gpu.size());
}

TEST(RunCommand, UnderSrunOnlyTaskZeroWritesRunJsonAndOnlyLocalTaskZeroSamples) {
  TempDir dir("runsrun");
  dir.write("script.txt", "devices=1\nutil.0=5\n");
  const std::vector<std::string> common = {"SCALEPROF_FAKE_NVML_SCRIPT=" + dir.file("script.txt"),
                                           "SLURM_JOB_ID=99",
                                           "SLURM_STEP_ID=0",
                                           "SLURM_NTASKS=2",
                                           "SLURM_NNODES=1",
                                           "SLURM_NODEID=0",
                                           "SCALEPROF_HOST=n1"};
  // Two wrappers on one node, as `srun --ntasks-per-node 2 scaleprof run ...` starts them. Task 1 gets
  // no loadable GPU library: if it tried to sample it would say "no GPU library found".
  std::vector<Cli> tasks;
  for (int task = 0; task < 2; ++task) {
    std::vector<std::string> env = common;
    env.push_back("SLURM_PROCID=" + std::to_string(task));
    env.push_back("SLURM_LOCALID=" + std::to_string(task));
    env.push_back(task == 0 ? std::string("SCALEPROF_NVML_LIBRARY=") + SCALEPROF_FAKE_NVML_PATH
                            : std::string("SCALEPROF_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"));
    tasks.push_back(
        start(dir,
              {"run", "--root", dir.file("m"), "--experiment", "s", "--strategy", "ddp", "--gpu-interval", "20ms", "--",
               "sh", "-c", "echo $SCALEPROF_RUN > " + dir.file("name" + std::to_string(task)) + "; sleep 0.2"},
              env));
  }
  for (const Cli& t : tasks) EXPECT_EQ(wait_exit(t), 0) << read_file(t.err_path);
  EXPECT_EQ(read_file(tasks[0].err_path), "");
  EXPECT_EQ(read_file(tasks[1].err_path), "");  // did not try to sample, did not try to write run.json
  // Both derive the same run name from the job step, and hand it to their command.
  EXPECT_EQ(read_file(dir.file("name0")), "ddp-w2-slurm99.0\n");
  EXPECT_EQ(read_file(dir.file("name1")), "ddp-w2-slurm99.0\n");
  importers::RunData r = only_run(dir, "s");
  ASSERT_TRUE(r.info);
  EXPECT_EQ(r.info->exit_status, 0);
  EXPECT_EQ(r.info->job_id, "99");
  EXPECT_EQ(r.info->launcher, "slurm");
  EXPECT_EQ(r.info->gpus_per_node, 1);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].host, "n1");
  EXPECT_GE(r.nodes[0].gpu.size(), 5u);
}

TEST(RunsCommand, ListsRunsAndReportsTornLinesWithoutFailing) {
  TempDir dir("runs");
  dir.write(
      "m/exp/r1/run.json",
      "{\"schema_version\": 1, \"experiment\": \"exp\", \"run\": \"r1\", \"strategy\": \"ddp\", \"world_size\": 2, "
      "\"start_unix_ns\": 1795302900000000000, \"status\": \"failed\", \"exit_status\": 1, \"writer\": \"wrapper\"}\n");
  for (int r = 0; r < 2; ++r) {
    dir.write("m/exp/r1/rank-0000" + std::to_string(r) + "/rank.json",
              "{\"rank\": " + std::to_string(r) + ", \"world_size\": 2, \"host\": \"h\", \"status\": \"completed\"}\n");
  }
  dir.write("m/exp/r1/rank-00000/epochs.csv",
            "epoch,start_unix_ns,end_unix_ns,duration_s,samples\n0,1,2,1,\n1,3,4,1,\n");
  dir.write("m/exp/r1/rank-00001/epochs.csv", "epoch,start_unix_ns,end_unix_ns,duration_s,samples\n0,1,2,1,\n1,3");
  Cli cli = start(dir, {"runs", "--root", dir.file("m"), "--format", "json"});
  ASSERT_EQ(wait_exit(cli), 0);
  EXPECT_NE(read_file(cli.err_path).find("rank-00001/epochs.csv:3: torn last line"), std::string::npos)
      << read_file(cli.err_path);
  simdjson::dom::parser parser;
  simdjson::padded_string json(read_file(cli.out_path));
  simdjson::dom::array rows = parser.parse(json).get_array();
  ASSERT_EQ(rows.size(), 1u);
  simdjson::dom::object row = rows.at(0).get_object();
  EXPECT_EQ(std::string_view(row["experiment"]), "exp");
  EXPECT_EQ(std::string_view(row["run"]), "r1");
  EXPECT_EQ(std::string_view(row["strategy"]), "ddp");
  EXPECT_EQ(int64_t(row["workers"]), 2);
  EXPECT_EQ(int64_t(row["nodes"]), 1);
  EXPECT_EQ(int64_t(row["epochs"]), 1);  // rank 1 finished one epoch whole
  EXPECT_EQ(std::string_view(row["status"]), "failed");
  EXPECT_EQ(std::string_view(row["start"]), "2026-11-21T23:15:00Z");

  Cli table = start(dir, {"runs", "--root", dir.file("m"), "--experiment", "exp", "-q"});
  ASSERT_EQ(wait_exit(table), 0);
  EXPECT_EQ(read_file(table.err_path), "");
  EXPECT_NE(read_file(table.out_path).find("failed"), std::string::npos);
  Cli csv = start(dir, {"runs", "--root", dir.file("m"), "--format", "csv", "-q"});
  ASSERT_EQ(wait_exit(csv), 0);
  EXPECT_EQ(read_file(csv.out_path).substr(0, 56), "experiment,run,strategy,workers,nodes,epochs,status,star");
  Cli none = start(dir, {"runs", "--root", dir.file("absent")});
  EXPECT_EQ(wait_exit(none), 1);
  EXPECT_EQ(wait_exit(start(dir, {"runs", "--root", dir.file("m"), "--format", "xml"})), 2);
}

// Issue 7: a mistyped option must not run as the command, with or without `--`.
TEST(RunCommand, AMistypedOptionIsAnErrorNotTheCommand) {
  TempDir dir("runtypo");
  const std::string root = dir.file("m"), marker = dir.file("ran");
  Cli with_cut = start(dir, {"run", "--root", root, "--experimnt", "x", "--", "sh", "-c", "touch " + marker});
  EXPECT_EQ(wait_exit(with_cut), 2);
  EXPECT_EQ(read_file(with_cut.err_path),
            "error: run: unknown option '--experimnt' (options come before the command: scaleprof run [options] -- "
            "CMD ARGS...)\n");
  Cli without_cut = start(dir, {"run", "--root", root, "--experimnt=x", "sh", "-c", "touch " + marker});
  EXPECT_EQ(wait_exit(without_cut), 2);
  EXPECT_NE(read_file(without_cut.err_path).find("unknown option '--experimnt=x'"), std::string::npos);
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_FALSE(fs::exists(root));  // nothing recorded either
  // A command after `--` may start with '-' words of its own, and one without `--` still works.
  EXPECT_EQ(wait_exit(start(dir, {"run", "--root", root, "--experiment", "ok", "sh", "-c", "touch " + marker})), 0);
  EXPECT_TRUE(fs::exists(marker));
}

// Issue 7: kill -9 of the wrapper must not orphan the training, and the run must not stay "running"
// (or "failed") without saying why.
TEST(RunCommand, KillNineOfTheWrapperEndsTheCommandAndTheRunSaysInterrupted) {
  TempDir dir("runkill9");
  const std::string pid_file = dir.file("child-pid");
  Cli cli = start(dir, {"run", "--root", dir.file("m"), "--experiment", "k", "--no-gpu", "--", "sh", "-c",
                        "echo $$ > " + pid_file + "; exec sleep 300"});
  ASSERT_TRUE(wait_for_file(pid_file));
  const pid_t child = static_cast<pid_t>(std::stol(read_file(pid_file)));
  ASSERT_EQ(kill(cli.pid, SIGKILL), 0);
  EXPECT_EQ(wait_exit(cli), -2);  // killed by a signal
  // The child got SIGTERM from the kernel when its parent died; wait (bounded) until it is gone or a
  // zombie waiting for a reaper (state Z in /proc/<pid>/stat).
  auto alive = [&] {
    const std::string stat = read_file("/proc/" + std::to_string(child) + "/stat");
    if (stat.empty()) return false;
    const size_t close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
  };
  bool gone = false;
  for (int i = 0; i < 2000 && !gone; ++i) {
    gone = !alive();
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!gone) kill(child, SIGKILL);
  EXPECT_TRUE(gone) << "the command (pid " << child << ") outlived `scaleprof run`";
  importers::RunData r = only_run(dir, "k");
  EXPECT_EQ(r.status, "interrupted");
  EXPECT_NE(r.status_reason.find("the `scaleprof run` wrapper (pid " + std::to_string(cli.pid)), std::string::npos)
      << r.status_reason;
  EXPECT_NE(r.status_reason.find("is gone without recording an end"), std::string::npos) << r.status_reason;
  Cli runs = start(dir, {"runs", "--root", dir.file("m")});
  ASSERT_EQ(wait_exit(runs), 0);
  EXPECT_NE(read_file(runs.err_path).find(": interrupted: the `scaleprof run` wrapper (pid "), std::string::npos)
      << read_file(runs.err_path);
}

// Issue 7: SCALEPROF_HOST names node-<host>/; "../" in it must not write outside --root.
TEST(RunCommand, AHostileHostNameCannotLeaveTheRoot) {
  TempDir dir("runhost");
  dir.write("script.txt", "devices=1\nutil.0=50\n");
  Cli cli =
      start(dir, {"run", "--root", dir.file("m"), "--experiment", "h", "--", "true"},
            {"SCALEPROF_HOST=../../../../escape", std::string("SCALEPROF_NVML_LIBRARY=") + SCALEPROF_FAKE_NVML_PATH,
             "SCALEPROF_FAKE_NVML_SCRIPT=" + dir.file("script.txt")});
  EXPECT_EQ(wait_exit(cli), 1);
  EXPECT_NE(read_file(cli.err_path)
                .find("error: host (SCALEPROF_HOST or the machine's name) '../../../../escape' must "
                      "not start with '.'"),
            std::string::npos)
      << read_file(cli.err_path);
  EXPECT_FALSE(fs::exists(dir.file("escape")));
  EXPECT_FALSE(fs::exists(dir.file("m")));
}

// Issue 7: a SLURM requeue keeps the job id, so the same run name; it is recorded as attempt-1 beside
// the first attempt, and the readers use the attempt that completed.
TEST(RunCommand, ASlurmRequeueIsRecordedAsANewAttempt) {
  TempDir dir("runrequeue");
  const std::vector<std::string> args = {"run", "--root", dir.file("m"), "--experiment", "q", "--run-name", "job9"};
  auto with = [&](std::vector<std::string> tail) {
    std::vector<std::string> all = args;
    all.insert(all.end(), tail.begin(), tail.end());
    return all;
  };
  EXPECT_EQ(wait_exit(start(dir, with({"--", "sh", "-c", "exit 143"}), {"SLURM_JOB_ID=9"})), 143);
  Cli requeued = start(dir, with({"--", "sh", "-c", "echo $SCALEPROF_ATTEMPT > " + dir.file("attempt")}),
                       {"SLURM_JOB_ID=9", "SLURM_RESTART_COUNT=1"});
  EXPECT_EQ(wait_exit(requeued), 0) << read_file(requeued.err_path);
  EXPECT_EQ(read_file(dir.file("attempt")), "1\n");
  EXPECT_TRUE(fs::exists(dir.file("m/q/job9/run.json")));
  EXPECT_TRUE(fs::exists(dir.file("m/q/job9/attempt-1/run.json")));
  importers::RunData r = only_run(dir, "q");
  EXPECT_EQ(r.attempt, 1);
  ASSERT_TRUE(r.info.has_value());
  EXPECT_EQ(r.info->status, "completed");
  EXPECT_EQ(r.info->attempt, 1);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_EQ(r.attempts[0].status, "failed");
  // The same attempt again is refused, not overwritten.
  EXPECT_EQ(wait_exit(start(dir, with({"--", "true"}), {"SLURM_JOB_ID=9", "SLURM_RESTART_COUNT=1"})), 1);
}

// Issue 7: one symbolic link loop must not hide every other run.
TEST(RunsCommand, ASymlinkLoopIsOneLineAndTheGoodRunsAreStillListed) {
  TempDir dir("runsloop");
  dir.write("m/exp/good/run.json",
            "{\"run\": \"good\", \"strategy\": \"ddp\", \"world_size\": 1, \"status\": "
            "\"completed\", \"exit_status\": 0}\n");
  dir.write("m/exp/good/rank-00000/rank.json", "{\"rank\": 0, \"world_size\": 1, \"status\": \"completed\"}\n");
  fs::create_directory_symlink("loop", dir.file("m/loop"));
  fs::create_directory_symlink("loop2", dir.file("m/exp/loop2"));
  Cli cli = start(dir, {"runs", "--root", dir.file("m"), "--format", "csv"});
  ASSERT_EQ(wait_exit(cli), 0) << read_file(cli.err_path);
  const std::string err = read_file(cli.err_path);
  EXPECT_NE(err.find("warning: " + dir.file("m/loop") + ": Too many levels of symbolic links; skipped\n"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("warning: " + dir.file("m/exp/loop2") + ": Too many levels of symbolic links; skipped\n"),
            std::string::npos)
      << err;
  EXPECT_NE(read_file(cli.out_path).find("\nexp,good,ddp,1,"), std::string::npos) << read_file(cli.out_path);
}

}  // namespace
}  // namespace scaleprof::collect

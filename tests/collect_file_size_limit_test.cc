// Issue 18, finding 1: under a file-size limit (`ulimit -f`) scaleprof's writes fail with EFBIG and
// are counted; neither the `scaleprof run` wrapper nor a process recording through the library is
// ended by SIGXFSZ, and the command the wrapper runs keeps the disposition it would have without it.
// Every case runs in a forked process with SIGXFSZ at its default action (the kernel's, which ends
// the process), as a user's shell gives it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "collect/rank_recorder.h"
#include "collect_test_util.h"
#include "core/file_io.h"
#include "core/file_size_signal.h"
#include "core/output_file.h"
#include "importers/run_reader.h"
#include "test_paths.h"

namespace scaleprof::collect {
namespace {

using testing::read_file;
using testing::TempDir;
namespace fs = std::filesystem;

// In a forked child: the limit, and SIGXFSZ as the caller says (SIG_DFL unless told otherwise).
void limit_file_size(rlim_t bytes, sighandler_t disposition = SIG_DFL) {
  signal(SIGXFSZ, disposition);
  rlimit limit{};
  getrlimit(RLIMIT_FSIZE, &limit);
  limit.rlim_cur = bytes;
  setrlimit(RLIMIT_FSIZE, &limit);
}

struct Ended {
  int exit_code = -1;  // -1 when killed
  int signal = 0;      // the signal that ended it, 0 when it exited
};

// Waits for `pid` for up to `seconds` (then kills it: a test never hangs).
Ended wait_for(pid_t pid, int seconds = 60) {
  for (int i = 0; i < seconds * 100; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      if (WIFSIGNALED(status)) return Ended{-1, WTERMSIG(status)};
      return Ended{WEXITSTATUS(status), 0};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return Ended{-1, SIGKILL};
}

// Runs `body` in a forked child (its return value is the exit code).
template <class Body>
Ended in_child(Body body) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  return wait_for(pid);
}

// `scaleprof run ARGS` in a forked child under a limit of `bytes`, stdout/stderr to files in `dir`.
Ended run_cli_limited(const TempDir& dir, rlim_t bytes, sighandler_t disposition,
                      const std::vector<std::string>& args) {
  const std::string out = dir.file("out"), err = dir.file("err");
  const pid_t pid = fork();
  if (pid == 0) {
    const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    setenv("SCALEPROF_NVML_LIBRARY", SCALEPROF_FAKE_NVML_PATH, 1);
    setenv("SCALEPROF_FAKE_NVML_SCRIPT", dir.file("nvml.txt").c_str(), 1);
    limit_file_size(bytes, disposition);
    std::vector<std::string> argv_s = {SCALEPROF_CLI_PATH, "run"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& s : argv_s) argv.push_back(s.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(99);
  }
  return wait_for(pid);
}

constexpr rlim_t kLimit = 4096;

// The red-team case: gpu.csv (two GPUs every 10 ms) reaches the limit long before the command ends.
// Before the fix the wrapper died of SIGXFSZ and the command with it (SIGTERM via PDEATHSIG).
TEST(FileSizeLimit, ScaleprofRunOutlivesTheLimitAndReturnsTheCommandsExitCode) {
  TempDir dir("fsize-run");
  dir.write("nvml.txt", "devices=2\nutil.0=40\nutil.1=60\npower_base_w.0=100\npower_base_w.1=200\n");
  const Ended ended = run_cli_limited(dir, kLimit, SIG_DFL,
                                      {"--root", dir.file("m"), "--experiment", "lim", "--run-name", "r",
                                       "--gpu-interval", "10ms", "--", "sh", "-c", "sleep 1.5; echo trained; exit 7"});
  const std::string err = read_file(dir.file("err"));
  ASSERT_EQ(ended.signal, 0) << "scaleprof run was killed by signal " << ended.signal << "\n" << err;
  EXPECT_EQ(ended.exit_code, 7) << err;
  EXPECT_EQ(read_file(dir.file("out")), "trained\n");  // the command ran to its end

  const std::string gpu_csv = dir.file("m/lim/r/node-" + local_host_name() + "/gpu.csv");
  // Reported once when writing failed, and once more at the end with the count.
  EXPECT_NE(err.find("scaleprof: " + gpu_csv + ": cannot append: File too large; training continues"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("failed write(s))"), std::string::npos) << err;

  // What was written before the limit is kept, whole lines only, and run.json has the end.
  const std::string gpu = read_file(gpu_csv);
  EXPECT_LE(gpu.size(), kLimit);
  EXPECT_GT(gpu.size(), kLimit / 2);
  ASSERT_FALSE(gpu.empty());
  EXPECT_EQ(gpu.back(), '\n');
  auto run = importers::read_run(dir.file("m/lim/r"));
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_TRUE(run.value().warnings.empty()) << run.value().warnings.front();  // no torn line
  ASSERT_TRUE(run.value().info);
  const RunInfo& info = *run.value().info;
  EXPECT_EQ(info.exit_status, 7);
  EXPECT_EQ(info.status, "failed");
  EXPECT_GT(info.write_errors, 0);
  EXPECT_NE(info.last_write_error.find("File too large"), std::string::npos) << info.last_write_error;
  ASSERT_EQ(run.value().nodes.size(), 1u);
  EXPECT_GE(run.value().nodes[0].gpu.size(), 20u);  // the samples written before the limit
}

// The command is the user's program: it gets SIGXFSZ as the wrapper was given it, not scaleprof's
// SIG_IGN. With the default action its write past the limit ends it by SIGXFSZ (128+25), as without
// `scaleprof run`; with SIGXFSZ ignored by the user's shell, its write fails (head exits 1).
TEST(FileSizeLimit, TheCommandKeepsTheSignalDispositionItWouldHaveWithoutScaleprofRun) {
  TempDir dir("fsize-child");
  dir.write("nvml.txt", "devices=1\n");
  const std::vector<std::string> command = {
      "--no-gpu", "--", "sh", "-c", "head -c 100000 /dev/zero > \"$0\"; exit $?", dir.file("big")};
  auto args = [&](const std::string& experiment) {
    std::vector<std::string> a = {"--root", dir.file("m"), "--experiment", experiment, "--run-name", "r"};
    a.insert(a.end(), command.begin(), command.end());
    return a;
  };
  Ended dfl = run_cli_limited(dir, kLimit, SIG_DFL, args("dfl"));
  EXPECT_EQ(dfl.signal, 0);
  EXPECT_EQ(dfl.exit_code, 128 + SIGXFSZ) << read_file(dir.file("err"));
  Ended ign = run_cli_limited(dir, kLimit, SIG_IGN, args("ign"));
  EXPECT_EQ(ign.signal, 0);
  EXPECT_EQ(ign.exit_code, 1) << read_file(dir.file("err"));
  auto run = importers::read_run(dir.file("m/dfl/r"));
  ASSERT_TRUE(run.ok() && run.value().info);
  EXPECT_EQ(run.value().info->exit_status, 128 + SIGXFSZ);
}

// The library's own writes, in a process that records (as the Python API does inside the training):
// the limit is a counted write error, the process lives on, and its disposition is still the
// default one afterwards (scaleprof blocks SIGXFSZ only around its own writes, in the writing thread).
TEST(FileSizeLimit, TheRecorderCountsWritesPastTheLimitAndLeavesTheProcessDispositionAlone) {
  TempDir dir("fsize-rank");
  const std::string root = dir.path();
  Ended ended = in_child([&] {
    RunContext c;
    c.root = root;
    c.experiment = "exp";
    c.run = "run1";
    c.host = "testhost";
    c.gpu_monitor = "off";
    std::FILE* messages = std::fopen((root + "/messages").c_str(), "w");
    RankRecorderOptions options;
    options.messages = messages;
    auto r = RankRecorder::open(c, options, Environment{});
    if (!r) return 10;
    limit_file_size(fs::file_size(root + "/exp/run1/rank-00000/epochs.csv") + 100);
    for (int64_t e = 0; e < 20; ++e) {
      if (!r.value()->begin_epoch(e, 64).ok() || !r.value()->end_epoch().ok()) return 11;
    }
    if (r.value()->write_errors() == 0) return 12;
    (void)r.value()->finish(true);  // rank.json past the limit too: an error on `messages`, not a signal
    // One-shot writers: an error naming the file.
    const std::string big(kLimit, 'x');
    Status out = write_output_file(root + "/out.txt", big + big);
    if (out.ok() || out.error().message.find("File too large") == std::string::npos) return 13;
    if (create_new_file(root + "/claim", big + big).ok()) return 14;
    std::fclose(messages);
    // The process's own disposition is untouched: its own write past the limit still ends it.
    const int fd = ::open((root + "/own").c_str(), O_WRONLY | O_CREAT, 0644);
    (void)!::write(fd, big.data(), big.size());
    (void)!::write(fd, big.data(), big.size());
    return 0;
  });
  EXPECT_EQ(ended.signal, SIGXFSZ) << "exit code " << ended.exit_code;
  const std::string epochs = read_file(root + "/exp/run1/rank-00000/epochs.csv");
  EXPECT_EQ(epochs.substr(0, epochs.find('\n')), "epoch,start_unix_ns,end_unix_ns,duration_s,samples");
  EXPECT_EQ(epochs.back(), '\n');
  const std::string messages = read_file(root + "/messages");
  EXPECT_NE(messages.find("epochs.csv: cannot append: File too large; training continues"), std::string::npos)
      << messages;
}

// The guard itself: a SIGXFSZ raised inside it is consumed, and one the caller had pending (sent
// before) is left for the caller.
TEST(FileSizeLimit, TheGuardConsumesOnlyTheSignalItsWriteRaised) {
  TempDir dir("fsize-guard");
  const std::string path = dir.file("f");
  Ended ended = in_child([&] {
    limit_file_size(10);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
    {
      const FileSizeSignalBlock guard;
      if (::write(fd, "0123456789", 10) != 10) return 20;
      errno = 0;
      if (::write(fd, "x", 1) != -1 || errno != EFBIG) return 21;
    }
    // The caller blocks SIGXFSZ itself and has one pending: the guard must leave it there.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    raise(SIGXFSZ);
    { const FileSizeSignalBlock guard; }
    sigset_t pending;
    sigpending(&pending);
    return sigismember(&pending, SIGXFSZ) == 1 ? 0 : 22;
  });
  EXPECT_EQ(ended.signal, 0);
  EXPECT_EQ(ended.exit_code, 0);
  EXPECT_EQ(read_file(path), "0123456789");
}

}  // namespace
}  // namespace scaleprof::collect

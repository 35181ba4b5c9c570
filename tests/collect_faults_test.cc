// Issue 7 for the collectors: a refused launch changes nothing, simultaneous starts of one rank write
// once, a SLURM requeue is a new attempt, a failed write leaves no fragment and never fails the
// training, and names from the environment cannot leave the root.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "collect/rank_recorder.h"
#include "collect/run_context.h"
#include "collect_test_util.h"
#include "core/file_io.h"
#include "importers/run_reader.h"

namespace scaleprof::collect {
namespace {

using testing::read_file;
using testing::TempDir;
namespace fs = std::filesystem;

Environment no_gpu_env() {
  return Environment{{"SCALEPROF_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"},
                     {"SCALEPROF_ROCM_SMI_LIBRARY", "/nonexistent/librocm_smi64.so"}};
}

RunContext context(const std::string& root, int64_t rank = 0, int64_t world = 1) {
  RunContext c;
  c.root = root;
  c.experiment = "exp";
  c.run = "run1";
  c.strategy = "ddp";
  c.rank = rank;
  c.local_rank = rank;
  c.world_size = world;
  c.local_world_size = world;
  c.launcher = "torchrun";
  c.host = "testhost";
  return c;
}

// A file size limit for this process (writes beyond it fail with EFBIG), restored on scope exit.
// SIGXFSZ is ignored meanwhile, as the kernel would otherwise kill the process.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit limit = old_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &old_);
    signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit old_{};
  sighandler_t old_handler_ = SIG_DFL;
};

// Messages of a recorder, captured in memory.
class Messages {
 public:
  Messages() : file_(open_memstream(&buffer_, &size_)) {}
  ~Messages() {
    std::fclose(file_);
    std::free(buffer_);  // NOLINT: open_memstream's buffer
  }
  Messages(const Messages&) = delete;
  Messages& operator=(const Messages&) = delete;
  FILE* file() const { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  size_t size_ = 0;
  FILE* file_;
};

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(RankRecorder, ARefusedReuseOfTheRunNameChangesNothing) {
  TempDir dir("refused");
  {
    auto first = RankRecorder::open(context(dir.path()), {}, no_gpu_env());
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE(first.value()->begin_epoch(0).ok());
    ASSERT_TRUE(first.value()->end_epoch(8).ok());
    ASSERT_TRUE(first.value()->finish(true).ok());
  }
  const std::string run_json = dir.file("exp/run1/run.json"), rank_json = dir.file("exp/run1/rank-00000/rank.json"),
                    epochs = dir.file("exp/run1/rank-00000/epochs.csv");
  const std::string before_run = read_file(run_json), before_rank = read_file(rank_json),
                    before_epochs = read_file(epochs);
  ASSERT_NE(before_run.find("\"status\": \"completed\""), std::string::npos);
  {
    auto second = RankRecorder::open(context(dir.path()), {}, no_gpu_env());
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.error().message.find("already has rank 0"), std::string::npos);
    EXPECT_NE(second.error().message.find("nothing was changed"), std::string::npos);
  }
  // The refused process's exit used to rewrite both files as an empty "failed" record.
  EXPECT_EQ(read_file(run_json), before_run);
  EXPECT_EQ(read_file(rank_json), before_rank);
  EXPECT_EQ(read_file(epochs), before_epochs);

  // A wrapper-only run (run.json, no rank folders) is not taken over by a rank 0 either.
  TempDir other("refused-run");
  const std::string wrapper_json =
      other.write("exp/run1/run.json", "{\"writer\": \"wrapper\", \"status\": \"completed\"}\n");
  auto taken = RankRecorder::open(context(other.path()), {}, no_gpu_env());
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.error().message.find("run.json exists already"), std::string::npos);
  EXPECT_EQ(read_file(wrapper_json), "{\"writer\": \"wrapper\", \"status\": \"completed\"}\n");
  EXPECT_FALSE(fs::exists(other.file("exp/run1/rank-00000/rank.json")));
  // Nor does it leave a rank folder (or an empty traces/) of its own in that run.
  EXPECT_FALSE(fs::exists(other.file("exp/run1/rank-00000")));
}

// Sixteen processes start rank 0 of the same run at the same moment (released together by closing a
// pipe): exactly one records, the fifteen others are refused, and epochs.csv holds each epoch once.
TEST(RankRecorder, SixteenSimultaneousStartsOfOneRankRecordOnce) {
  TempDir dir("sixteen");
  constexpr int kProcs = 16, kEpochs = 5;
  int gate[2];
  ASSERT_EQ(pipe(gate), 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(gate[1]);
      char c;
      (void)!::read(gate[0], &c, 1);  // returns at EOF, when the parent closes its end
      int code = 0;
      {
        auto r = RankRecorder::open(context(dir.path()), {}, no_gpu_env());
        if (!r.ok()) _exit(r.error().message.find("already has rank 0") != std::string::npos ? 20 : 30);
        for (int e = 0; e < kEpochs; ++e) {
          if (!r.value()->begin_epoch(e).ok() || !r.value()->end_epoch(e).ok()) code = 11;
        }
        if (!r.value()->finish(true).ok()) code = 12;
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  close(gate[0]);
  close(gate[1]);
  int recorded = 0, refused = 0;
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 0) ++recorded;
    if (WEXITSTATUS(status) == 20) ++refused;
  }
  EXPECT_EQ(recorded, 1);
  EXPECT_EQ(refused, kProcs - 1);
  EXPECT_EQ(count(read_file(dir.file("exp/run1/rank-00000/epochs.csv")), "\n"), kEpochs + 1);
  auto run = importers::read_run(dir.file("exp/run1"));
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run.value().ranks.size(), 1u);
  ASSERT_EQ(run.value().ranks[0].epochs.size(), static_cast<size_t>(kEpochs));
  for (int e = 0; e < kEpochs; ++e) EXPECT_EQ(run.value().ranks[0].epochs[e].epoch, e);
  EXPECT_EQ(run.value().status, "completed");
  EXPECT_EQ(run.value().info->status, "completed");
}

TEST(CsvAppender, AFailedAppendLeavesNoFragment) {
  TempDir dir("fragment");
  auto csv = CsvAppender::open(dir.file("x.csv"), "a,b");
  ASSERT_TRUE(csv.ok());
  ASSERT_TRUE(csv.value().append("1,2\n").ok());
  {
    FileSizeLimit limit(12);  // 8 bytes are there: 4 more fit, the line has 16
    Status s = csv.value().append("333333,444444\n");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("x.csv: cannot append: File too large"), std::string::npos) << s.error().message;
  }
  ASSERT_TRUE(csv.value().append("5,6\n").ok());
  EXPECT_EQ(read_file(dir.file("x.csv")), "a,b\n1,2\n5,6\n");
}

TEST(RankRecorder, AFailingDiskNeverFailsTheTrainingAndLosesNoRecord) {
  TempDir dir("enospc");
  Messages messages;
  RankRecorderOptions options;
  options.messages = messages.file();
  auto opened = RankRecorder::open(context(dir.path()), options, no_gpu_env());
  ASSERT_TRUE(opened.ok());
  RankRecorder& r = *opened.value();
  ASSERT_TRUE(r.begin_epoch(0).ok());
  ASSERT_TRUE(r.end_epoch(10).ok());
  const std::string epochs = dir.file("exp/run1/rank-00000/epochs.csv");
  {
    FileSizeLimit limit(fs::file_size(epochs) + 10);  // the next line is cut after 10 bytes
    for (int e = 1; e <= 3; ++e) {
      ASSERT_TRUE(r.begin_epoch(e).ok());
      auto rec = r.end_epoch(10 + e);
      ASSERT_TRUE(rec.ok()) << rec.error().message;
      EXPECT_EQ(rec.value().epoch, e);
    }
    EXPECT_EQ(r.write_errors(), 3);
    // No fragment was left behind: the file still ends with a whole line.
    const std::string text = read_file(epochs);
    EXPECT_EQ(text.back(), '\n');
    EXPECT_EQ(count(text, "\n"), 2);
  }
  std::string said = messages.text();
  EXPECT_EQ(count(said, "\n"), 1) << said;  // reported once, not once per failure
  EXPECT_EQ(count(said, "epochs.csv: cannot append: File too large; training continues"), 1) << said;
  // The disk has room again: the next record writes the kept ones first.
  ASSERT_TRUE(r.begin_epoch(4).ok());
  ASSERT_TRUE(r.end_epoch(14).ok());
  said = messages.text();
  EXPECT_EQ(count(said, "epochs.csv: writing works again after 3 failed write(s)"), 1) << said;
  ASSERT_TRUE(r.finish(true).ok());

  auto run = importers::read_run(dir.file("exp/run1"));
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run.value().warnings.empty()) << run.value().warnings.front();
  const importers::RankData& rank = run.value().ranks[0];
  ASSERT_EQ(rank.epochs.size(), 5u);
  for (int e = 0; e <= 4; ++e) {
    EXPECT_EQ(rank.epochs[e].epoch, e);
    EXPECT_EQ(rank.epochs[e].samples, 10 + e);
  }
  // The run's status records what happened.
  ASSERT_TRUE(rank.info.has_value());
  EXPECT_EQ(rank.info->write_errors, 3);
  EXPECT_NE(rank.info->last_write_error.find("File too large"), std::string::npos);
  EXPECT_EQ(run.value().info->write_errors, 3);
  EXPECT_EQ(rank.info->status, "completed");
}

TEST(RankRecorder, NamesFromTheEnvironmentCannotLeaveTheRoot) {
  TempDir dir("names");
  const std::string root = dir.file("root");
  for (const char* host : {"../../../../../escape", "a/b", "x\ny", "\x1b]52;c;aGk=\x07"}) {
    ContextOverrides o;
    o.root = root;
    auto env = detect_run_context(Environment{{"SCALEPROF_HOST", host}}, o);
    ASSERT_TRUE(env.ok());
    RunContext c = env.value();
    c.run = "r";
    auto r = RankRecorder::open(c, {}, no_gpu_env());
    ASSERT_FALSE(r.ok()) << host;
    EXPECT_EQ(r.error().message.rfind("host (SCALEPROF_HOST or the machine's name) '", 0), 0u) << r.error().message;
  }
  RunContext c = context(root);
  for (const std::string& bad :
       std::vector<std::string>{"../x", "a/b", std::string("a\0b", 3), "tab\there", ".hidden"}) {
    for (std::string* field : {&c.experiment, &c.run, &c.strategy}) {
      RunContext copy = c;
      std::string* target = field == &c.experiment ? &copy.experiment : field == &c.run ? &copy.run : &copy.strategy;
      *target = bad;
      EXPECT_FALSE(RankRecorder::open(copy, {}, no_gpu_env()).ok()) << bad;
    }
  }
  EXPECT_FALSE(fs::exists(dir.file("escape")));
  EXPECT_FALSE(fs::exists(root));  // nothing was created for any refused name
}

TEST(RunContext, NegativeRankIsAnErrorNotAFolderName) {
  for (auto [field, message] : {std::pair<int, const char*>{0, "rank -1 is negative"},
                                {1, "local rank -1 is negative"},
                                {2, "world size -1 is negative"}}) {
    ContextOverrides o;
    (field == 0 ? o.rank : field == 1 ? o.local_rank : o.world_size) = -1;
    auto c = detect_run_context(Environment{}, o);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error().message, message);
  }
}

TEST(RunContext, SlurmRestartCountIsTheAttempt) {
  auto c = detect_run_context(Environment{{"SLURM_JOB_ID", "77"}, {"SLURM_RESTART_COUNT", "2"}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.value().attempt, 2);
  auto wrapped = detect_run_context(Environment{{"SLURM_RESTART_COUNT", "2"}, {"SCALEPROF_ATTEMPT", "3"}});
  ASSERT_TRUE(wrapped.ok());
  EXPECT_EQ(wrapped.value().attempt, 3);
  EXPECT_FALSE(detect_run_context(Environment{{"SLURM_RESTART_COUNT", "x"}}).ok());
}

// A requeued job has the same id, so the same derived run name: its records go beside the first
// attempt's, and readers use the attempt that completed.
TEST(RankRecorder, ARequeueIsANewAttemptAndTheReaderUsesTheOneThatCompleted) {
  TempDir dir("requeue");
  {
    auto first = RankRecorder::open(context(dir.path()), {}, no_gpu_env());
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE(first.value()->begin_epoch(0).ok());
    ASSERT_TRUE(first.value()->end_epoch().ok());
    // Requeued (preempted) before finishing.
  }
  RunContext again = context(dir.path());
  again.attempt = 1;
  {
    auto second = RankRecorder::open(again, {}, no_gpu_env());
    ASSERT_TRUE(second.ok()) << second.error().message;
    EXPECT_EQ(second.value()->run_dir(), dir.file("exp/run1/attempt-1"));
    for (int e = 0; e < 3; ++e) {
      ASSERT_TRUE(second.value()->begin_epoch(e).ok());
      ASSERT_TRUE(second.value()->end_epoch().ok());
    }
    ASSERT_TRUE(second.value()->finish(true).ok());
  }
  auto run = importers::read_run(dir.file("exp/run1"));
  ASSERT_TRUE(run.ok());
  const importers::RunData& r = run.value();
  EXPECT_EQ(r.run, "run1");
  EXPECT_EQ(r.experiment, "exp");
  EXPECT_EQ(r.attempt, 1);
  EXPECT_EQ(r.status, "completed");
  EXPECT_EQ(r.epochs_completed(), 3);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_EQ(r.attempts[0].status, "failed");
  EXPECT_EQ(r.attempts[1].status, "completed");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            dir.file("exp/run1") + ": 2 SLURM attempts; attempt 1 (completed) is used, set aside: attempt 0 (failed)");
  auto listed = importers::read_runs(dir.path());
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed.value().size(), 1u);
  EXPECT_EQ(listed.value()[0].attempt, 1);
}

}  // namespace
}  // namespace scaleprof::collect

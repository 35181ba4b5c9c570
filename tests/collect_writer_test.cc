// The writers: rank folders, atomic JSON, one-write() CSV lines, and 8 processes writing at once.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "collect/rank_recorder.h"
#include "collect_test_util.h"
#include "core/file_io.h"
#include "importers/run_reader.h"

namespace scaleprof::collect {
namespace {

using testing::read_file;
using testing::TempDir;

// No GPU library, whatever the machine has: these tests are about files.
Environment no_gpu_env() {
  return Environment{{"SCALEPROF_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"},
                     {"SCALEPROF_ROCM_SMI_LIBRARY", "/nonexistent/librocm_smi64.so"}};
}

RunContext context(const std::string& root, int64_t rank, int64_t world) {
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

TEST(CsvAppender, WritesHeaderOnceAndAppends) {
  TempDir dir("csv");
  {
    auto a = CsvAppender::open(dir.file("x.csv"), "a,b");
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE(a.value().append("1,2\n").ok());
  }
  {
    auto a = CsvAppender::open(dir.file("x.csv"), "a,b");
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE(a.value().append("3,4\n5,6\n").ok());
  }
  EXPECT_EQ(read_file(dir.file("x.csv")), "a,b\n1,2\n3,4\n5,6\n");
  auto bad = CsvAppender::open(dir.file("missing/x.csv"), "a");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("missing/x.csv: cannot open for appending"), std::string::npos);
}

TEST(ReplaceFile, LeavesNoTemporary) {
  TempDir dir("replace");
  ASSERT_TRUE(replace_file(dir.file("a.json"), "{\"v\": 1}\n").ok());
  ASSERT_TRUE(replace_file(dir.file("a.json"), "{\"v\": 2}\n").ok());
  EXPECT_EQ(read_file(dir.file("a.json")), "{\"v\": 2}\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("a.json.tmp")));
  EXPECT_FALSE(replace_file(dir.file("no/such/dir.json"), "{}").ok());
  // A symlink planted at the old temporary name is never followed: its target stays untouched.
  std::ofstream(dir.file("victim")) << "keep";
  std::filesystem::create_symlink(dir.file("victim"), dir.file("b.json.tmp"));
  ASSERT_TRUE(replace_file(dir.file("b.json"), "{}\n").ok());
  EXPECT_EQ(read_file(dir.file("victim")), "keep");
  EXPECT_EQ(read_file(dir.file("b.json")), "{}\n");
}

TEST(RankRecorder, RecordsEpochsStepsAndStatus) {
  TempDir dir("rank");
  RankRecorderOptions options;
  options.torch_version = "2.13.0";
  options.command = {"python", "train.py"};
  auto opened = RankRecorder::open(context(dir.path(), 0, 1), options, no_gpu_env());
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  RankRecorder& r = *opened.value();
  EXPECT_NE(r.gpu_note().find("no GPU library found"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_directory(r.traces_dir()));

  ASSERT_TRUE(r.begin_epoch(0).ok());
  ASSERT_TRUE(r.begin_step().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto step = r.end_step(32);
  ASSERT_TRUE(step.ok());
  EXPECT_GE(step.value().duration_s, 0.020);
  EXPECT_LT(step.value().duration_s, 1.0);
  ASSERT_TRUE(r.begin_step().ok());
  ASSERT_TRUE(r.end_step().ok());
  auto epoch = r.end_epoch(64);
  ASSERT_TRUE(epoch.ok());
  EXPECT_GE(epoch.value().duration_s, 0.020);
  EXPECT_EQ(epoch.value().end_unix_ns - epoch.value().start_unix_ns,
            static_cast<int64_t>(std::llround(epoch.value().duration_s * 1e9)));
  EXPECT_FALSE(r.end_epoch().ok());  // not started
  ASSERT_TRUE(r.begin_epoch(1).ok());
  EXPECT_EQ(r.begin_epoch(2).error().message, "epoch 2 started while epoch 1 is still running");
  ASSERT_TRUE(r.end_epoch().ok());

  auto run = importers::read_run(r.run_dir());
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run.value().ranks.size(), 1u);
  const importers::RankData& rank = run.value().ranks[0];
  EXPECT_EQ(rank.status, "running");
  ASSERT_EQ(rank.epochs.size(), 2u);
  EXPECT_EQ(rank.epochs[0].samples, 64);
  EXPECT_FALSE(rank.epochs[1].samples.has_value());
  ASSERT_EQ(rank.steps.size(), 2u);
  EXPECT_EQ(rank.steps[0].step, 0);
  EXPECT_EQ(rank.steps[1].step, 1);
  EXPECT_EQ(rank.steps[0].samples, 32);
  EXPECT_NEAR(rank.steps[0].duration_s, step.value().duration_s, 1e-9);
  ASSERT_TRUE(run.value().info.has_value());
  EXPECT_EQ(run.value().info->writer, "rank0");
  EXPECT_EQ(run.value().info->status, "running");

  ASSERT_TRUE(r.finish(true).ok());
  EXPECT_FALSE(r.begin_epoch(3).ok());
  run = importers::read_run(r.run_dir());
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run.value().status, "completed");
  const RunInfo& info = *run.value().info;
  EXPECT_EQ(info.status, "completed");
  EXPECT_EQ(info.world_size, 1);
  EXPECT_EQ(info.strategy, "ddp");
  EXPECT_EQ(info.torch_version, "2.13.0");
  EXPECT_EQ(info.command, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_EQ(info.hosts, (std::vector<std::string>{"testhost"}));
  ASSERT_TRUE(info.start_unix_ns && info.end_unix_ns);
  EXPECT_GT(*info.end_unix_ns, *info.start_unix_ns);
  EXPECT_EQ(run.value().ranks[0].info->status, "completed");
  EXPECT_TRUE(run.value().warnings.empty());
}

TEST(RankRecorder, RefusesAFolderAnotherProcessWrote) {
  TempDir dir("reuse");
  auto first = RankRecorder::open(context(dir.path(), 0, 1), {}, no_gpu_env());
  ASSERT_TRUE(first.ok());
  auto second = RankRecorder::open(context(dir.path(), 0, 1), {}, no_gpu_env());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("already has rank 0"), std::string::npos);
  RunContext bad = context(dir.path(), 0, 1);
  bad.run = "../escape";
  EXPECT_FALSE(RankRecorder::open(bad, {}, no_gpu_env()).ok());
}

TEST(RankRecorder, DestroyedWithoutFinishIsFailed) {
  TempDir dir("fail");
  std::string run_dir;
  {
    auto r = RankRecorder::open(context(dir.path(), 0, 1), {}, no_gpu_env());
    ASSERT_TRUE(r.ok());
    run_dir = r.value()->run_dir();
  }
  auto run = importers::read_run(run_dir);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run.value().status, "failed");
  EXPECT_EQ(run.value().info->status, "failed");
}

// Eight processes at once, like eight ranks on a shared file system: each writes its own rank folder
// as fast as it can, and all of them also append to one shared file, which the contract does not need
// but which shows that a one-write() line never interleaves with another process's line.
TEST(RankRecorder, EightProcessesWritingAtOnceLoseAndInterleaveNothing) {
  TempDir dir("eight");
  constexpr int kProcs = 8, kEpochs = 1000;
  const std::string shared = dir.file("shared.csv");
  // The shared file and its header exist before the children start: eight processes opening an
  // empty file at once could each find it empty and each write the header (CsvAppender writes it
  // when the file is empty; its contract is one process per file).
  ASSERT_TRUE(CsvAppender::open(shared, "proc,i,payload").ok());
  std::vector<pid_t> children;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      {
        auto r = RankRecorder::open(context(dir.path(), p, kProcs), {}, no_gpu_env());
        auto shared_csv = CsvAppender::open(shared, "proc,i,payload");
        if (!r.ok() || !shared_csv.ok()) _exit(10);
        const std::string payload(200 + p * 10, static_cast<char>('a' + p));
        for (int e = 0; e < kEpochs && code == 0; ++e) {
          if (!r.value()->begin_epoch(e).ok() || !r.value()->begin_step().ok() || !r.value()->end_step(p).ok() ||
              !r.value()->end_epoch(e * 10 + p).ok()) {
            code = 11;
          }
          if (!shared_csv.value().append(std::to_string(p) + "," + std::to_string(e) + "," + payload + "\n").ok()) {
            code = 12;
          }
        }
        if (!r.value()->finish(code == 0).ok()) code = 13;
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  auto run = importers::read_run(dir.file("exp/run1"));
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run.value().warnings.empty()) << run.value().warnings.front();
  ASSERT_EQ(run.value().ranks.size(), static_cast<size_t>(kProcs));
  EXPECT_EQ(run.value().status, "completed");
  EXPECT_EQ(run.value().epochs_completed(), kEpochs);
  for (int p = 0; p < kProcs; ++p) {
    const importers::RankData& rank = run.value().ranks[p];
    EXPECT_EQ(rank.rank, p);
    ASSERT_EQ(rank.epochs.size(), static_cast<size_t>(kEpochs));
    ASSERT_EQ(rank.steps.size(), static_cast<size_t>(kEpochs));
    for (int e = 0; e < kEpochs; ++e) {
      EXPECT_EQ(rank.epochs[e].epoch, e);
      EXPECT_EQ(rank.epochs[e].samples, e * 10 + p);
      EXPECT_EQ(rank.steps[e].samples, p);
    }
  }
  std::vector<std::string> warnings;
  auto table = importers::read_csv(shared, &warnings);
  ASSERT_TRUE(table.ok());
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(table.value().rows.size(), static_cast<size_t>(kProcs * kEpochs));
  std::vector<std::set<int>> seen(kProcs);
  for (const auto& row : table.value().rows) {
    int p = std::stoi(row[0]);
    ASSERT_GE(p, 0);
    ASSERT_LT(p, kProcs);
    EXPECT_EQ(row[2], std::string(200 + p * 10, static_cast<char>('a' + p)));
    seen[p].insert(std::stoi(row[1]));
  }
  for (int p = 0; p < kProcs; ++p) EXPECT_EQ(seen[p].size(), static_cast<size_t>(kEpochs));
}

}  // namespace
}  // namespace scaleprof::collect

// Loading a set of traces: ranks from distributedInfo, file names and overrides, duplicate and
// missing ranks, progress through each file, itwinai's worker names.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "kineto_test_text.h"
#include "scratch_dir.h"
#include "trace/kineto_reader.h"
#include "trace/trace_set.h"

namespace scaleprof::trace {
namespace {

namespace fs = std::filesystem;

using TempDir = ::scaleprof::testing::ScratchDir;
using ::scaleprof::testing::gzip_text;
using ::scaleprof::testing::modern_trace;
using ::scaleprof::testing::with_event;

TEST(TraceSet, RanksFromDistributedInfoFileNamesAndOverrides) {
  TempDir dir;
  // Minified distributedInfo ("rank":3 with no space) is read as JSON, not by a text scan.
  dir.write("a.json", modern_trace(3));
  dir.write("worker_rank-5.json", with_event("{\"ph\":\"X\",\"name\":\"x\",\"ts\":1,\"dur\":1}"));
  dir.write("nameless.json", with_event("{\"ph\":\"X\",\"name\":\"y\",\"ts\":1,\"dur\":1}"));
  auto set = load_traces({dir.path()});
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set.value().ranks.size(), 3u);
  EXPECT_EQ(set.value().ranks[0].rank, 0);  // the nameless file gets the lowest free rank
  EXPECT_NE(set.value().ranks[0].path.find("nameless"), std::string::npos);
  EXPECT_EQ(set.value().ranks[1].rank, 3);
  EXPECT_EQ(set.value().ranks[2].rank, 5);
  ASSERT_EQ(set.value().warnings.size(), 1u);
  EXPECT_NE(set.value().warnings[0].message.find("numbered rank 0"), std::string::npos);
  EXPECT_NE(set.value().warnings[0].where.find("nameless"), std::string::npos);  // the file, as the place
  EXPECT_FALSE(set.value().partial());

  LoadOptions options;
  options.rank_overrides = {{"nameless.json", 9}};
  auto overridden = load_traces({dir.path()}, options);
  ASSERT_TRUE(overridden.ok());
  EXPECT_EQ(overridden.value().ranks.back().rank, 9);
  EXPECT_TRUE(overridden.value().warnings.empty());
}

// `--rank DIR/FILE=N` names that file only: two traces of one name in two folders get their own
// ranks (before, a match on the file name alone gave both the last override's rank).
TEST(TraceSet, RankOverrideWithAFolderNamesThatFileOnly) {
  TempDir dir;
  fs::create_directories(fs::path(dir.path()) / "x");
  fs::create_directories(fs::path(dir.path()) / "y");
  const std::string a = dir.write("x/trace.json", with_event("{\"ph\":\"X\",\"name\":\"x\",\"ts\":1,\"dur\":1}"));
  const std::string b = dir.write("y/trace.json", with_event("{\"ph\":\"X\",\"name\":\"y\",\"ts\":1,\"dur\":1}"));
  LoadOptions options;
  options.rank_overrides = {{a, 4}, {(fs::path(b).parent_path() / "." / "trace.json").string(), 7}};
  auto set = load_traces({a, b}, options);
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set.value().ranks.size(), 2u);
  EXPECT_EQ(set.value().ranks[0].rank, 4);
  EXPECT_EQ(set.value().ranks[0].path, a);
  EXPECT_EQ(set.value().ranks[1].rank, 7);
  EXPECT_EQ(set.value().ranks[1].path, b);
}

TEST(TraceSet, DuplicateRanksNameBothFiles) {
  TempDir dir;
  std::string a = dir.write("a.json", modern_trace(1));
  std::string b = dir.write("b.json", modern_trace(1));
  auto set = load_traces({a, b});
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.error().message.find("rank 1"), std::string::npos);
  EXPECT_NE(set.error().message.find(a), std::string::npos);
  EXPECT_NE(set.error().message.find(b), std::string::npos);
}

TEST(TraceSet, OneBadRankAmongGoodOnesIsPartial) {
  TempDir dir;
  dir.write("rank0.json", modern_trace(0));
  dir.write("rank1.json.gz", gzip_text(modern_trace(1)).substr(0, 300));
  dir.write("rank2.json", modern_trace(2));
  dir.write("notes.txt", "not a trace");
  auto set = load_traces({dir.path()});
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set.value().ranks.size(), 2u);
  EXPECT_EQ(set.value().ranks[0].rank, 0);
  EXPECT_EQ(set.value().ranks[1].rank, 2);
  ASSERT_EQ(set.value().errors.size(), 1u);
  EXPECT_NE(set.value().errors[0].text().find("rank1.json.gz"), std::string::npos);
  EXPECT_EQ(set.value().errors[0].severity, Severity::kError);
  EXPECT_TRUE(set.value().partial());
}

TEST(TraceSet, ProgressCountsBytesThroughEachFile) {
  TempDir dir;
  dir.write("rank0.json", modern_trace(0));
  dir.write("rank1.json.gz", gzip_text(modern_trace(1)));
  uint64_t expected_total = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) expected_total += entry.file_size();
  LoadOptions options;
  options.threads = 1;
  options.parse.window_bytes = 200;  // many windows, so progress moves inside each file
  std::vector<uint64_t> seen;
  size_t last_done = 0;
  uint64_t total_seen = 0;
  options.progress = [&](size_t done, size_t total, uint64_t bytes, uint64_t total_bytes) {
    EXPECT_EQ(total, 2u);
    last_done = done;
    total_seen = total_bytes;
    seen.push_back(bytes);
  };
  auto set = load_traces({dir.path()}, options);
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(total_seen, expected_total);
  EXPECT_EQ(last_done, 2u);
  ASSERT_GT(seen.size(), 4u);  // more calls than files: progress within a file
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(seen.back(), expected_total);
}

TEST(TraceSet, MissingPathsAndEmptyDirectories) {
  TempDir dir;
  auto missing = load_traces({dir.path() + "/nope.json"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no such file"), std::string::npos);
  auto empty = load_traces({dir.path()});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("no trace files"), std::string::npos);
}

TEST(TraceSet, RankFromFileName) {
  EXPECT_EQ(rank_from_file_name("/x/rank-3.json"), 3);
  EXPECT_EQ(rank_from_file_name("rank12.pt.trace.json.gz"), 12);
  EXPECT_EQ(rank_from_file_name("trainer_rank_7.json"), 7);
  EXPECT_EQ(rank_from_file_name("/rank-9/worker.json"), std::nullopt);  // only the file name counts
  EXPECT_EQ(rank_from_file_name("ranking.json"), std::nullopt);
  // itwinai's profiler writes worker_<global rank>.<timestamp>.pt.trace.json.
  EXPECT_EQ(rank_from_file_name("/run/torch-traces/worker_10.1712345678901.pt.trace.json"), 10);
  EXPECT_EQ(rank_from_file_name("worker_2.1712345678901.pt.trace.json.gz"), 2);
}

// itwinai's stored traces carry no rank inside: the worker number in the name is the rank (it used to
// be numbered 0, 1, ... in file order, so worker_10 sorted before worker_2 became rank 1).
TEST(TraceSet, ItwinaiWorkerNamesGiveTheRank) {
  TempDir dir;
  const std::string trace =
      R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":2}]})";
  dir.write("worker_10.1712345678901.pt.trace.json", trace);
  dir.write("worker_2.1712345678902.pt.trace.json", trace);
  auto set = load_traces({dir.path()});
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set.value().ranks.size(), 2u);
  EXPECT_EQ(set.value().ranks[0].rank, 2);
  EXPECT_EQ(set.value().ranks[1].rank, 10);
  EXPECT_NE(set.value().ranks[1].path.find("worker_10"), std::string::npos);
  EXPECT_TRUE(set.value().warnings.empty());
}

}  // namespace
}  // namespace scaleprof::trace

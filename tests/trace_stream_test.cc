// Streaming over ranks (engine/trace_stream.h) on several threads gives the tables of a serial read
// (one file at a time, in file order, its analyses one after the other), whatever order the ranks
// finish in: every `scaleprof trace` report, rendered as table, CSV and JSON, over the shared
// multi-rank traces, with files that have no rank (numbered after all are read) and with a --ranks
// selection; the warnings and errors are those of the set loaded whole.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/trace_pipeline.h"
#include "report/trace_report.h"
#include "test_paths.h"
#include "trace/trace_set.h"

namespace scaleprof {
namespace {

namespace fs = std::filesystem;

const fs::path kStreamTestTraces = fs::path(SCALEPROF_SHARED_DIR) / "traces" / "hta";

const char* const kReports[] = {"summary", "breakdown", "kernels",     "idle",       "overlap", "launch",
                                "ops",     "steps",     "collectives", "stragglers", "phases",  "decompose"};

std::string render_all(const report::TraceReport& r, report::Format format) {
  report::RenderOptions options;
  options.format = format;
  return report::render_many(r.tables, r.keys, options);
}

// Streams `paths` on `threads` threads and on one, and compares every report's rendering; the
// warnings and errors with those of the set loaded whole.
void expect_same_reports(const std::vector<std::string>& paths, const report::TraceReportOptions& options,
                         unsigned threads = 2) {
  trace::LoadOptions load;
  load.threads = threads;
  trace::LoadOptions serial;
  serial.threads = 1;
  auto whole = trace::load_traces(paths, load);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  for (const char* name : kReports) {
    SCOPED_TRACE(name);
    auto streamed = pipeline::stream_report(name, paths, load, options);
    ASSERT_TRUE(streamed.ok()) << streamed.error().message;
    ASSERT_TRUE(streamed.value().any_selected);
    EXPECT_EQ(streamed.value().set.warnings, whole.value().warnings);
    EXPECT_EQ(streamed.value().set.errors, whole.value().errors);
    auto one_by_one = pipeline::stream_report(name, paths, serial, options);
    ASSERT_TRUE(one_by_one.ok()) << one_by_one.error().message;
    const report::TraceReport& from_serial = one_by_one.value().report;
    const report::TraceReport& from_stream = streamed.value().report;
    ASSERT_FALSE(from_serial.tables.empty());
    EXPECT_EQ(from_stream.keys, from_serial.keys);
    for (report::Format format : {report::Format::kTable, report::Format::kCsv, report::Format::kJson}) {
      const std::string a = render_all(from_stream, format);
      EXPECT_EQ(a, render_all(from_serial, format)) << "format " << static_cast<int>(format);
      EXPECT_GT(a.size(), 100U);
    }
  }
}

class TraceStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::is_directory(kStreamTestTraces / "trace_filter"))
      GTEST_SKIP() << "shared traces not found at " << kStreamTestTraces;
  }
};

TEST_F(TraceStreamTest, EveryReportMatchesASerialReadOnTwoRanks) {
  expect_same_reports({(kStreamTestTraces / "trace_filter").string()}, {});
  report::TraceReportOptions options;
  options.top = 0;
  options.include_last_step = true;
  options.sort_by = "calls";
  expect_same_reports({(kStreamTestTraces / "trace_filter").string()}, options);
}

TEST_F(TraceStreamTest, OneFileAnalysedOnSeveralThreadsMatchesASerialRead) {
  // One file gets every thread, and its analyses (the HTA group, operators, steps, collectives)
  // then run at once on them.
  trace::LoadOptions load;
  load.threads = 4;
  ASSERT_EQ(trace::threads_per_file(load, 1), 4U);
  expect_same_reports({(kStreamTestTraces / "nccl_parser_config" / "nccl_data.json.gz").string()}, {}, 4);
  expect_same_reports({(kStreamTestTraces / "df_index_resolver" / "df_index_resolver.json.gz").string()}, {}, 4);
}

TEST(TraceStreamThreads, ThreadsAreDividedBetweenFiles) {
  trace::LoadOptions load;
  load.threads = 8;
  EXPECT_EQ(trace::threads_per_file(load, 1), 8U);
  EXPECT_EQ(trace::threads_per_file(load, 3), 2U);
  EXPECT_EQ(trace::threads_per_file(load, 20), 1U);
  EXPECT_EQ(trace::threads_per_file(load, 0), 8U);
  load.parse.threads = 3;  // a file's own threads are never fewer than asked
  EXPECT_EQ(trace::threads_per_file(load, 20), 3U);
}

TEST_F(TraceStreamTest, UnrankedFilesAndRankSelectionMatchASerialRead) {
  // rank_unavailable and distributed_info_unavailable carry no rank: they become ranks 2 and 3 only
  // once every file is read, so their results are kept until then.
  const std::vector<std::string> paths = {(kStreamTestTraces / "rank_unavailable").string(),
                                          (kStreamTestTraces / "distributed_info_unavailable").string(),
                                          (kStreamTestTraces / "trace_filter").string()};
  expect_same_reports(paths, {});
  report::TraceReportOptions options;
  options.ranks = {0, 3};
  expect_same_reports(paths, options);

  trace::LoadOptions load;
  auto streamed = pipeline::stream_report("summary", paths, load, options);
  ASSERT_TRUE(streamed.ok());
  const auto inputs = streamed.value().report.tables.at(0).all_rows();
  ASSERT_EQ(streamed.value().report.keys.at(0), "inputs");
  ASSERT_EQ(inputs.size(), 2U);
  EXPECT_EQ(std::get<int64_t>(inputs[0][0].value), 0);
  EXPECT_EQ(std::get<int64_t>(inputs[1][0].value), 3);
  EXPECT_NE(std::get<std::string>(inputs[1][1].value).find("distributed_info_not_found"), std::string::npos);
}

TEST_F(TraceStreamTest, RanksMatchingNoneReadAreReported) {
  report::TraceReportOptions options;
  options.ranks = {5};
  auto streamed = pipeline::stream_report("summary", {(kStreamTestTraces / "trace_filter").string()}, {}, options);
  ASSERT_TRUE(streamed.ok());
  EXPECT_TRUE(streamed.value().any_read);
  EXPECT_FALSE(streamed.value().any_selected);
  EXPECT_TRUE(streamed.value().report.tables.empty());
}

}  // namespace
}  // namespace scaleprof

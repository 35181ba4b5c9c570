// The HTA-style reports end to end: `scaleprof trace breakdown|overlap|kernels|idle|launch` on real
// traces, checking the JSON shapes promised to users and that the numbers are the analyses'.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "report/trace_report.h"
#include "test_paths.h"
#include "trace/trace_set.h"
#include "trace_report_util.h"

namespace scaleprof {
namespace {

namespace fs = std::filesystem;
const fs::path kTraces = fs::path(SCALEPROF_SHARED_DIR) / "traces" / "hta";

// Runs the CLI and returns its standard output.
std::string run_cli(const std::string& args) {
  std::string out;
  FILE* p = popen((std::string(SCALEPROF_CLI_PATH) + " " + args + " 2>/dev/null").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

class TraceHtaReports : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::is_directory(kTraces)) GTEST_SKIP() << "shared traces not found at " << kTraces;
  }
};

TEST_F(TraceHtaReports, BreakdownJsonIsAnArrayOfRanks) {
  const std::string json = run_cli("trace breakdown --format json " + (kTraces / "trace_filter").string());
  simdjson::dom::parser parser;
  simdjson::dom::array rows;
  ASSERT_EQ(parser.parse(json).get(rows), simdjson::SUCCESS) << json;
  ASSERT_EQ(rows.size(), 3u);  // ranks 0, 1, then both pooled
  int64_t rank = -1;
  for (simdjson::dom::element row : rows) {
    if (row["rank"].is_null()) continue;  // the pooled row
    ASSERT_EQ(row["rank"].get(rank), simdjson::SUCCESS);
    for (const char* key :
         {"idle_us", "compute_us", "non_compute_us", "kernel_us", "idle_pct", "compute_pct", "non_compute_pct"}) {
      double v;
      EXPECT_EQ(row[key].get(v), simdjson::SUCCESS) << key;
    }
  }
  // Rank 1 of HTA's trace_filter: kernel time 600674 us, idle 54.72 %.
  double kernel_us = 0, idle_pct = 0;
  ASSERT_EQ(rows.at(1)["kernel_us"].get(kernel_us), simdjson::SUCCESS);
  ASSERT_EQ(rows.at(1)["idle_pct"].get(idle_pct), simdjson::SUCCESS);
  EXPECT_EQ(rank, 1);
  EXPECT_DOUBLE_EQ(kernel_us, 600674.0);
  EXPECT_NEAR(idle_pct, 54.72, 0.005);
  // Pooled: idle (321378 + 328671) / kernel time (600058 + 600674).
  ASSERT_TRUE(rows.at(2)["rank"].is_null());
  ASSERT_EQ(rows.at(2)["kernel_us"].get(kernel_us), simdjson::SUCCESS);
  ASSERT_EQ(rows.at(2)["idle_pct"].get(idle_pct), simdjson::SUCCESS);
  EXPECT_DOUBLE_EQ(kernel_us, 1200732.0);
  EXPECT_NEAR(idle_pct, 100.0 * 650049 / 1200732, 1e-9);
}

TEST_F(TraceHtaReports, OverlapJsonSaysWhenThereIsNoCommunication) {
  const std::string json = run_cli("trace overlap --format json " + (kTraces / "trace_filter").string() + " " +
                                   (kTraces / "triton_example" / "triton_example.json.gz").string());
  simdjson::dom::parser parser;
  simdjson::dom::array rows;
  ASSERT_EQ(parser.parse(json).get(rows), simdjson::SUCCESS) << json;
  ASSERT_EQ(rows.size(), 4u);  // three ranks, then pooled
  double pct = 0;
  ASSERT_EQ(rows.at(0)["comm_comp_overlap_pct"].get(pct), simdjson::SUCCESS);
  EXPECT_NEAR(pct, 11.81, 0.005);
  // The Triton trace has no communication: an explicit null and a zero count, not NaN.
  EXPECT_TRUE(rows.at(2)["comm_comp_overlap_pct"].is_null());
  int64_t comm_events = -1;
  ASSERT_EQ(rows.at(2)["comm_events"].get(comm_events), simdjson::SUCCESS);
  EXPECT_EQ(comm_events, 0);
  // Pooled over the three ranks: (23068 + 33691) / (195327 + 168027) us of communication hidden.
  ASSERT_EQ(rows.at(3)["comm_comp_overlap_pct"].get(pct), simdjson::SUCCESS);
  EXPECT_NEAR(pct, 100.0 * (23068 + 33691) / (195327 + 168027), 1e-9);
}

TEST_F(TraceHtaReports, ReportsHaveTheirTables) {
  const std::vector<std::string> paths = {(kTraces / "trace_filter").string()};
  report::TraceReportOptions options;
  options.top = 2;
  const report::TraceReport kernels = testing::streamed_report("kernels", paths, options);
  EXPECT_EQ(kernels.keys, (std::vector<std::string>{"kernel_types", "kernel_types_per_rank", "kernels"}));
  // HTA's cross-rank table: seven type sets, the largest COMMUNICATION with 305584 us.
  ASSERT_EQ(kernels.tables[0].rows.size(), 7u);
  EXPECT_EQ(std::get<std::string>(kernels.tables[0].rows[0][0].value), "COMMUNICATION");
  EXPECT_DOUBLE_EQ(std::get<double>(kernels.tables[0].rows[0][1].value), 305584.0);
  // Top 2 plus "others" for computation; memory likewise; one communication kernel; per rank.
  int others = 0;
  for (const auto& row : kernels.tables[2].all_rows()) others += std::get<std::string>(row.back().value) == "others";
  EXPECT_EQ(others, 4);

  const report::TraceReport idle = testing::streamed_report("idle", paths, options);
  EXPECT_EQ(idle.keys, (std::vector<std::string>{"idle", "idle_gaps", "idle_streams"}));
  EXPECT_EQ(idle.tables[0].all_rows().size(), 2u * 5u * 3u);  // ranks x streams x categories
  const auto streams = idle.tables[2].all_rows();
  ASSERT_EQ(streams.size(), 2u * 5u);  // ranks x streams
  for (const auto& row : streams) {
    // events = 1 + gaps + overlaps on every stream
    EXPECT_EQ(std::get<int64_t>(row[3].value), 1 + std::get<int64_t>(row[4].value) + std::get<int64_t>(row[5].value));
  }

  options.ranks = {1};
  const report::TraceReport launch = testing::streamed_report("launch", paths, options);
  const auto launches = launch.tables[0].all_rows();
  ASSERT_EQ(launches.size(), 3u);  // cpu, gpu, delay for rank 1
  EXPECT_EQ(std::get<int64_t>(launches[0][2].value), 577);
  EXPECT_EQ(launch.tables[1].all_rows().size(), 2u);
}

}  // namespace
}  // namespace scaleprof

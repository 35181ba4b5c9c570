// nsys GPU metrics (trace/nsys_gpu_metrics.h, analysis/gpu_metrics.h, `trace summary`'s gpu_metrics
// and gpu_utilization tables) on HAND-WRITTEN SQLite files: the GPU_METRICS and
// TARGET_INFO_GPU_METRICS tables as the export schema documents them, with made-up values. No real
// capture with GPU metrics was available: what a real export holds may differ (docs/nsys.md).
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "analysis/gpu_metrics.h"
#include "nsys_fixture.h"
#include "pipeline/trace_pipeline.h"
#include "scalability_fixtures.h"
#include "trace/nsys_gpu_metrics.h"

namespace scaleprof {
namespace {

using testing::kNsysFixtureSchema;
using testing::nsys_fixture_rank_sql;
using testing::write_sqlite;

// Two GPUs (typeId 0x100 and 0x101: the low byte is the GPU), two metrics each: "SMs Active
// [Throughput %]" and "GPC Clock Frequency [MHz]"; samples every 1 ms from 0 to 9 ms, SMs Active of
// GPU 0 at 10 % for the first half and 90 % for the second, of GPU 1 at 50 % throughout.
std::string gpu_metrics_sql(bool with_type_name = true) {
  std::string sql = with_type_name ? R"sql(
CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, typeName TEXT NOT NULL,
  metricId INTEGER NOT NULL, metricName TEXT NOT NULL);
INSERT INTO TARGET_INFO_GPU_METRICS VALUES (256, 0, 'GH100', 1, 'SMs Active [Throughput %]'),
  (256, 0, 'GH100', 2, 'GPC Clock Frequency [MHz]'), (257, 1, 'GH100', 1, 'SMs Active [Throughput %]'),
  (257, 1, 'GH100', 2, 'GPC Clock Frequency [MHz]'), (256, 2, 'GH100', 1, 'SMs Active [Throughput %]');
)sql"
                                   : R"sql(
CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL);
INSERT INTO TARGET_INFO_GPU_METRICS VALUES (256, 1, 'SMs Active [Throughput %]'), (256, 2, 'GPC Clock Frequency [MHz]'),
  (257, 1, 'SMs Active [Throughput %]'), (257, 2, 'GPC Clock Frequency [MHz]');
)sql";
  sql +=
      "CREATE TABLE GPU_METRICS (timestamp INTEGER NOT NULL, typeId INTEGER NOT NULL, metricId INTEGER NOT NULL, "
      "value INTEGER NOT NULL);\n";
  for (int ms = 0; ms < 10; ++ms) {
    const std::string ts = std::to_string(ms * 1'000'000);
    sql += "INSERT INTO GPU_METRICS VALUES (" + ts + ", 256, 1, " + (ms < 5 ? "10" : "90") + ");\n";
    sql += "INSERT INTO GPU_METRICS VALUES (" + ts + ", 257, 1, 50);\n";
    sql += "INSERT INTO GPU_METRICS VALUES (" + ts + ", 256, 2, 1755);\n";
  }
  sql += "INSERT INTO GPU_METRICS VALUES (3000000, 256, 9, 1);\n";    // a metric no name is given for
  sql += "INSERT INTO GPU_METRICS VALUES (3000000, 256, 1, 'x');\n";  // not a number
  return sql;
}

class NsysGpuMetrics : public ::testing::Test {
 protected:
  NsysGpuMetrics() : dir_("gpu-metrics") {}
  std::string make(const std::string& name, const std::string& sql) {
    const std::string path = dir_ / name;
    EXPECT_EQ(write_sqlite(path, sql), "");
    return path;
  }
  testing::ScratchDir dir_;
};

TEST_F(NsysGpuMetrics, ReadAndFoldedIntoTracksPerGpu) {
  const std::string path =
      make("m.sqlite", std::string(kNsysFixtureSchema) + nsys_fixture_rank_sql(0, 0) + gpu_metrics_sql());
  std::optional<analysis::GpuMetricsTracks> tracks;
  trace::NsysGpuMetricsHeader header;
  int64_t skipped = 0;
  auto read = trace::read_nsys_gpu_metrics(
      path,
      [&](const trace::NsysGpuMetricsHeader& h) {
        header = h;
        tracks.emplace(header, 2);
      },
      [&](int64_t type, int64_t metric, int64_t ts, double v) { tracks->add(type, metric, ts, v); }, &skipped);
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_TRUE(read.value());
  EXPECT_EQ(header.metrics.size(), 4U);  // (256, 1) once, though listed for two sources
  EXPECT_EQ(header.first_ns, 0);
  EXPECT_EQ(header.last_ns, 9'000'000);
  EXPECT_EQ(header.rows, 32);
  EXPECT_EQ(skipped, 1);
  EXPECT_EQ(tracks->unnamed(), 1);
  const std::vector<analysis::GpuMetricTrack> t = tracks->finish();
  ASSERT_EQ(t.size(), 3U);  // GPU 1's clock has no sample
  EXPECT_EQ(t[0].gpu, 0);
  EXPECT_EQ(t[0].metric, "SMs Active [Throughput %]");
  EXPECT_EQ(t[0].set, "GH100");
  EXPECT_TRUE(t[0].percent);
  EXPECT_EQ(t[0].samples, 10);
  EXPECT_DOUBLE_EQ(t[0].mean, 50);
  EXPECT_DOUBLE_EQ(t[0].min, 10);
  EXPECT_DOUBLE_EQ(t[0].max, 90);
  // Two bins over 0-9 ms: samples at 0-4 ms in the first (ts < 4.5 ms), 5-9 ms in the second.
  ASSERT_EQ(t[0].bins.size(), 2U);
  EXPECT_EQ(t[0].bins[0].start_ns, 0);
  EXPECT_EQ(t[0].bins[0].end_ns, 4'500'000);
  EXPECT_EQ(t[0].bins[0].samples, 5);
  EXPECT_DOUBLE_EQ(t[0].bins[0].mean, 10);
  EXPECT_DOUBLE_EQ(t[0].bins[1].mean, 90);
  EXPECT_EQ(t[1].metric, "GPC Clock Frequency [MHz]");
  EXPECT_FALSE(t[1].percent);
  EXPECT_EQ(t[2].gpu, 1);
  EXPECT_DOUBLE_EQ(t[2].mean, 50);
}

TEST_F(NsysGpuMetrics, SummaryShowsTheUtilizationTrack) {
  const std::string path =
      make("rank0.sqlite", std::string(kNsysFixtureSchema) + nsys_fixture_rank_sql(0, 0) + gpu_metrics_sql(false));
  trace::LoadOptions load;
  report::TraceReportOptions options;
  auto streamed = pipeline::stream_report("summary", {path}, load, options);
  ASSERT_TRUE(streamed) << streamed.error().message;
  const report::TraceReport& r = streamed.value().report;
  const auto at = [&](const std::string& key) {
    for (size_t i = 0; i < r.keys.size(); ++i) {
      if (r.keys[i] == key) return r.tables[i].all_rows();
    }
    ADD_FAILURE() << "no table " << key;
    return std::vector<std::vector<report::Cell>>();
  };
  const auto summary = at("gpu_metrics");
  ASSERT_EQ(summary.size(), 3U);
  EXPECT_EQ(std::get<std::string>(summary[0][3].value), "SMs Active [Throughput %]");
  EXPECT_DOUBLE_EQ(std::get<double>(summary[0][5].value), 50);
  EXPECT_EQ(std::get<std::string>(summary[0][2].value), "");  // no typeName in this export
  // The track: only the percentages, 20 bins per GPU; GPU 0 at 10 % then 90 %, GPU 1 at 50 %.
  const auto track = at("gpu_utilization");
  ASSERT_EQ(track.size(), 40U);
  EXPECT_EQ(std::get<int64_t>(track[0][1].value), 0);
  EXPECT_DOUBLE_EQ(std::get<double>(track[0][7].value), 10);
  EXPECT_DOUBLE_EQ(std::get<double>(track[19][7].value), 90);
  EXPECT_EQ(std::get<int64_t>(track[20][1].value), 1);
  EXPECT_DOUBLE_EQ(std::get<double>(track[20][7].value), 50);
  // A bin without samples is null, not 0 %.
  EXPECT_TRUE(std::holds_alternative<std::monostate>(track[1][7].value));
  // Two skipped rows, said once.
  bool warned = false;
  for (const std::string& w : texts(streamed.value().set.warnings)) {
    warned |= w.find("GPU_METRICS: 2 row(s) skipped (1 without a number, 1 of a metric") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

TEST_F(NsysGpuMetrics, AbsentOrBrokenTables) {
  // Without GPU_METRICS: nothing, and summary has no such table.
  const std::string plain = make("plain.sqlite", std::string(kNsysFixtureSchema) + nsys_fixture_rank_sql(0, 0));
  int64_t skipped = 0;
  auto none = trace::read_nsys_gpu_metrics(
      plain, [](const trace::NsysGpuMetricsHeader&) {}, [](int64_t, int64_t, int64_t, double) {}, &skipped);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none.value());
  trace::LoadOptions load;
  auto streamed = pipeline::stream_report("summary", {plain}, load, report::TraceReportOptions{});
  ASSERT_TRUE(streamed);
  for (const std::string& k : streamed.value().report.keys) EXPECT_NE(k, "gpu_metrics");
  // GPU_METRICS without its value column: one line naming file and table; the events are still read.
  const std::string broken =
      make("broken.sqlite", std::string(kNsysFixtureSchema) + nsys_fixture_rank_sql(0, 0) +
                                "CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER, metricId INTEGER);\n");
  auto bad = trace::read_nsys_gpu_metrics(
      broken, [](const trace::NsysGpuMetricsHeader&) {}, [](int64_t, int64_t, int64_t, double) {}, &skipped);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            broken + ": table GPU_METRICS has no column value (is this an nsys export? nsys export --type sqlite)");
  auto still = pipeline::stream_report("summary", {broken}, load, report::TraceReportOptions{});
  ASSERT_TRUE(still);
  EXPECT_TRUE(still.value().any_read);
  ASSERT_FALSE(still.value().set.warnings.empty());
  EXPECT_EQ(still.value().set.warnings.back(), "GPU metrics not read: " + bad.error().message);
}

}  // namespace
}  // namespace scaleprof

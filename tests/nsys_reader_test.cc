// The nsys reader (trace/nsys_reader.h, trace/trace_file.h): the real H200 capture in
// ../shared/traces/nsys (its 18 kernels, NVTX ranges, copies and the temporal breakdown, each checked
// against the file through SQLite directly), hand-written fixtures (tests/nsys_fixture.h) for two
// ranks with NCCL kernels, hostile files, and `.nsys-rep` input with and without nsys on PATH.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "analysis/analysis_window.h"
#include "analysis/temporal_breakdown.h"
#include "cli_harness.h"
#include "nsys_fixture.h"
#include "scalability_fixtures.h"
#include "test_paths.h"
#include "trace/nsys_reader.h"
#include "trace/trace_file.h"
#include "trace/trace_set.h"

namespace scaleprof::trace {
namespace {

namespace fs = std::filesystem;
using testing::kNsysFixtureSchema;
using testing::nsys_fixture_rank_sql;
using testing::run_cli;
using testing::write_sqlite;

const fs::path kCapture = fs::path(SCALEPROF_SHARED_DIR) / "traces" / "nsys" / "fuser_report1.sqlite";

// A scratch folder of its own per process and test (ctest runs tests in parallel processes).
using Scratch = scaleprof::testing::ScratchDir;

// Rows of `sql` on the file at `path`, every cell as text ("NULL" for NULL), read with SQLite
// directly: the independent side of the checks below.
std::vector<std::vector<std::string>> query(const std::string& path, const std::string& sql) {
  std::vector<std::vector<std::string>> rows;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(
      db, sql.c_str(),
      [](void* out, int n, char** values, char**) {
        auto* r = static_cast<std::vector<std::vector<std::string>>*>(out);
        r->emplace_back();
        for (int i = 0; i < n; ++i) r->back().emplace_back(values[i] != nullptr ? values[i] : "NULL");
        return 0;
      },
      &rows, &error);
  EXPECT_EQ(rc, SQLITE_OK) << (error != nullptr ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
  return rows;
}

std::vector<uint32_t> rows_of(const RankTrace& t, Category c) {
  std::vector<uint32_t> out;
  for (uint32_t r = 0; r < t.events.size(); ++r) {
    if (t.events.cat[r] == c) out.push_back(r);
  }
  return out;
}

#define REQUIRE_CAPTURE() \
  if (!fs::exists(kCapture)) GTEST_SKIP() << "shared nsys capture not found at " << kCapture

TEST(NsysCapture, DetectedByContent) {
  REQUIRE_CAPTURE();
  EXPECT_EQ(detect_trace_format(kCapture.string()), TraceFormat::kNsysSqlite);
  // The same bytes under a Kineto-looking name are still an nsys export.
  Scratch dir("detect");
  fs::copy_file(kCapture, (dir / "rank-0.json"));
  EXPECT_EQ(detect_trace_format((dir / "rank-0.json")), TraceFormat::kNsysSqlite);
  auto t = read_trace_file((dir / "rank-0.json"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(rows_of(t.value(), Category::kKernel).size(), 18U);
  // And a JSON file called .sqlite goes to the Kineto reader.
  std::ofstream((dir / "x.sqlite")) << R"({"traceEvents": []})";
  EXPECT_EQ(detect_trace_format((dir / "x.sqlite")), TraceFormat::kKineto);
}

TEST(NsysCapture, EighteenKernelsAsSqliteHasThem) {
  REQUIRE_CAPTURE();
  auto read = read_nsys_sqlite(kCapture.string());
  ASSERT_TRUE(read.ok()) << read.error().message;
  const RankTrace& t = read.value();
  const int64_t base = std::stoll(query(kCapture, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")[0][0]);
  EXPECT_EQ(t.metadata.base_time_ns, base);
  const auto expected =
      query(kCapture,
            "SELECT k.start, k.end - k.start, s.value, k.streamId, k.correlationId, k.gridX, k.blockX, "
            "k.registersPerThread, k.staticSharedMemory + k.dynamicSharedMemory "
            "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName ORDER BY k.start");
  ASSERT_EQ(expected.size(), 18U);
  std::vector<uint32_t> kernels = rows_of(t, Category::kKernel);
  ASSERT_EQ(kernels.size(), 18U);
  std::sort(kernels.begin(), kernels.end(), [&](uint32_t a, uint32_t b) { return t.events.ts[a] < t.events.ts[b]; });
  int64_t total = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const uint32_t r = kernels[i];
    SCOPED_TRACE(expected[i][2]);
    EXPECT_EQ(t.events.ts[r], std::stoll(expected[i][0]) + base);
    EXPECT_EQ(t.events.dur[r], std::stoll(expected[i][1]));
    EXPECT_EQ(t.name(r), expected[i][2]);
    EXPECT_EQ(t.events.stream[r], std::stoll(expected[i][3]));
    EXPECT_EQ(t.events.correlation[r], std::stoll(expected[i][4]));
    EXPECT_EQ(t.strings.view(t.events.cat_name[r]), "kernel");
    const auto d = std::find(t.device_args.event.begin(), t.device_args.event.end(), r) - t.device_args.event.begin();
    ASSERT_LT(static_cast<size_t>(d), t.device_args.size());
    EXPECT_EQ(t.device_args.device[d], 0);
    EXPECT_EQ(t.device_args.grid_x[d], std::stoll(expected[i][5]));
    EXPECT_EQ(t.device_args.block_x[d], std::stoll(expected[i][6]));
    EXPECT_EQ(t.device_args.registers_per_thread[d], std::stoll(expected[i][7]));
    EXPECT_EQ(t.device_args.shared_memory[d], std::stoll(expected[i][8]));
    total += t.events.dur[r];
  }
  // The anchor document's figure: 18 kernels, 10.17 ms.
  EXPECT_EQ(total, std::stoll(query(kCapture, "SELECT SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0]));
  EXPECT_NEAR(static_cast<double>(total) / 1e6, 10.17, 0.01);
  ASSERT_EQ(t.metadata.devices.size(), 1U);
  EXPECT_EQ(t.metadata.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t.metadata.devices[0].num_sms, 132);
}

TEST(NsysCapture, NvtxRuntimeCopiesSetsSyncs) {
  REQUIRE_CAPTURE();
  auto read = read_nsys_sqlite(kCapture.string());
  ASSERT_TRUE(read.ok()) << read.error().message;
  const RankTrace& t = read.value();
  auto count = [&](const char* sql) { return std::stoull(query(kCapture, sql)[0][0]); };
  const std::vector<uint32_t> nvtx = rows_of(t, Category::kUserAnnotation);
  EXPECT_EQ(nvtx.size(), 13513U);
  EXPECT_EQ(nvtx.size(), count("SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT NULL"));
  // Every range's text and duration, as a multiset, is the file's.
  std::map<std::pair<std::string, int64_t>, int> want;
  for (const auto& row : query(kCapture,
                               "SELECT COALESCE(e.text, s.value), e.end - e.start FROM NVTX_EVENTS e LEFT JOIN "
                               "StringIds s ON s.id = e.textId WHERE eventType IN (59, 60)")) {
    ++want[{row[0], std::stoll(row[1])}];
  }
  std::map<std::pair<std::string, int64_t>, int> got;
  for (uint32_t r : nvtx) ++got[{std::string(t.name(r)), t.events.dur[r]}];
  EXPECT_EQ(got, want);
  const size_t runtime = rows_of(t, Category::kCudaRuntime).size() + rows_of(t, Category::kCudaDriver).size();
  EXPECT_EQ(runtime, 990U);
  EXPECT_EQ(runtime, count("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"));
  // nsys' version suffix is gone (one: cudaGetDeviceProperties_v2_v12000 is the API
  // cudaGetDeviceProperties_v2), and the driver's cu* calls are cuda_driver.
  std::multiset<std::string> want_names;
  const std::regex suffix("_v[0-9]+$");
  for (const auto& row : query(kCapture,
                               "SELECT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
                               "ON s.id = r.nameId")) {
    want_names.insert(std::regex_replace(row[0], suffix, ""));
  }
  std::multiset<std::string> got_names;
  size_t launches = 0;
  for (uint32_t r : rows_of(t, Category::kCudaRuntime)) {
    got_names.insert(std::string(t.name(r)));
    launches += t.name(r) == "cudaLaunchKernel";
  }
  for (uint32_t r : rows_of(t, Category::kCudaDriver)) got_names.insert(std::string(t.name(r)));
  EXPECT_EQ(got_names, want_names);
  EXPECT_EQ(got_names.count("cudaGetDeviceProperties_v2"), 3U);  // three calls in the capture
  EXPECT_EQ(launches, count("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                            "WHERE s.value LIKE 'cudaLaunchKernel_v%'"));
  EXPECT_GT(launches, 0U);
  for (uint32_t r : rows_of(t, Category::kCudaDriver)) EXPECT_TRUE(t.name(r).starts_with("cu")) << t.name(r);
  // Each kernel's correlation id leads to one launch call: what `trace launch` joins on.
  std::map<int64_t, int> launch_of;
  for (uint32_t r : rows_of(t, Category::kCudaRuntime)) ++launch_of[t.events.correlation[r]];
  for (uint32_t r : rows_of(t, Category::kCudaDriver)) ++launch_of[t.events.correlation[r]];
  for (uint32_t r : rows_of(t, Category::kKernel)) EXPECT_EQ(launch_of[t.events.correlation[r]], 1) << t.name(r);
  // Copies with their direction and bytes, as Kineto names them.
  const std::vector<uint32_t> copies = rows_of(t, Category::kGpuMemcpy);
  ASSERT_EQ(copies.size(), 3U);
  std::multiset<std::pair<std::string, int64_t>> copy_rows;
  for (uint32_t r : copies) {
    const auto d = std::find(t.device_args.event.begin(), t.device_args.event.end(), r) - t.device_args.event.begin();
    copy_rows.insert({std::string(t.name(r)), t.device_args.bytes[d]});
  }
  const std::multiset<std::pair<std::string, int64_t>> want_copies = {{"Memcpy HtoD (Pageable -> Device)", 394002432},
                                                                      {"Memcpy HtoD (Pageable -> Device)", 2},
                                                                      {"Memcpy DtoD (Device -> Device)", 62914560}};
  EXPECT_EQ(copy_rows, want_copies);
  EXPECT_EQ(rows_of(t, Category::kGpuMemset).size(), 3U);
  const std::vector<uint32_t> syncs = rows_of(t, Category::kCudaSync);
  ASSERT_EQ(syncs.size(), 3U);
  std::multiset<std::string> sync_names;
  for (uint32_t r : syncs) sync_names.insert(std::string(t.name(r)));
  EXPECT_EQ(sync_names, (std::multiset<std::string>{"Context Sync", "Stream Wait Event", "Stream Wait Event"}));
  EXPECT_EQ(t.stats.rejected_events, 0U);
  EXPECT_EQ(t.stats.events_kept, 13513U + 990U + 18U + 3U + 3U + 3U);
}

// Length of the union of [start, end) intervals.
int64_t union_length(std::vector<std::pair<int64_t, int64_t>> v) {
  std::sort(v.begin(), v.end());
  int64_t total = 0;
  int64_t cur_start = 0;
  int64_t cur_end = INT64_MIN;
  for (const auto& [s, e] : v) {
    if (s > cur_end) {
      if (cur_end != INT64_MIN) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (cur_end != INT64_MIN) total += cur_end - cur_start;
  return total;
}

TEST(NsysCapture, TemporalBreakdownAgreesWithAnIndependentSum) {
  REQUIRE_CAPTURE();
  auto read = read_nsys_sqlite(kCapture.string());
  ASSERT_TRUE(read.ok()) << read.error().message;
  const RankTrace& t = read.value();
  const analysis::AnalysisWindow window = analysis::compute_analysis_window(t);
  EXPECT_FALSE(window.filtered);  // no ProfilerStep ranges in this capture
  const analysis::TemporalBreakdown b = analysis::temporal_breakdown(t, window.rows);
  // Independently, from the file: every kernel is computation (no NCCL), copies, sets and sync
  // records are not; the span runs from the first device start to the last device end.
  std::vector<std::pair<int64_t, int64_t>> all;
  std::vector<std::pair<int64_t, int64_t>> compute;
  for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                            "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"}) {
    for (const auto& row : query(kCapture, std::string("SELECT start, end FROM ") + table)) {
      all.emplace_back(std::stoll(row[0]), std::stoll(row[1]));
      if (std::string(table) == "CUPTI_ACTIVITY_KIND_KERNEL") compute.push_back(all.back());
    }
  }
  int64_t first = INT64_MAX;
  int64_t last = INT64_MIN;
  for (const auto& [s, e] : all) {
    first = std::min(first, s);
    last = std::max(last, e);
  }
  EXPECT_EQ(b.device_events, 27);
  EXPECT_EQ(b.kernel_time_ns, last - first);
  EXPECT_EQ(b.idle_ns, (last - first) - union_length(all));
  EXPECT_EQ(b.compute_ns, union_length(compute));
  EXPECT_EQ(b.non_compute_ns, b.kernel_time_ns - b.compute_ns - b.idle_ns);
  // The figures themselves, for the record: 10.17 ms of kernels in a 3.19 s span.
  EXPECT_EQ(b.compute_ns, 10167602);
  EXPECT_EQ(b.kernel_time_ns, 3190341332);
}

TEST(NsysCapture, EverySubcommandRuns) {
  REQUIRE_CAPTURE();
  for (const char* sub : {"summary", "breakdown", "kernels", "idle", "overlap", "launch", "ops", "steps", "phases",
                          "decompose", "collectives", "stragglers"}) {
    const auto run = run_cli(std::string("trace ") + sub + " " + kCapture.string(), "COLUMNS=200", 120);
    EXPECT_EQ(run.exit_code, 0) << sub << ": " << run.err << run.out;
    EXPECT_FALSE(run.out.empty()) << sub;
  }
  const auto kernels = run_cli("trace kernels --format csv " + kCapture.string(), "", 120);
  EXPECT_NE(kernels.out.find("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNN"), std::string::npos) << kernels.out;
}

class NsysFixture : public ::testing::Test {
 protected:
  NsysFixture() : dir_("fixture") {}
  std::string make(const std::string& name, const std::string& sql) {
    const std::string path = (dir_ / name);
    EXPECT_EQ(write_sqlite(path, sql), "");
    return path;
  }
  std::string rank(const std::string& name, int device, long long lag_ns = 0) {
    return make(name, std::string(kNsysFixtureSchema) + nsys_fixture_rank_sql(device, lag_ns));
  }
  Scratch dir_;
};

TEST_F(NsysFixture, OneRankReadAsKinetoWouldHaveIt) {
  auto read = read_nsys_sqlite(rank("r.sqlite", 3));
  ASSERT_TRUE(read.ok()) << read.error().message;
  const RankTrace& t = read.value();
  EXPECT_EQ(rows_of(t, Category::kKernel).size(), 4U);
  EXPECT_EQ(rows_of(t, Category::kUserAnnotation).size(), 2U);
  EXPECT_EQ(rows_of(t, Category::kCudaRuntime).size(), 5U);
  for (uint32_t r : rows_of(t, Category::kUserAnnotation)) {
    EXPECT_TRUE(t.name(r).starts_with("ProfilerStep#"));
    EXPECT_EQ(t.tracks.pid[t.events.track[r]], 100);
    EXPECT_EQ(t.tracks.tid[t.events.track[r]], 100);
  }
  for (uint32_t r : rows_of(t, Category::kKernel)) {
    EXPECT_EQ(t.tracks.pid[t.events.track[r]], 3);  // device
    EXPECT_EQ(t.tracks.tid[t.events.track[r]], t.events.stream[r]);
  }
  EXPECT_EQ(t.events.ts[rows_of(t, Category::kGpuMemset)[0]], 1700000000000000000 + 620000);
  EXPECT_TRUE(t.warnings.empty()) << t.warnings[0];
  // Two ProfilerStep ranges: the window keeps the first step, as with a Kineto trace.
  const analysis::AnalysisWindow window = analysis::compute_analysis_window(t);
  EXPECT_TRUE(window.filtered);
  EXPECT_EQ(window.distinct_steps, 2U);
}

TEST_F(NsysFixture, TwoRanksCollectivesAndOverlap) {
  const std::string r0 = rank("run_rank0.sqlite", 0);
  const std::string r1 = rank("run_rank1.sqlite", 1, 300000);  // rank 1's AllReduces start 300 us late
  // The analysis window keeps step 1 of 2 (as with a Kineto trace): one AllReduce per rank. Rank 0's
  // AllReduce [900, 1400) us overlaps its GEMM [100, 1100) us for 200 us (40 %); rank 1's starts
  // 300 us later, after its GEMM ended: no overlap.
  const auto overlap = run_cli("trace overlap --format csv " + r0 + " " + r1, "", 60);
  ASSERT_EQ(overlap.exit_code, 0) << overlap.err;
  EXPECT_NE(overlap.out.find("\n0,40,500,1000,200,1\n"), std::string::npos) << overlap.out;
  EXPECT_NE(overlap.out.find("\n1,0,500,1000,0,1\n"), std::string::npos) << overlap.out;
  // Collectives: the NCCL kernels are allreduce calls on each rank, rank 1's 300 us after rank 0's;
  // nsys names no process group, so they stay unmatched (docs/nsys.md).
  const auto collectives = run_cli("trace collectives --format csv " + r0 + " " + r1, "", 60);
  ASSERT_EQ(collectives.exit_code, 0) << collectives.err;
  EXPECT_NE(collectives.out.find("\n,0,allreduce,0,0,500,\n"), std::string::npos) << collectives.out;
  EXPECT_NE(collectives.out.find("\n,0,allreduce,1,300,500,\n"), std::string::npos) << collectives.out;
  EXPECT_NE(collectives.out.find("unmatched,,false,,,,,,,,the trace names no process group for this call"),
            std::string::npos)
      << collectives.out;
  const auto breakdown = run_cli("trace breakdown --format json " + r0 + " " + r1, "", 60);
  ASSERT_EQ(breakdown.exit_code, 0) << breakdown.err;
}

TEST_F(NsysFixture, DirectoriesListExports) {
  const std::string r0 = rank("rank0.sqlite", 0);
  const std::string r1 = rank("rank1.sqlite", 1);
  std::ofstream((dir_ / "notes.txt")) << "not a trace";
  auto files = expand_trace_paths({fs::path(r0).parent_path().string()});
  ASSERT_TRUE(files.ok()) << files.error().message;
  EXPECT_EQ(files.value(), (std::vector<std::string>{r0, r1}));
}

TEST_F(NsysFixture, NotAnNsysExport) {
  const std::string path = make("other.sqlite", "CREATE TABLE experiments (experiment_id INTEGER, name TEXT);");
  auto read = read_trace_file(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message,
            path + ": no table StringIds: not an Nsight Systems export (nsys export --type sqlite)");
}

TEST_F(NsysFixture, RecursiveViewInPlaceOfATableIsRefusedBeforeAnyQuery) {
  const std::string path = make("view.sqlite", R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
  SELECT x AS start, x AS end FROM c;
)sql");
  auto read = read_trace_file(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(
      read.error().message,
      path + ": CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table (is this an nsys export? nsys export --type sqlite)");
}

TEST_F(NsysFixture, MissingColumnNamesTableAndColumn) {
  const std::string path = make("column.sqlite", R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER, nameId INTEGER);
)sql");
  auto read = read_trace_file(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message, path +
                                      ": table CUPTI_ACTIVITY_KIND_RUNTIME has no column correlationId (is this an "
                                      "nsys export? nsys export --type sqlite)");
  EXPECT_EQ(read.error().message.find('\n'), std::string::npos);
}

TEST_F(NsysFixture, HostileValuesAreCountedNotTrusted) {
  const long long huge = 9223372036854775807LL;
  const std::string path =
      make("hostile.sqlite", std::string(kNsysFixtureSchema) + R"sql(
INSERT INTO StringIds VALUES (1, 'good_kernel');
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1000, '', '');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 0, 1, 7, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (300, 400, 0, 1, 7, 2, 0, 999, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (500, 450, 0, 1, 7, 3, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (-5, )sql" +
                                 std::to_string(huge) + R"sql(, 0, 1, 7, 4, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ('text', 'more', -1, 1, -7, NULL, NULL, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (600, 700, 99999999999, 1, 99999999999, -3, NULL, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES (10, NULL, 59, 'open', 1, NULL);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES (10, 20, 34, 'mark', 1, NULL);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES (10, 20, 59, NULL, NULL, 77);
)sql");
  auto read = read_trace_file(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  const RankTrace& t = read.value();
  const std::vector<uint32_t> kernels = rows_of(t, Category::kKernel);
  ASSERT_EQ(kernels.size(), 3U);
  EXPECT_EQ(t.name(kernels[0]), "good_kernel");
  EXPECT_EQ(t.events.ts[kernels[0]], 1100);
  EXPECT_EQ(t.name(kernels[1]), "nsys string 999");
  // Ids past 32 bits and negative ones: kept as absent, never truncated.
  EXPECT_EQ(t.events.correlation[kernels[2]], kNone);
  EXPECT_EQ(t.events.stream[kernels[2]], 99999999999);
  EXPECT_EQ(t.stats.rejected_events, 4U);  // end before start, overflow, text times, the open range
  EXPECT_EQ(rows_of(t, Category::kUserAnnotation).size(), 1U);
  EXPECT_EQ(t.name(rows_of(t, Category::kUserAnnotation)[0]), "nsys string 77");
  std::string all;
  for (const std::string& w : texts(t.warnings)) all += w + "\n";
  EXPECT_NE(all.find("table CUPTI_ACTIVITY_KIND_KERNEL: 1 row(s) ending before they start skipped"), std::string::npos)
      << all;
  EXPECT_NE(all.find("table CUPTI_ACTIVITY_KIND_KERNEL: 1 row(s) with times out of range skipped"), std::string::npos)
      << all;
  EXPECT_NE(all.find("table CUPTI_ACTIVITY_KIND_KERNEL: 1 row(s) with a name id that points nowhere"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("table NVTX_EVENTS: 1 row(s) without integer start and end skipped"), std::string::npos) << all;
}

TEST_F(NsysFixture, OversizedValueFailsItsTableInOneLine) {
  const std::string path = make("huge.sqlite", std::string(kNsysFixtureSchema) +
                                                   "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) "
                                                   "VALUES (1, 2, 59, printf('%.*c', 5000, 'x'), 1);");
  NsysReadOptions options;
  options.limits.max_value_bytes = 1024;
  auto read = read_nsys_sqlite(path, options);
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(read.error().message.starts_with(path + ": cannot read table NVTX_EVENTS: string or blob too big"))
      << read.error().message;
}

TEST_F(NsysFixture, ReportWithoutNsysOnPathIsOneLine) {
  const std::string report = (dir_ / "run.nsys-rep");  // not SQLite: the name says report
  std::ofstream(report) << "not a real report";
  const std::string empty_path = (dir_ / "empty-bin");
  fs::create_directories(empty_path);
  // No timeout(1) here: with this PATH the shell could not find it.
  const auto run = run_cli("trace kernels " + report, "PATH=" + empty_path);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find(report + ": an Nsight Systems report; reading it needs nsys on PATH"), std::string::npos)
      << run.err;
}

TEST_F(NsysFixture, ReportExportedByNsysOnPath) {
  const std::string exported = rank("exported.sqlite", 0);
  const std::string report = (dir_ / "run.nsys-rep");
  std::ofstream(report) << "a report only nsys reads";
  const std::string bin = (dir_ / "bin");
  fs::create_directories(bin);
  // A stand-in nsys: `nsys export --type sqlite --output OUT FILE` copies the fixture to OUT.
  std::ofstream(bin + "/nsys") << "#!/bin/sh\n"
                                  "[ \"$1\" = export ] || exit 2\n"
                                  "while [ $# -gt 0 ]; do [ \"$1\" = --output ] && out=$2; shift; done\n"
                                  "cp '"
                               << exported << "' \"$out\"\n";
  fs::permissions(bin + "/nsys", fs::perms::owner_all);
  const auto run = run_cli("trace kernels --format csv " + report, "PATH=" + bin + ":/usr/bin:/bin", 60);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), std::string::npos) << run.out;
  // A report whose name starts with '-' reaches nsys as a path (./-run.nsys-rep), never as an option:
  // this stand-in fails on a last argument that looks like one.
  std::ofstream(dir_ / "-run.nsys-rep") << "a report only nsys reads";
  std::ofstream(bin + "/nsys") << "#!/bin/sh\n"
                                  "for a; do last=$a; done\n"
                                  "case \"$last\" in -*) echo \"option $last\" >&2; exit 4;; esac\n"
                                  "while [ $# -gt 0 ]; do [ \"$1\" = --output ] && out=$2; shift; done\n"
                                  "cp '"
                               << exported << "' \"$out\"\n";
  const auto dashed = testing::run_shell("cd '" + dir_.path() + "' && PATH=" + bin + ":/usr/bin:/bin timeout 60 " +
                                         SCALEPROF_CLI_PATH + " trace kernels --format csv -- -run.nsys-rep");
  ASSERT_EQ(dashed.exit_code, 0) << dashed.err;
  EXPECT_NE(dashed.out.find("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), std::string::npos) << dashed.out;
  // A failing nsys is a one-line error with its message.
  std::ofstream(bin + "/nsys") << "#!/bin/sh\necho 'cannot open report' >&2\nexit 3\n";
  const auto failed = run_cli("trace kernels " + report, "PATH=" + bin + ":/usr/bin:/bin", 60);
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_NE(failed.err.find(report + ": nsys export failed with exit status 3: cannot open report"), std::string::npos)
      << failed.err;
}

}  // namespace
}  // namespace scaleprof::trace

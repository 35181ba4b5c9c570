// The memory analysis (analysis/memory_timeline.h) on hand-built traces whose figures are worked out
// here, and on the shared df_index_resolver trace against the same figures computed from its raw
// memory rows in this test (tests/python/test_trace_memory.py checks them against the JSON itself).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>

#include "analysis/memory_timeline.h"
#include "analysis/profiler_steps.h"
#include "engine/rank_results_store.h"
#include "host_trace_builder.h"
#include "report/trace_report.h"
#include "test_paths.h"
#include "trace/kineto_reader.h"

namespace scaleprof {
namespace {

using analysis::DeviceMemory;
using analysis::MemoryOptions;
using testing::HostTraceBuilder;

// A [memory] row with totals and an address (the builder leaves them absent).
void memory(HostTraceBuilder& b, int64_t ts, int64_t bytes, int64_t addr, int64_t allocated, int64_t reserved,
            int32_t device_type = 1, int64_t tid = 1) {
  b.memory(ts, bytes, device_type, tid);
  trace::MemoryTable& m = b.memory_table();
  m.addr.back() = addr;
  m.total_allocated.back() = allocated;
  m.total_reserved.back() = reserved;
}

// Two steps on CUDA 0 with 100 bytes allocated before profiling:
//   step 1 [0, 1000): linear allocates 40 (A) at 100 and 60 (B, via aten::empty) at 200; B freed at 300.
//   step 2 [1000, 2000): relu allocates 30 (C) at 1100, no op around 20 (D) at 1500; A freed at 1600.
// The peak is 100 + 40 + 30 + 20 = 190 at 1500 (the first time at 200 is 200: 100 + 40 + 60 -> the
// peak is 200 at 200). Work it out: 140@100, 200@200, 140@300, 170@1100, 190@1500, 150@1600.
HostTraceBuilder two_steps() {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 1000);
  b.op("aten::linear", 50, 400);
  b.op("aten::empty", 190, 20);
  b.annotation("ProfilerStep#2", 1000, 1000);
  b.op("aten::relu", 1050, 100);
  memory(b, 100, 40, 0xA, 140, 512);
  memory(b, 200, 60, 0xB, 200, 512);
  memory(b, 300, -60, 0xB, 140, 512);
  memory(b, 1100, 30, 0xC, 170, 1024);
  memory(b, 1500, 20, 0xD, 190, 1024, 1, 2);  // another thread: no op there
  memory(b, 1600, -40, 0xA, 150, 1024);
  return b;
}

// The same events on the CPU: the CPU allocator's Total Allocated counts only what was allocated
// while profiling, so what was live before is unknown (-1, a null cell), never 0; the curve, its
// peaks and the steps are the trace's all the same.
TEST(MemoryTimeline, BeforeProfilingIsUnknownOnCpu) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 1000);
  b.op("aten::linear", 50, 400);
  memory(b, 100, 40, 0xA, 140, 0, /*device_type=*/0);
  memory(b, 200, -40, 0xA, 100, 0, 0);
  trace::RankTrace t = b.take();
  const analysis::RankMemory m = analysis::memory_timeline(t, analysis::find_profiler_steps(t), MemoryOptions{});
  ASSERT_EQ(m.devices.size(), 1u);
  EXPECT_EQ(analysis::memory_device_name(m.devices[0].device_type, m.devices[0].device_id), "CPU");
  EXPECT_EQ(m.devices[0].before_profiling, -1);
  EXPECT_EQ(m.devices[0].peak_allocated, 140);
  EXPECT_EQ(m.devices[0].steps.at(0).start_allocated, 100);
}

TEST(MemoryTimeline, PeaksBeforeProfilingAndSteps) {
  trace::RankTrace t = two_steps().take();
  const analysis::RankMemory m = analysis::memory_timeline(t, analysis::find_profiler_steps(t), MemoryOptions{});
  ASSERT_EQ(m.devices.size(), 1u);
  const DeviceMemory& d = m.devices[0];
  EXPECT_EQ(analysis::memory_device_name(d.device_type, d.device_id), "CUDA 0");
  EXPECT_EQ(d.events, 6);
  EXPECT_EQ(d.allocations, 4);
  EXPECT_EQ(d.frees, 2);
  EXPECT_EQ(d.before_profiling, 100);
  EXPECT_EQ(d.peak_allocated, 200);
  EXPECT_EQ(d.peak_allocated_ts_ns, 200);
  EXPECT_EQ(d.peak_reserved, 1024);
  EXPECT_EQ(d.peak_reserved_ts_ns, 1100);
  EXPECT_EQ(d.min_allocated, 140);
  EXPECT_EQ(d.final_allocated, 150);
  ASSERT_EQ(d.steps.size(), 2u);
  EXPECT_EQ(d.steps[0].start_allocated, 100);
  EXPECT_EQ(d.steps[0].peak_allocated, 200);
  EXPECT_EQ(d.steps[0].end_allocated, 140);
  EXPECT_EQ(d.steps[0].events, 3);
  EXPECT_EQ(d.steps[1].start_allocated, 140);
  EXPECT_EQ(d.steps[1].peak_allocated, 190);
  EXPECT_EQ(d.steps[1].peak_ts_ns, 1500);
  EXPECT_EQ(d.steps[1].end_allocated, 150);
  // Every event is a point at this size, in time order.
  ASSERT_EQ(d.timeline.size(), 6u);
  EXPECT_EQ(d.timeline[4].allocated, 190);
  EXPECT_EQ(d.timeline[4].reserved, 1024);
}

TEST(MemoryTimeline, HoldersAtThePeakSumToIt) {
  trace::RankTrace t = two_steps().take();
  const analysis::RankMemory m = analysis::memory_timeline(t, analysis::find_profiler_steps(t), MemoryOptions{});
  const DeviceMemory& d = m.devices[0];
  ASSERT_TRUE(d.holders_known);
  // At 200: A (40, linear) and B (60, aten::empty inside linear) live, 100 from before profiling.
  std::map<std::string, std::pair<int64_t, int64_t>> got;
  for (const auto& h : d.holders) got[h.name] = {h.bytes, h.allocations};
  const std::map<std::string, std::pair<int64_t, int64_t>> want = {
      {"(allocated before profiling)", {100, 0}}, {"aten::linear (aten::empty)", {60, 1}}, {"aten::linear", {40, 1}}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(d.holders.front().name, "(allocated before profiling)");  // largest first
}

TEST(MemoryTimeline, LaterPeakNamesTheAnnotationAndNoOperator) {
  HostTraceBuilder b = two_steps();
  memory(b, 1700, 500, 0xE, 650, 2048);  // inside ProfilerStep#2 but no cpu_op: the annotation holds it
  trace::RankTrace t = b.take();
  MemoryOptions options;
  options.top = 2;
  const DeviceMemory d = analysis::memory_timeline(t, analysis::find_profiler_steps(t), options).devices.at(0);
  EXPECT_EQ(d.peak_allocated, 650);
  // Live: C 30 (relu), D 20 (no operator: thread 2), E 500 (ProfilerStep#2), 100 before profiling.
  ASSERT_EQ(d.holders.size(), 3u);  // --top 2 and the rest
  EXPECT_EQ(d.holders[0].name, "ProfilerStep#2");
  EXPECT_EQ(d.holders[0].bytes, 500);
  EXPECT_EQ(d.holders[1].name, "(allocated before profiling)");
  EXPECT_EQ(d.holders[2].name, "(others)");
  EXPECT_EQ(d.holders[2].bytes, 50);
  EXPECT_EQ(d.holders[2].allocations, 2);
}

TEST(MemoryTimeline, DevicesApartAndWithoutAddrNoHolders) {
  HostTraceBuilder b;
  b.memory(10, 8, 0);  // CPU, no totals, no Addr: the running sum from 0
  b.memory(20, 16, 0);
  b.memory(30, -8, 0);
  memory(b, 15, 64, 0x1, 64, 128);
  b.memory(40, 0, 0, 1, "[OutOfMemory]");
  trace::RankTrace t = b.take();
  const analysis::RankMemory m = analysis::memory_timeline(t, analysis::find_profiler_steps(t), MemoryOptions{});
  EXPECT_EQ(m.out_of_memory_events, 1);
  ASSERT_EQ(m.devices.size(), 2u);
  EXPECT_EQ(m.devices[0].device_type, 0);
  EXPECT_EQ(m.devices[0].peak_allocated, 24);
  EXPECT_EQ(m.devices[0].final_allocated, 16);
  EXPECT_EQ(m.devices[0].peak_reserved, -1);
  EXPECT_FALSE(m.devices[0].holders_known);
  EXPECT_TRUE(m.devices[0].holders.empty());
  EXPECT_EQ(m.devices[1].peak_allocated, 64);
  EXPECT_TRUE(m.devices[1].holders_known);
  EXPECT_TRUE(m.devices[0].steps.empty());
}

TEST(MemoryTimeline, ThinnedTimelineIsBoundedAndKeepsThePeak) {
  HostTraceBuilder b;
  int64_t total = 0, peak = 0, peak_ts = 0;
  for (int64_t i = 0; i < 10'000; ++i) {
    const int64_t bytes = (i * 7919) % 1000 - 480;  // a jagged walk
    total += bytes;
    if (total > peak) {
      peak = total;
      peak_ts = i * 10;
    }
    memory(b, i * 10, bytes, 1000 + i, total, total + 4096);
  }
  trace::RankTrace t = b.take();
  MemoryOptions options;
  options.points = 20;
  const DeviceMemory d = analysis::memory_timeline(t, analysis::find_profiler_steps(t), options).devices.at(0);
  EXPECT_LE(d.timeline.size(), 62u);  // 3 per bucket, and the first and last events
  EXPECT_GE(d.timeline.size(), 20u);
  EXPECT_TRUE(std::is_sorted(d.timeline.begin(), d.timeline.end(),
                             [](const auto& x, const auto& y) { return x.ts_ns < y.ts_ns; }));
  EXPECT_EQ(d.peak_allocated, peak);
  EXPECT_EQ(d.peak_allocated_ts_ns, peak_ts);
  const auto top = std::max_element(d.timeline.begin(), d.timeline.end(),
                                    [](const auto& x, const auto& y) { return x.allocated < y.allocated; });
  EXPECT_EQ(top->allocated, peak);
  EXPECT_EQ(top->ts_ns, peak_ts);
  options.points = 0;
  EXPECT_TRUE(analysis::memory_timeline(t, analysis::find_profiler_steps(t), options).devices.at(0).timeline.empty());
}

TEST(MemoryTimeline, SpilledResultsReadBackTheSame) {
  trace::RankTrace t = two_steps().take();
  engine::RankResults r;
  r.rank = 3;
  r.memory = analysis::memory_timeline(t, analysis::find_profiler_steps(t), MemoryOptions{});
  engine::RankResults back;
  ASSERT_TRUE(engine::decode_rank_results(engine::encode_rank_results(r), &back));
  ASSERT_TRUE(back.memory.has_value());
  ASSERT_EQ(back.memory->devices.size(), 1u);
  const DeviceMemory& a = r.memory->devices[0];
  const DeviceMemory& c = back.memory->devices[0];
  EXPECT_EQ(c.peak_allocated, a.peak_allocated);
  EXPECT_EQ(c.before_profiling, a.before_profiling);
  ASSERT_EQ(c.holders.size(), a.holders.size());
  EXPECT_EQ(c.holders[1].name, a.holders[1].name);
  EXPECT_EQ(c.timeline.size(), a.timeline.size());
  EXPECT_EQ(c.steps.size(), a.steps.size());
  EXPECT_EQ(c.steps[1].peak_ts_ns, a.steps[1].peak_ts_ns);
}

// Across ranks: each rank's peak per device type; imbalance = max / mean. Ranks 0, 1, 2 peak at 100,
// 300 and 200 B on CUDA (rank 2 on two GPUs, its largest counts) and 8 B on the CPU (rank 0 only).
TEST(MemoryTimeline, ReportSpreadAcrossRanks) {
  auto store = std::make_shared<engine::RankResultsStore>();
  auto device = [](int32_t type, int32_t id, int64_t peak) {
    analysis::DeviceMemory d;
    d.device_type = type;
    d.device_id = id;
    d.peak_allocated = peak;
    d.holders_known = true;
    d.holders = {{"aten::mm", peak, 1}};
    d.timeline = {{1000 * (id + 1), peak, peak}};
    return d;
  };
  const std::vector<std::vector<analysis::DeviceMemory>> ranks = {
      {device(0, -1, 8), device(1, 0, 100)}, {device(1, 1, 300)}, {device(1, 2, 150), device(1, 3, 200)}};
  for (size_t r = 0; r < ranks.size(); ++r) {
    engine::RankResults results;
    results.rank = static_cast<int64_t>(r);
    results.memory.emplace().devices = ranks[r];
    store->add(std::move(results));
  }
  const report::TraceReport tables = report::memory_tables(store, true);
  ASSERT_EQ(tables.keys, (std::vector<std::string>{"memory_devices", "memory_ranks", "memory_steps", "memory_at_peak",
                                                   "memory_timeline"}));
  const auto spread = tables.tables[1].all_rows();
  ASSERT_EQ(spread.size(), 2u);
  EXPECT_EQ(std::get<std::string>(spread[0][0].value), "CPU");
  EXPECT_EQ(std::get<int64_t>(spread[0][1].value), 1);
  EXPECT_EQ(std::get<std::string>(spread[1][0].value), "CUDA");
  EXPECT_EQ(std::get<int64_t>(spread[1][1].value), 3);
  EXPECT_EQ(std::get<int64_t>(spread[1][2].value), 300);  // max, rank 1
  EXPECT_EQ(std::get<int64_t>(spread[1][3].value), 1);
  EXPECT_EQ(std::get<int64_t>(spread[1][4].value), 100);  // min, rank 0
  EXPECT_EQ(std::get<int64_t>(spread[1][5].value), 0);
  EXPECT_DOUBLE_EQ(std::get<double>(spread[1][6].value), 200.0);
  EXPECT_DOUBLE_EQ(std::get<double>(spread[1][7].value), 1.5);
  EXPECT_EQ(tables.tables[0].all_rows().size(), 5u);  // one row per (rank, device)
  EXPECT_EQ(tables.tables[4].all_rows().size(), 5u);
  // In summary: nothing where no rank has memory events.
  auto empty = std::make_shared<engine::RankResultsStore>();
  engine::RankResults none;
  none.memory.emplace();
  empty->add(std::move(none));
  EXPECT_TRUE(report::memory_tables(empty, false).tables.empty());
  EXPECT_EQ(report::memory_tables(empty, true).tables.size(), 5u);
}

// df_index_resolver: the analysis against the raw rows of the trace's memory table.
TEST(MemoryTimeline, DfIndexResolverAgainstItsRows) {
  const std::filesystem::path found = std::filesystem::path(SCALEPROF_SHARED_DIR) / "traces" / "hta" /
                                      "df_index_resolver" / "df_index_resolver.json.gz";
  if (!std::filesystem::exists(found)) GTEST_SKIP() << "shared trace not found: " << found;
  auto read = trace::read_kineto_trace(found.string());
  ASSERT_TRUE(read.ok()) << read.error().message;
  const trace::RankTrace& t = read.value();
  const trace::MemoryTable& m = t.memory;
  ASSERT_EQ(m.size(), 28'010u);
  const analysis::RankMemory got = analysis::memory_timeline(t, analysis::find_profiler_steps(t), MemoryOptions{});
  ASSERT_EQ(got.devices.size(), 2u);
  for (const DeviceMemory& d : got.devices) {
    // Peak and before-profiling from the rows: the first row by time (file order among ties).
    std::vector<size_t> rows;
    for (size_t r = 0; r < m.size(); ++r) {
      if (m.device_type[r] == d.device_type && m.device_id[r] == d.device_id) rows.push_back(r);
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [&](size_t a, size_t b) { return t.events.ts[m.event[a]] < t.events.ts[m.event[b]]; });
    int64_t peak = -1, reserved = -1;
    for (size_t r : rows) {
      peak = std::max(peak, m.total_allocated[r]);
      reserved = std::max(reserved, m.total_reserved[r]);
      EXPECT_NE(m.addr[r], trace::kNone);
    }
    EXPECT_EQ(d.events, static_cast<int64_t>(rows.size()));
    EXPECT_EQ(d.peak_allocated, peak);
    EXPECT_EQ(d.peak_reserved, reserved);
    // Known from a device allocator's total; unknown on CPU (its total counts only profiled blocks).
    EXPECT_EQ(d.before_profiling, d.device_type == 0 ? -1 : m.total_allocated[rows[0]] - m.bytes[rows[0]]);
    int64_t held = 0;
    for (const auto& h : d.holders) held += h.bytes;
    EXPECT_EQ(held, peak);
  }
  // The figures of ../shared/reference/anchor-analyses.md, section 3.2.
  EXPECT_EQ(got.devices[0].device_type, 0);
  EXPECT_EQ(got.devices[0].events, 1'240);
  EXPECT_EQ(got.devices[1].events, 26'770);
  EXPECT_EQ(got.devices[1].peak_allocated, 6'629'508'096);
  EXPECT_EQ(got.devices[1].before_profiling, 4'096'614'400);
  EXPECT_EQ(got.devices[1].steps.size(), 5u);
}

}  // namespace
}  // namespace scaleprof

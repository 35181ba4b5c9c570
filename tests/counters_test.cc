// Counters (analysis/counters.h, issue 23 item 3): the launch queue per stream and memcpy bandwidth per
// direction on hand-made traces whose step functions and statistics are known by construction; and
// on the shared HTA traces, HTA 0.6.1's stored answers (../shared/traces/hta-reference/).
#include "analysis/counters.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "analysis/analysis_window.h"
#include "cli_harness.h"
#include "rank_trace_builder.h"
#include "test_paths.h"
#include "trace/kineto_reader.h"

namespace scaleprof {
namespace {

using analysis::CounterPoint;
using testing::RankTraceBuilder;

std::vector<std::pair<int64_t, double>> pairs(const std::vector<CounterPoint>& points) {
  std::vector<std::pair<int64_t, double>> out;
  for (const CounterPoint& p : points) out.emplace_back(p.ts, p.value);
  return out;
}

// A copy with its device arguments (bandwidth NaN: only the bytes).
uint32_t copy(RankTraceBuilder& b, trace::RankTrace* t, std::string_view name, int64_t ts, int64_t dur, double gbps,
              int64_t bytes, int64_t stream = 7) {
  (void)b;
  if (t->tracks.size() == 0) {  // device 0, one track for every copy
    t->tracks.pid.push_back(0);
    t->tracks.tid.push_back(stream);
    t->tracks.pid_label.push_back(0);
    t->tracks.tid_label.push_back(0);
  }
  trace::EventTable& e = t->events;
  const auto row = static_cast<uint32_t>(e.size());
  e.ts.push_back(ts);
  e.dur.push_back(dur);
  e.name.push_back(t->strings.intern(name));
  e.cat_name.push_back(t->strings.intern("gpu_memcpy"));
  e.cat.push_back(trace::Category::kGpuMemcpy);
  e.phase.push_back(trace::Phase::kComplete);
  e.track.push_back(0);
  e.correlation.push_back(trace::kNone);
  e.external_id.push_back(trace::kNone);
  e.stream.push_back(stream);
  e.file_index.push_back(row);
  trace::DeviceArgsTable& a = t->device_args;
  a.event.push_back(row);
  a.device.push_back(0);
  a.bytes.push_back(bytes);
  a.bandwidth_gbps.push_back(gbps);
  for (auto* v : {&a.grid_x, &a.grid_y, &a.grid_z, &a.block_x, &a.block_y, &a.block_z, &a.registers_per_thread}) {
    v->push_back(-1);
  }
  a.shared_memory.push_back(-1);
  for (auto* v : {&a.blocks_per_sm, &a.warps_per_sm, &a.occupancy_pct}) v->push_back(NAN);
  return row;
}

std::vector<uint32_t> all_rows(const trace::RankTrace& t) {
  std::vector<uint32_t> rows(t.events.size());
  for (uint32_t i = 0; i < rows.size(); ++i) rows[i] = i;
  return rows;
}

// Three launches at 0, 10, 20 ns whose kernels start at 100, 200, 300: the queue is 1, 2, 3, then
// 2, 1, 0. Held for 10, 10, 80, 100, 100 ns over the span 0-300: time-weighted mean 570/300 = 1.9,
// while the six points average 1.5.
TEST(Counters, QueueOfThreeLaunchesHasItsTimeWeightedMean) {
  RankTraceBuilder b;
  b.launched_kernel("k1", 0, 4, 100, 50, 1);
  b.launched_kernel("k2", 10, 4, 200, 50, 2);
  b.launched_kernel("k3", 20, 7, 300, 50, 3);
  const trace::RankTrace& t = b.trace();
  const analysis::RankCounterSeries series = analysis::counter_series(t, all_rows(t));
  ASSERT_EQ(series.queues.size(), 1u);
  EXPECT_EQ(series.queues[0].key, 7);
  using P = std::vector<std::pair<int64_t, double>>;
  EXPECT_EQ(pairs(series.queues[0].points), (P{{0, 1}, {10, 2}, {20, 3}, {100, 2}, {200, 1}, {300, 0}}));
  EXPECT_EQ(series.queues[0].call_ns, (std::vector<int64_t>{4, 4, 7, -1, -1, -1}));

  const analysis::RankCounters c = analysis::summarize_counters(series, 3);
  ASSERT_EQ(c.queues.size(), 1u);
  const analysis::StreamQueue& q = c.queues[0];
  EXPECT_EQ(q.launches, 3);
  EXPECT_EQ(q.weighted.time_ns, 300);
  EXPECT_DOUBLE_EQ(q.weighted.mean, 1.9);
  EXPECT_EQ(q.weighted.p50, 2);  // value 1 holds 110 of 300 ns, values <= 2 hold 220
  EXPECT_EQ(q.weighted.p95, 3);
  EXPECT_EQ(q.weighted.max, 3);
  EXPECT_EQ(q.empty_ns, 0);
  // HTA's statistics over the six points (pandas describe).
  EXPECT_EQ(q.points.count, 6);
  EXPECT_DOUBLE_EQ(q.points.mean, 1.5);
  EXPECT_DOUBLE_EQ(q.points.std, std::sqrt(5.5 / 5));
  EXPECT_EQ(q.points.min, 0);
  EXPECT_DOUBLE_EQ(q.points.p25, 1);
  EXPECT_DOUBLE_EQ(q.points.p50, 1.5);
  EXPECT_DOUBLE_EQ(q.points.p75, 2);
  EXPECT_EQ(q.points.max, 3);
  // Full at 3 from 20 to 100 ns, reached by the third launch (a 7 ns call).
  EXPECT_EQ(q.full_ns, 80);
  EXPECT_EQ(q.full_launches, 1);
  EXPECT_EQ(q.full_launch_call_ns, 7);
  // HTA's trace duration: first to last start (0 to 300), not to the last end (350).
  EXPECT_EQ(c.trace_duration_ns, 300);
  // At HTA's limit nothing is full.
  EXPECT_EQ(analysis::summarize_counters(series, analysis::kHtaMaxQueueLength).queues[0].full_ns, 0);
}

// At one timestamp a kernel start comes before a launch: the queue goes 1 -> 0 -> 1, never 2,
// whatever the order of the events in the file.
TEST(Counters, DecrementsComeBeforeIncrementsAtOneTime) {
  for (bool launch_first_in_file : {true, false}) {
    RankTraceBuilder b;
    b.runtime("cudaLaunchKernel", 0, 5, 1);
    if (launch_first_in_file) b.runtime("cudaLaunchKernel", 100, 5, 2);
    b.kernel("k1", 100, 10, 7, 1);
    if (!launch_first_in_file) b.runtime("cudaLaunchKernel", 100, 5, 2);
    b.kernel("k2", 200, 10, 7, 2);
    const trace::RankTrace& t = b.trace();
    const analysis::RankCounterSeries s = analysis::counter_series(t, all_rows(t));
    using P = std::vector<std::pair<int64_t, double>>;
    ASSERT_EQ(s.queues.size(), 1u);
    EXPECT_EQ(pairs(s.queues[0].points), (P{{0, 1}, {100, 0}, {100, 1}, {200, 0}})) << launch_first_in_file;
  }
}

// Every stream is kept; a launch without device work, device work without a launch and a runtime call
// that is not a launch count nowhere.
TEST(Counters, EveryStreamKeptAndUnmatchedEventsLeftOut) {
  RankTraceBuilder b;
  b.launched_kernel("a", 0, 1, 10, 5, 1, 7);
  b.launched_kernel("b", 2, 1, 20, 5, 2, 13);
  b.launched_kernel("c", 3, 1, 30, 5, 3, 20);
  b.runtime("cudaLaunchKernel", 4, 1, 4);       // no device work
  b.kernel("orphan", 40, 5, 7, 5);              // no launch
  b.runtime("cudaStreamSynchronize", 5, 1, 6);  // not a launch
  b.kernel("synced", 50, 5, 7, 6);
  const trace::RankTrace& t = b.trace();
  const analysis::RankCounters c = analysis::compute_counters(t, all_rows(t), 1);
  ASSERT_EQ(c.queues.size(), 3u);
  EXPECT_EQ(c.queues[0].stream, 7);
  EXPECT_EQ(c.queues[1].stream, 13);
  EXPECT_EQ(c.queues[2].stream, 20);
  for (const auto& q : c.queues) {
    EXPECT_EQ(q.launches, 1);
    EXPECT_EQ(q.points.count, 2);
  }
  // At limit 1 every stream is full from its launch to its kernel's start (HTA reports one per rank).
  EXPECT_EQ(c.queues[0].full_ns, 10);
  EXPECT_EQ(c.queues[1].full_ns, 18);
  EXPECT_EQ(c.queues[2].full_ns, 27);
}

// Two host-to-device copies overlap: 10 GB/s over 0-100 and 30 GB/s over 50-150. The sum is 10, 40,
// 30, then exactly 0; weighted by time, (10*50 + 40*50 + 30*50) / 150.
TEST(Counters, BandwidthSumsOverlappingCopiesOfADirection) {
  RankTraceBuilder b;
  trace::RankTrace t = b.take();
  copy(b, &t, "Memcpy HtoD (Pageable -> Device)", 0, 100, 10.0, 1000);
  copy(b, &t, "Memcpy HtoD (Pinned -> Device)", 50, 100, 30.0, 3000, 13);
  copy(b, &t, "Memcpy DtoH (Device -> Pinned)", 0, 100, NAN, 500);  // 500 bytes / 100 ns = 5 GB/s
  copy(b, &t, "Memset (Device)", 0, 0, 2.0, 0);                     // 0 ns lasts 1 us, as in HTA
  const analysis::RankCounterSeries s = analysis::counter_series(t, all_rows(t));
  ASSERT_EQ(s.names, (std::vector<std::string>{"Memcpy DtoH", "Memcpy HtoD", "Memset"}));
  using P = std::vector<std::pair<int64_t, double>>;
  EXPECT_EQ(pairs(s.bandwidth[0].points), (P{{0, 5}, {100, 0}}));
  EXPECT_EQ(pairs(s.bandwidth[1].points), (P{{0, 10}, {50, 40}, {100, 30}, {150, 0}}));
  EXPECT_EQ(pairs(s.bandwidth[2].points), (P{{0, 2}, {1000, 0}}));
  const analysis::RankCounters c = analysis::summarize_counters(s, 896);
  const analysis::DirectionBandwidth& htod = c.bandwidth[1];
  EXPECT_EQ(htod.copies, 2);
  EXPECT_EQ(htod.bytes, 4000);
  EXPECT_EQ(htod.points.count, 3);
  EXPECT_DOUBLE_EQ(htod.points.mean, 80.0 / 3);
  EXPECT_EQ(htod.weighted.time_ns, 150);
  EXPECT_DOUBLE_EQ(htod.weighted.mean, 4000.0 / 150);
  EXPECT_EQ(htod.weighted.p50, 30);
  EXPECT_EQ(htod.weighted.max, 40);
  EXPECT_EQ(c.bandwidth[0].bytes, 500);
  EXPECT_DOUBLE_EQ(c.bandwidth[0].weighted.mean, 5);
}

// The queue limit from the trace: the lowest level at which a launch call blocked (>= 1 ms), among
// launches at half the deepest level or more: a slow first launch into an empty queue is not a full
// queue. No launch blocked: HTA's 1,024, and nothing is full. An explicit limit wins.
TEST(Counters, QueueLimitIsWhereLaunchesStartToBlock) {
  analysis::RankCounterSeries s;
  analysis::CounterSeries q;
  q.key = 7;
  for (int64_t level = 1; level <= 1000; ++level) {
    q.points.push_back({level * 100, static_cast<double>(level)});
    // level 1: a module load; 70: a slow launch below half the deepest queue
    const bool blocked = level == 1 || level == 70 || level == 800 || level == 1000;
    q.call_ns.push_back(blocked ? 2'000'000 : 4'000);
  }
  q.points.push_back({200'000, 999});  // a kernel starts
  q.call_ns.push_back(-1);
  s.queues.push_back(q);
  EXPECT_EQ(analysis::find_queue_limit(s), 800);
  const analysis::RankCounters found = analysis::summarize_counters(s, 0);
  EXPECT_EQ(found.max_queue_length, 800);
  EXPECT_EQ(found.limit_source, analysis::QueueLimitSource::kTrace);
  EXPECT_EQ(found.queues.at(0).full_launches, 201);  // at 800 to 1000
  const analysis::RankCounters given = analysis::summarize_counters(s, 1000);
  EXPECT_EQ(given.max_queue_length, 1000);
  EXPECT_EQ(given.limit_source, analysis::QueueLimitSource::kOption);
  for (int64_t& ns : s.queues[0].call_ns) ns = std::min<int64_t>(ns, 4'000);
  EXPECT_FALSE(analysis::find_queue_limit(s).has_value());
  const analysis::RankCounters none = analysis::summarize_counters(s, 0);
  EXPECT_EQ(none.max_queue_length, analysis::kHtaMaxQueueLength);
  EXPECT_EQ(none.limit_source, analysis::QueueLimitSource::kHta);
  EXPECT_EQ(none.queues.at(0).full_ns, 0);
}

// 0.1 + 0.2 - 0.1 - 0.2 is 2.8e-17 in floating point: HTA's running sum keeps such residues, and its
// summary counts them as samples above 0. Here the value is exactly 0 once no copy is active.
TEST(Counters, NoFloatingPointResidueCountsAsBandwidth) {
  RankTraceBuilder b;
  trace::RankTrace t = b.take();
  copy(b, &t, "Memcpy DtoD (Device -> Device)", 0, 10, 0.1, 1);
  copy(b, &t, "Memcpy DtoD (Device -> Device)", 5, 15, 0.2, 3);
  ASSERT_NE(0.1 + 0.2 - 0.1 - 0.2, 0.0);  // the residue HTA keeps
  const analysis::RankCounters c = analysis::compute_counters(t, all_rows(t), 896);
  ASSERT_EQ(c.bandwidth.size(), 1u);
  EXPECT_EQ(c.bandwidth[0].points.count, 3);  // 0.1, 0.3, 0.2; not the 0 at 20 ns
  EXPECT_EQ(c.bandwidth[0].weighted.time_ns, 20);
}

TEST(Counters, MemoryDirectionIsHtasPrefix) {
  EXPECT_EQ(analysis::memory_direction("Memcpy HtoD (Pageable -> Device)"), "Memcpy HtoD");
  EXPECT_EQ(analysis::memory_direction("Memcpy PtoP (Device -> Device)"), "Memcpy PtoP");
  EXPECT_EQ(analysis::memory_direction("Memset (Device)"), "Memset");
  EXPECT_EQ(analysis::memory_direction("hipMemcpyAsync"), "Memcpy Unknown");
}

// HTA 0.6.1's stored answers on the shared traces: the per-point statistics of every stream and
// direction, and the time at the limit of stream 27 (the one HTA reports: the last of the rank).
namespace fs = std::filesystem;
const fs::path kShared = SCALEPROF_SHARED_DIR;

struct Reference {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
};

double number(simdjson::dom::element e, const char* key) {
  double v = 0;
  simdjson::dom::element x = e[key];
  if (x.get(v) != simdjson::SUCCESS) {
    int64_t i = 0;
    EXPECT_EQ(x.get(i), simdjson::SUCCESS) << key;
    v = static_cast<double>(i);
  }
  return v;
}

// Sum over the timestamps of a queue series of (increments there) x (decrements there).
int64_t tie_products(const analysis::CounterSeries* s) {
  int64_t total = 0;
  double before = 0;
  for (size_t i = 0; i < s->points.size();) {
    int64_t up = 0, down = 0;
    const int64_t ts = s->points[i].ts;
    for (; i < s->points.size() && s->points[i].ts == ts; ++i) {
      (s->points[i].value > before ? up : down) += 1;
      before = s->points[i].value;
    }
    total += up * down;
  }
  return total;
}

void expect_hta_counters(const std::string& name) {
  const fs::path ref_path = kShared / "traces" / "hta-reference" / (name + ".json");
  if (!fs::exists(ref_path)) GTEST_SKIP() << "no shared HTA reference at " << ref_path;
  Reference ref;
  ASSERT_EQ(ref.parser.load(ref_path.string()).get(ref.root), simdjson::SUCCESS);
  simdjson::dom::object files = ref.root["files"];
  for (auto [rank_key, file_value] : files) {
    const int64_t rank = std::stoll(std::string(rank_key));
    std::string_view file_name;
    ASSERT_EQ(file_value.get(file_name), simdjson::SUCCESS);
    const fs::path file = kShared / "traces" / "hta" / std::string(file_name);
    auto read = trace::read_kineto_trace(file.string());
    ASSERT_TRUE(read) << read.error().message;
    const trace::RankTrace& t = read.value();
    const analysis::AnalysisWindow window = analysis::compute_analysis_window(t, {});
    const analysis::RankCounterSeries series = analysis::counter_series(t, window.rows);
    const analysis::RankCounters c = analysis::summarize_counters(series, 16);
    std::map<int64_t, const analysis::CounterSeries*> series_of;
    for (const auto& q : series.queues) series_of[q.key] = &q;
    std::map<int64_t, const analysis::StreamQueue*> queues;
    for (const auto& q : c.queues) queues[q.stream] = &q;
    int compared = 0;
    for (simdjson::dom::element row : ref.root["queue_length_summary"].get_array()) {
      if (static_cast<int64_t>(number(row, "rank")) != rank) continue;
      const auto stream = static_cast<int64_t>(number(row, "stream"));
      ASSERT_TRUE(queues.count(stream)) << name << " stream " << stream;
      const analysis::PointStats& p = queues[stream]->points;
      SCOPED_TRACE(name + " stream " + std::to_string(stream));
      EXPECT_EQ(p.count, number(row, "queue_length_count"));
      // HTA's sort is unstable: where k launches and m kernel starts share a timestamp, its points may
      // take them in any order. Decrements first (scaleprof) gives the lowest sum of the points;
      // increments first gives 2km more. HTA's mean lies in between, so the ties alone explain the
      // difference (stream 7 of negative_queue_length_values_check: 656.668 here, HTA 656.681,
      // increments first 656.690).
      const double tie_slack = 2.0 * static_cast<double>(tie_products(series_of.at(stream)));
      const double hta_sum = number(row, "queue_length_mean") * static_cast<double>(p.count);
      const double sum = p.mean * static_cast<double>(p.count);
      EXPECT_GE(hta_sum, sum - 1e-3);
      EXPECT_LE(hta_sum, sum + tie_slack + 1e-3);
      EXPECT_NEAR(p.std, number(row, "queue_length_std"), 0.005 * p.std);
      EXPECT_EQ(p.min, number(row, "queue_length_min"));
      EXPECT_EQ(p.max, number(row, "queue_length_max"));
      EXPECT_EQ(p.p50, number(row, "queue_length_50%"));
      ++compared;
    }
    EXPECT_EQ(compared, static_cast<int>(c.queues.size())) << name << ": every stream HTA has, and no other";
    for (simdjson::dom::element row : ref.root["time_blocked_on_full_queue_maxlen16"].get_array()) {
      if (static_cast<int64_t>(number(row, "rank")) != rank) continue;
      const auto stream = static_cast<int64_t>(number(row, "stream"));
      ASSERT_TRUE(queues.count(stream));
      EXPECT_EQ(static_cast<double>(queues[stream]->full_ns) / 1e3, number(row, "duration_at_max_queue_length"));
      EXPECT_NEAR(static_cast<double>(queues[stream]->full_ns) / static_cast<double>(c.trace_duration_ns),
                  number(row, "relative_duration_at_max_queue_length"), 1e-6);
    }
    std::map<std::string, const analysis::DirectionBandwidth*> directions;
    for (const auto& d : c.bandwidth) directions[d.name] = &d;
    for (simdjson::dom::element row : ref.root["memory_bw_summary"].get_array()) {
      if (static_cast<int64_t>(number(row, "rank")) != rank) continue;
      std::string_view name_view;
      ASSERT_EQ(row["name"].get(name_view), simdjson::SUCCESS);
      const std::string direction(name_view);
      ASSERT_TRUE(directions.count(direction)) << name << " " << direction;
      const analysis::PointStats& p = directions[direction]->points;
      SCOPED_TRACE(name + " " + direction);
      EXPECT_EQ(p.count, number(row, "memory_bw_gbps_count"));
      EXPECT_NEAR(p.mean, number(row, "memory_bw_gbps_mean"), 1e-5);
      EXPECT_NEAR(p.max, number(row, "memory_bw_gbps_max"), 1e-5);
      EXPECT_NEAR(p.min, number(row, "memory_bw_gbps_min"), 1e-5);
    }
  }
}

TEST(CountersHta, NegativeQueueLengthValuesCheck) {
  expect_hta_counters("negative_queue_length_values_check");
}
TEST(CountersHta, DfIndexResolver) {
  expect_hta_counters("df_index_resolver");
}
TEST(CountersHta, TraceFilter2Ranks) {
  expect_hta_counters("trace_filter_2ranks");
}

// The CLI on the shared trace that fills a queue: the limit found in it (the level at which its
// launches start to block) is 896, where stream 7 is full for 64,219 us, with 437 launch calls made
// then, 56,134 us of host time (128 us each: the calls block); at HTA's 1,024 nothing is full. Every
// stream has a row; summary has the tables, its page a chart.
TEST(CountersCli, FullQueueFiresAtTheDefaultLimitAndNotAtHtas) {
  const fs::path trace = kShared / "traces" / "hta" / "negative_queue_length_values_check";
  if (!fs::exists(trace)) GTEST_SKIP() << "no shared traces at " << trace;
  const testing::CliRun r = testing::run_cli("trace counters -q --format csv " + trace.string(), "", 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n0,7,896,trace,64219,0.0629641867228013,437,56134\n"), std::string::npos) << r.out;
  for (const char* stream : {"25", "27", "84", "285", "363"}) {
    EXPECT_NE(r.out.find(std::string("\n0,") + stream + ",896,trace,0,0,0,0\n"), std::string::npos) << stream;
  }
  const testing::CliRun hta =
      testing::run_cli("trace counters -q --format csv --max-queue-length 1024 " + trace.string(), "", 120);
  ASSERT_EQ(hta.exit_code, 0) << hta.err;
  EXPECT_NE(hta.out.find("\n0,7,1024,option,0,0,0,0\n"), std::string::npos) << hta.out;
  EXPECT_EQ(testing::run_cli("trace counters -q --max-queue-length 0 " + trace.string()).exit_code, 2);

  const fs::path page = fs::temp_directory_path() / ("counters-" + std::to_string(::getpid()) + ".html");
  const testing::CliRun summary =
      testing::run_cli("trace summary -q --format json --html " + page.string() + " " + trace.string(), "", 120);
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  for (const char* key : {"\"queue_length\":", "\"queue_full\":", "\"memory_bandwidth\":"}) {
    EXPECT_NE(summary.out.find(key), std::string::npos) << key;
  }
  const std::string html = testing::slurp(page.string());
  fs::remove(page);
  EXPECT_NE(html.find("id=\"chart-queue\""), std::string::npos);
  EXPECT_NE(html.find("rank 0: busiest stream: 612.3"), std::string::npos);
}

}  // namespace
}  // namespace scaleprof

// Issue 30, items 3 and 4: the analyses on traces read by the real reader whose figures pass int64
// (every sum of FLOPs, bytes and allocations is checked: unknown, shown null with a note, never a
// wrapped number), impossible convolutions refused, overlapping ProfilerStep windows left out with a
// note, and deeply nested shaped calls counted once each. No timing here: the reproducers of the
// quadratic paths are timed with the CLI (tests/gen_quadratic_traces.py, docs/flops.md).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>

#include "analysis/counters.h"
#include "analysis/flop_formulas.h"
#include "analysis/flops.h"
#include "analysis/memory_timeline.h"
#include "analysis/profiler_steps.h"
#include "analysis/step_decomposition.h"
#include "core/checked_sum.h"
#include "engine/rank_results_store.h"
#include "report/table.h"
#include "report/trace_report.h"
#include "trace/kineto_reader.h"
#include "trace_report_util.h"

namespace scaleprof {
namespace {

trace::RankTrace read(const std::string& json) {
  simdjson::padded_string text(json);
  auto t = trace::parse_kineto_trace("t.json", text);
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return std::move(t.value());
}

// The cells of column `key` of the first row of `table`, rendered as JSON ("null" for a null cell).
std::string json_of(const report::Table& table) {
  report::RenderOptions options;
  options.format = report::Format::kJson;
  return report::render(table, options);
}

// Two matmuls of 2^62 FLOPs each (2 * 2^30 * 2^30 * 2): each fits int64, their sum does not.
constexpr const char* kHugeMatmuls = R"({"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
 "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 10,
   "args": {"Input Dims": [[1073741824, 2], [2, 1073741824]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 30, "dur": 10,
   "args": {"Input Dims": [[1073741824, 2], [2, 1073741824]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 100, "dur": 100}
]})";

TEST(AnalysisOverflow, FlopsPastInt64AreUnknownNeverWrapped) {
  const trace::RankTrace t = read(kHugeMatmuls);
  const analysis::RankFlops f = analysis::compute_flops(t);
  EXPECT_EQ(f.counted_calls, 2);
  // Before: -9.2e18 FLOPs (the wrapped sum), MFU -1.4e10 %.
  EXPECT_TRUE(is_unknown_figure(f.flops));
  EXPECT_TRUE(is_unknown_figure(f.flop_counter_flops));
  EXPECT_TRUE(is_unknown_figure(f.compute_flops[static_cast<size_t>(analysis::FlopDtype::kBf16)]));
  ASSERT_EQ(f.operators.size(), 1u);
  EXPECT_EQ(f.operators[0].calls, 2);
  EXPECT_TRUE(is_unknown_figure(f.operators[0].flops));
  ASSERT_EQ(f.steps.size(), 2u);
  EXPECT_TRUE(is_unknown_figure(f.steps[0].flops));
  EXPECT_EQ(f.steps[1].flops, 0);

  // The report: null FLOPs, TFLOP/s and MFU, the note in the title; no negative number anywhere.
  const report::TraceReport r = testing::streamed_report_of_text("flops", kHugeMatmuls);
  ASSERT_FALSE(r.tables.empty());
  const report::Table& ranks = r.tables[0];
  EXPECT_NE(ranks.title.find("past 2^63"), std::string::npos) << ranks.title;
  const std::string json = json_of(ranks);
  EXPECT_NE(json.find("\"flops\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"mfu_pct\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"tflops\": null"), std::string::npos) << json;
  for (const report::Table& table : r.tables) EXPECT_EQ(json_of(table).find("-9"), std::string::npos) << json_of(table);
}

TEST(AnalysisOverflow, ConvolutionDilationTimesKernelIsCheckedAndImpossibleShapesRefused) {
  // Dilation 2^40 x kernel 2^40 passed int64 (UBSan: signed overflow) and wrapped into a span.
  const int64_t big = int64_t{1} << 40;
  EXPECT_EQ(analysis::conv_output_spatial({1, 1, 8}, {1, 1, big}, {1}, {0}, {big}), std::nullopt);
  // A kernel of size 0 is no convolution.
  EXPECT_EQ(analysis::conv_output_spatial({1, 1, 8}, {1, 1, 0}, {1}, {0}, {1}), std::nullopt);
  // The largest padded input with the largest dilation: exact in 128 bits.
  EXPECT_EQ(analysis::conv_output_spatial({1, 1, big}, {1, 1, 2}, {1}, {big}, {big}),
            analysis::Shape({big + 2 * big - big - 1 + 1}));
  // Through the trace: a convolution whose dilated kernel overflowed counted 335 M FLOPs; now it is
  // an unmodelled call, as is one whose input channels are no whole number of the weight's groups.
  const trace::RankTrace t = read(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::convolution", "pid": 1, "tid": 1, "ts": 0, "dur": 10,
     "args": {"Input Dims": [[1, 1, 4096], [8, 1, 1099511627776], [], [], [], [], [], [], []],
              "Input type": ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
              "Concrete Inputs": ["", "", "", "[1]", "[0]", "[1099511627776]", "False", "[0]", "1"]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::convolution", "pid": 1, "tid": 1, "ts": 20, "dur": 10,
     "args": {"Input Dims": [[1, 5, 16], [8, 2, 3], [], [], [], [], [], [], []],
              "Input type": ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
              "Concrete Inputs": ["", "", "", "[1]", "[0]", "[1]", "False", "[0]", "1"]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::convolution", "pid": 1, "tid": 1, "ts": 40, "dur": 10,
     "args": {"Input Dims": [[1, 4, 16], [8, 2, 3], [], [], [], [], [], [], []],
              "Input type": ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
              "Concrete Inputs": ["", "", "", "[1]", "[0]", "[1]", "False", "[0]", "2"]}}
  ]})");
  const analysis::RankFlops f = analysis::compute_flops(t);
  EXPECT_EQ(f.unmodelled_calls, 2);
  EXPECT_EQ(f.counted_calls, 1);
  // The real one: 2 * N(1) * out(14) * k(3) * Cout(8) * Cin/groups(2).
  EXPECT_EQ(f.flops, 2 * 14 * 3 * 8 * 2);
}

// [memory] rows whose first `Total Allocated` (INT64_MAX) less its `Bytes` (a free) makes "before
// profiling" pass int64. (The reader bounds the sum of Bytes itself: 512 PiB.)
TEST(AnalysisOverflow, MemoryTotalsPastInt64AreUnknown) {
  const std::string json = R"({"traceEvents": [
    {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 10,
     "args": {"Total Reserved": 0, "Total Allocated": 9223372036854775807, "Bytes": -1000, "Addr": 1, "Device Type": 1, "Device Id": 0}},
    {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 20,
     "args": {"Total Reserved": 0, "Total Allocated": 100, "Bytes": 5, "Addr": 2, "Device Type": 1, "Device Id": 0}},
    {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 30,
     "args": {"Total Reserved": 0, "Total Allocated": 200, "Bytes": 100, "Addr": 3, "Device Type": 1, "Device Id": 0}}
  ]})";
  const trace::RankTrace t = read(json);
  ASSERT_EQ(t.memory.size(), 3u);
  const analysis::RankMemory m = analysis::memory_timeline(t, analysis::find_profiler_steps(t), {});
  ASSERT_EQ(m.devices.size(), 1u);
  const analysis::DeviceMemory& d = m.devices[0];
  EXPECT_TRUE(is_unknown_figure(d.before_profiling));  // was -9.2e18 B
  EXPECT_EQ(d.allocated_bytes, 105);
  EXPECT_EQ(d.peak_allocated, INT64_MAX);  // the trace's own totals stay as written

  const report::TraceReport r = testing::streamed_report_of_text("memory", json);
  ASSERT_GE(r.tables.size(), 2u);
  EXPECT_NE(r.tables[0].title.find("past 2^63"), std::string::npos) << r.tables[0].title;
  const std::string devices = json_of(r.tables[0]);
  EXPECT_NE(devices.find("\"before_profiling_bytes\": null"), std::string::npos) << devices;
  // The spread across ranks names the one rank as both ends (it was -1 for a peak at INT64_MAX).
  const std::string spread = json_of(r.tables[1]);
  EXPECT_NE(spread.find("\"min_rank\": 0"), std::string::npos) << spread;
  EXPECT_EQ(spread.find("\"min_rank\": -1"), std::string::npos) << spread;
}

TEST(AnalysisOverflow, CopyBytesPastInt64AreUnknown) {
  const std::string json = R"json({"traceEvents": [
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 10, "dur": 5,
     "args": {"stream": 7, "device": 0, "bytes": 9223372036854775000, "memory bandwidth (GB/s)": 1.5}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 20, "dur": 5,
     "args": {"stream": 7, "device": 0, "bytes": 9223372036854775000, "memory bandwidth (GB/s)": 1.5}}
  ]})json";
  const trace::RankTrace t = read(json);
  std::vector<uint32_t> rows(t.events.size());
  for (uint32_t i = 0; i < rows.size(); ++i) rows[i] = i;
  const analysis::RankCounters c = analysis::compute_counters(t, rows, analysis::kDefaultMaxQueueLength);
  ASSERT_EQ(c.bandwidth.size(), 1u);
  EXPECT_EQ(c.bandwidth[0].copies, 2);
  EXPECT_TRUE(is_unknown_figure(c.bandwidth[0].bytes));

  const report::TraceReport r = testing::streamed_report_of_text("counters", json);
  bool found = false;
  for (size_t i = 0; i < r.tables.size(); ++i) {
    if (r.keys[i] != "memory_bandwidth") continue;
    found = true;
    EXPECT_NE(r.tables[i].title.find("past 2^63"), std::string::npos) << r.tables[i].title;
    EXPECT_NE(json_of(r.tables[i]).find("\"bytes\": null"), std::string::npos) << json_of(r.tables[i]);
  }
  EXPECT_TRUE(found);
}

// N ProfilerStep windows, each starting inside the one before (one long window over them all).
std::string overlapping_steps(int n) {
  std::string json = R"({"traceEvents": [)";
  json +=
      R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": 0, "dur": 1000000},)";
  for (int i = 1; i <= n; ++i) {
    json += R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#)" + std::to_string(i) +
            R"(", "pid": 1, "tid": 1, "ts": )" + std::to_string(i) + R"(, "dur": 1000000},)";
    json += R"({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": )" + std::to_string(i) +
            R"(, "dur": 1},)";
  }
  json +=
      R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#999", "pid": 1, "tid": 1, "ts": 2000000, "dur": 10}]})";
  return json;
}

TEST(AnalysisOverflow, OverlappingStepWindowsAreLeftOutWithANote) {
  const trace::RankTrace t = read(overlapping_steps(300));
  const analysis::ProfilerSteps s = analysis::find_profiler_steps(t);
  ASSERT_EQ(s.steps.size(), 2u);  // #0 (the first, longest) and #999 after it
  EXPECT_EQ(s.steps[0].step, 0);
  EXPECT_EQ(s.steps[1].step, 999);
  EXPECT_EQ(s.overlapping_steps, 300);
  // Every analysis sees the same disjoint windows: the decomposition has one analysed step (the last
  // is left out as HTA does), the FLOPs two.
  EXPECT_EQ(analysis::decompose_steps(t).steps.size(), 1u);
  EXPECT_EQ(analysis::compute_flops(t).steps.size(), 0u);  // no shapes: no FLOPs steps either

  const report::TraceReport r = testing::streamed_report_of_text("steps", overlapping_steps(300));
  ASSERT_FALSE(r.tables.empty());
  EXPECT_NE(r.tables[0].title.find("300 overlapping ProfilerStep windows left out"), std::string::npos)
      << r.tables[0].title;
  // And through the spilling store (the streamed path keeps the count).
  engine::RankResults results;
  results.steps = s;
  auto store = engine::RankResultsStore::spilling(0);
  store->add(results);
  EXPECT_TRUE(store->spilled());
  int64_t back = -1;
  store->for_each([&](const engine::RankResults& x) { back = x.steps->overlapping_steps; });
  EXPECT_EQ(back, 300);
}

// Shaped calls nested `depth` deep on one thread: add > add > ... > mm at the bottom.
std::string nested_calls(int depth) {
  std::string json = R"({"traceEvents": [)";
  for (int i = 0; i < depth; ++i) {
    json += R"({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": )" + std::to_string(i) +
            R"(, "dur": )" + std::to_string(2 * (depth - i) + 10) +
            R"(, "args": {"Input Dims": [[4, 4], [4, 4]], "Input type": ["float", "float"]}},)";
  }
  json += R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": )" + std::to_string(depth) +
          R"(, "dur": 1, "args": {"Input Dims": [[4, 4], [4, 4]], "Input type": ["float", "float"]}},)";
  json += R"({"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": )" +
          std::to_string(depth + 2) + R"(, "dur": 1, "args": {"Input Dims": [[4, 4]], "Input type": ["float"]}}]})";
  return json;
}

TEST(AnalysisOverflow, DeeplyNestedCallsCountOnce) {
  // 5,000 levels: the walk over each call's ancestors made this 12.5 M steps; the counted calls are
  // the mm at the bottom and the relu beside it (inside no counted call: the adds have calls with
  // formulas below them, so none counts).
  const trace::RankTrace t = read(nested_calls(5000));
  const analysis::RankFlops f = analysis::compute_flops(t);
  EXPECT_EQ(f.shaped_calls, 5002);
  EXPECT_EQ(f.counted_calls, 2);
  EXPECT_EQ(f.flops, 2 * 4 * 4 * 4 + 16);
  EXPECT_EQ(f.flop_counter_flops, 2 * 4 * 4 * 4);
}

// The class, not the instances: random traces whose shapes, byte counts and totals are drawn near
// the ends of int64 (and small), through every analysis of issue 30. Each sum is exact and
// non-negative, or unknown; never a wrapped number (under UBSan in the sanitizer tree, no signed
// overflow either). The fuzz target trace_deep_analyses checks the same on inputs it finds.
void expect_figure(int64_t v, const char* what) {
  EXPECT_TRUE(v >= 0 || is_unknown_figure(v)) << what << " " << v;
}

TEST(AnalysisOverflow, RandomHugeFiguresAreExactOrUnknown) {
  uint64_t state = 0x9E3779B97F4A7C15ULL;  // fixed seed: the same traces every run
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  auto value = [&]() -> int64_t {
    switch (next() % 5) {
      case 0:
        return static_cast<int64_t>(next() % 64);
      case 1:
        return INT64_MAX - static_cast<int64_t>(next() % 1000);
      case 2:
        return (int64_t{1} << (20 + next() % 22)) + static_cast<int64_t>(next() % 7);
      case 3:
        return -static_cast<int64_t>(next() % 1000);
      default:
        return INT64_MIN + static_cast<int64_t>(next() % 1000);
    }
  };
  int unknown = 0;  // sums found past int64: the test reaches the class it is about
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE(round);
    std::string json = R"({"traceEvents": [)";
    json +=
        R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 500},)";
    for (int k = 0; k < 6; ++k) {
      const int64_t m = value(), n = value(), kk = value();
      std::string args;
      switch (next() % 3) {
        case 0:  // a matmul: 2·M·N·K
          args = R"("name": "aten::mm", "args": {"Input Dims": [[)" + std::to_string(m) + ", " + std::to_string(kk) +
                 "], [" + std::to_string(kk) + ", " + std::to_string(n) + R"(]], "Input type": ["float", "float"]}})";
          break;
        case 1:  // an elementwise op: one per element
          args = R"("name": "aten::relu", "args": {"Input Dims": [[)" + std::to_string(m) + ", " + std::to_string(n) +
                 R"(]], "Input type": ["float"]}})";
          break;
        default:  // a 1-d convolution with a random dilation and kernel
          args =
              R"("name": "aten::convolution", "args": {"Input Dims": [[1, 1, )" + std::to_string(m) + "], [2, 1, " +
              std::to_string(kk) +
              R"(], [], [], [], [], [], [], []], "Input type": ["float", "float"], "Concrete Inputs": ["", "", "", "[1]", "[0]", "[)" +
              std::to_string(n) + R"(]", "False", "[0]", "1"]}})";
      }
      json += R"({"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": )" + std::to_string(k * 10) +
              R"(, "dur": 5, )" + args + ",";
      json += R"({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" +
              std::to_string(k * 10 + 1) + R"(, "args": {"Total Reserved": )" + std::to_string(value()) +
              R"(, "Total Allocated": )" + std::to_string(value()) + R"(, "Bytes": )" + std::to_string(value()) +
              R"(, "Addr": )" + std::to_string(next() % 4) + R"(, "Device Type": 1, "Device Id": 0}},)";
      json += R"({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH", "pid": 0, "tid": 7, "ts": )" +
              std::to_string(k * 10 + 2) + R"(, "dur": 3, "args": {"stream": 7, "device": 0, "bytes": )" +
              std::to_string(value()) + "}},";
    }
    json +=
        R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 500, "dur": 5}]})";
    simdjson::padded_string text(json);
    auto parsed = trace::parse_kineto_trace("t.json", text);
    if (!parsed.ok()) continue;  // a value the reader refuses (a negative `Bytes` total, say)
    const trace::RankTrace& t = parsed.value();
    const analysis::RankFlops f = analysis::compute_flops(t);
    unknown += is_unknown_figure(f.flops) ? 1 : 0;
    expect_figure(f.flops, "flops");
    expect_figure(f.flop_counter_flops, "flop_counter_flops");
    for (int64_t v : f.compute_flops) expect_figure(v, "compute_flops");
    for (const analysis::FlopOperator& o : f.operators) expect_figure(o.flops, "operator flops");
    for (const analysis::FlopStep& st : f.steps) expect_figure(st.flops, "step flops");
    const analysis::RankMemory m = analysis::memory_timeline(t, analysis::find_profiler_steps(t), {});
    for (const analysis::DeviceMemory& d : m.devices) {
      unknown += is_unknown_figure(d.allocated_bytes) ? 1 : 0;
      expect_figure(d.allocated_bytes, "allocated_bytes");
      for (const analysis::MemoryHolder& h : d.holders) {
        if (h.allocations > 0) expect_figure(h.bytes, "holder bytes");  // sums of allocations (Bytes > 0)
      }
    }
    std::vector<uint32_t> rows(t.events.size());
    for (uint32_t i = 0; i < rows.size(); ++i) rows[i] = i;
    for (const analysis::DirectionBandwidth& bw :
         analysis::compute_counters(t, rows, analysis::kDefaultMaxQueueLength).bandwidth) {
      unknown += is_unknown_figure(bw.bytes) ? 1 : 0;
      expect_figure(bw.bytes, "copy bytes");
    }
  }
  EXPECT_GT(unknown, 0);
}

}  // namespace
}  // namespace scaleprof

// CUPTI range-profiler counters: the reader's CounterArgsTable (trace/event_table.h) and HTA's
// get_cupti_counter_data_with_operators (analysis/cupti_counters.h) on small hand-written traces.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analysis/analysis_window.h"
#include "analysis/cupti_counters.h"
#include "trace/kineto_reader.h"

namespace scaleprof::analysis {
namespace {

// Thread 1: aten::conv2d [0, 100) holds aten::cudnn_convolution [10, 60), which launches k0 at 20;
// aten::relu [100, 150) launches k1 at 110; a launch at 200 is under no operator. The range events
// come in file order k1, k0, k2 and are paired by start.
constexpr const char* kCuptiTrace = R"({"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
 {"ph": "X", "cat": "cpu_op", "name": "aten::cudnn_convolution", "pid": 1, "tid": 1, "ts": 10, "dur": 50},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20, "dur": 5,
  "args": {"correlation": 1}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 100, "dur": 50},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernelExC", "pid": 1, "tid": 1, "ts": 110, "dur": 5,
  "args": {"correlation": 2}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 200, "dur": 5},
 {"ph": "X", "cat": "cuda_profiler_range", "name": "k1", "pid": 0, "tid": 0, "ts": 2000, "dur": 1000,
  "args": {"sm__cycles.sum": 7, "dram__bytes.sum": 9119334400, "note": "text is not a counter"}},
 {"ph": "X", "cat": "cuda_profiler_range", "name": "k0", "pid": 0, "tid": 0, "ts": 1000, "dur": 1000,
  "args": {"sm__cycles.sum": 3, "sm__ratio.avg": 0.5}},
 {"ph": "X", "cat": "cuda_profiler_range", "name": "k2", "pid": 0, "tid": 0, "ts": 3000, "dur": 1000,
  "args": {"sm__cycles.sum": 1}},
 {"ph": "X", "cat": "kernel", "name": "not_a_range", "pid": 0, "tid": 7, "ts": 40, "dur": 10,
  "args": {"sm__cycles.sum": 99, "stream": 7, "correlation": 1}}
]})";

trace::RankTrace read_cupti(const std::string& text) {
  auto t = trace::parse_kineto_trace("cupti.json", simdjson::padded_string(text));
  EXPECT_TRUE(t.ok());
  return std::move(t).value();
}

TEST(CuptiCounters, ReaderKeepsTheNumericArgumentsOfRangeEventsOnly) {
  const trace::RankTrace t = read_cupti(kCuptiTrace);
  const trace::CounterArgsTable& c = t.counter_args;
  ASSERT_EQ(c.size(), 5u);  // 2 + 2 + 1: the text argument and the kernel's arguments are not counters
  EXPECT_EQ(t.strings.view(c.name[0]), "sm__cycles.sum");
  EXPECT_EQ(c.value[0], 7.0);
  EXPECT_EQ(t.strings.view(c.name[1]), "dram__bytes.sum");
  EXPECT_EQ(c.value[1], 9119334400.0);
  EXPECT_EQ(t.name(c.event[2]), "k0");
  EXPECT_EQ(c.value[3], 0.5);
}

TEST(CuptiCounters, RangesArePairedWithLaunchesByStartAndGetTheirOperators) {
  const trace::RankTrace t = read_cupti(kCuptiTrace);
  const RankCuptiCounters r = cupti_counters_with_operators(t, compute_analysis_window(t).rows);
  EXPECT_TRUE(r.error.empty());
  EXPECT_EQ(r.ranges, 3);
  EXPECT_EQ(r.launches, 3);
  ASSERT_EQ(r.kernels.size(), 3u);
  ASSERT_EQ(r.counter_names, (std::vector<std::string>{"sm__cycles.sum", "dram__bytes.sum", "sm__ratio.avg"}));
  EXPECT_EQ(r.kernels[0].name, "k0");
  EXPECT_EQ(r.kernels[0].op_stack, (std::vector<std::string>{"aten::conv2d", "aten::cudnn_convolution"}));
  EXPECT_EQ(r.kernels[0].counters[0], 3.0);
  EXPECT_TRUE(std::isnan(r.kernels[0].counters[1]));
  EXPECT_EQ(r.kernels[0].counters[2], 0.5);
  EXPECT_EQ(r.kernels[1].name, "k1");
  EXPECT_EQ(r.kernels[1].op_stack, (std::vector<std::string>{"aten::relu"}));
  EXPECT_EQ(r.kernels[1].counters[1], 9119334400.0);
  EXPECT_EQ(r.kernels[2].name, "k2");
  EXPECT_TRUE(r.kernels[2].op_stack.empty());
  EXPECT_EQ(r.kernels[2].ts_ns, 3'000'000);
  EXPECT_EQ(r.kernels[2].dur_ns, 1'000'000);
}

TEST(CuptiCounters, UnequalCountsGiveNoKernels) {
  std::string text = kCuptiTrace;
  const std::string extra =
      R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 300, "dur": 5},)";
  text.insert(text.find('[') + 1, extra);
  const trace::RankTrace t = read_cupti(text);
  const RankCuptiCounters r = cupti_counters_with_operators(t, compute_analysis_window(t).rows);
  EXPECT_EQ(r.launches, 4);
  EXPECT_TRUE(r.kernels.empty());
  EXPECT_NE(r.error.find("3 cuda_profiler_range events but 4 cudaLaunchKernel calls"), std::string::npos);
}

TEST(CuptiCounters, CategoryAfterArgumentsIsNotReadAsCounters) {
  // The documented limit: only a `cat` read before `args` marks the arguments as counters.
  const trace::RankTrace t = read_cupti(R"({"traceEvents": [{"ph": "X", "name": "k", "pid": 0, "tid": 0, "ts": 1,
    "dur": 1, "args": {"sm__cycles.sum": 7}, "cat": "cuda_profiler_range"}]})");
  EXPECT_EQ(t.counter_args.size(), 0u);
  EXPECT_EQ(t.events.cat[0], trace::Category::kCudaProfilerRange);
}

}  // namespace
}  // namespace scaleprof::analysis

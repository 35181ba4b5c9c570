// The critical path (analysis/critical_path.h): exact paths on small hand-written traces, HTA's own
// results on its critical_path traces, and on every shared trace the property that the path's
// segments add up to each step.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/critical_path.h"
#include "host_trace_builder.h"
#include "test_paths.h"
#include "trace/kineto_reader.h"

namespace scaleprof::analysis {
namespace {

namespace fs = std::filesystem;
using testing::HostTraceBuilder;

int64_t sum(const auto& values) {
  return std::accumulate(values.begin(), values.end(), int64_t{0});
}

trace::RankTrace from_json(const std::string& events) {
  const std::string text = R"({"traceEvents": [)" + events + "]}";
  auto t = trace::parse_kineto_trace("test.json", simdjson::padded_string(text));
  EXPECT_TRUE(t) << t.error().message;
  return std::move(t.value());
}

// Host only: the gaps between top-level operators are idle, the operators' self time host.
TEST(CriticalPath, HostGapsAreIdleAndTheOperatorsHost) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 1000);
  b.op("aten::A", 100, 300);
  b.op("aten::B", 150, 100);
  b.op("aten::C", 600, 300);
  const trace::RankTrace t = b.take();
  const RankCriticalPath p = critical_path(t, step_path_windows(t));
  ASSERT_EQ(p.steps.size(), 1u);
  const StepCriticalPath& s = p.steps[0];
  EXPECT_EQ(s.step, 1);
  EXPECT_EQ(s.category(PathCategory::kHost), 600);
  EXPECT_EQ(s.category(PathCategory::kIdle), 400);
  EXPECT_EQ(sum(s.category_ns), 1000);
  EXPECT_EQ(s.hta_length_ns, 600);  // HTA weighs the gaps 0
  EXPECT_EQ(s.bound_by_ns[static_cast<size_t>(BoundBy::kCpuBound)], 600);
  EXPECT_EQ(s.bound_by_ns[static_cast<size_t>(BoundBy::kNone)], 400);
  // source -> A, A self, B, A self, -> C, C, -> sink
  EXPECT_EQ(s.segments, 7);
  ASSERT_GE(s.top.size(), 3u);
  EXPECT_EQ(s.top[0].name, "(host idle / Python)");
  EXPECT_EQ(s.top[0].ns, 400);
  EXPECT_EQ(s.top[1].name, "aten::C");
  EXPECT_EQ(s.top[1].ns, 300);
  EXPECT_EQ(s.top[2].name, "aten::A");
  EXPECT_EQ(s.top[2].ns, 200);  // its self time: B's 100 is B's
}

// A kernel the host waits for at cudaStreamSynchronize: the path leaves the host at the launch,
// runs through the kernel and comes back at the sync's end.
TEST(CriticalPath, ABlockingSyncTakesThePathThroughTheKernelWaitedFor) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#4", 0, 1000);
  b.op("aten::mm", 10, 50);
  b.runtime("cudaLaunchKernel", 20, 10, /*correlation=*/1);
  b.kernel("sm90_gemm", 40, 600, trace::kNone, 1);
  b.op("aten::item", 100, 600);
  b.runtime("cudaStreamSynchronize", 110, 540, 2);
  const trace::RankTrace t = b.take();
  const std::vector<std::vector<PathSegment>> segs = critical_path_segments(t, step_path_windows(t));
  ASSERT_EQ(segs.size(), 1u);
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const PathSegment& s : segs[0]) spans.emplace_back(s.start_ns, s.end_ns);
  const std::vector<std::pair<int64_t, int64_t>> expected = {{0, 10},    {10, 20},   {20, 40},   {40, 640},
                                                             {640, 650}, {650, 700}, {700, 1000}};
  EXPECT_EQ(spans, expected);
  EXPECT_EQ(segs[0][2].type, PathEdgeType::kKernelLaunch);
  EXPECT_EQ(segs[0][4].type, PathEdgeType::kSyncDependency);
  EXPECT_EQ(t.name(static_cast<size_t>(segs[0][4].event)), "sm90_gemm");  // named after what it waited for

  const StepCriticalPath s = critical_path(t, step_path_windows(t)).steps.at(0);
  EXPECT_EQ(s.category(PathCategory::kComputation), 600);
  EXPECT_EQ(s.category(PathCategory::kHost), 80);  // mm 10, launch delay 20, item after the sync 50
  EXPECT_EQ(s.category(PathCategory::kWaitingForGpu), 10);
  EXPECT_EQ(s.category(PathCategory::kIdle), 310);
  EXPECT_EQ(sum(s.category_ns), 1000);
  EXPECT_EQ(s.hta_length_ns, 680);
  EXPECT_EQ(s.on_device_ns, 600);
  EXPECT_EQ(s.bound_by_ns[static_cast<size_t>(BoundBy::kGpuKernelLaunchOverhead)], 20);
  EXPECT_EQ(s.top.at(0).name, "sm90_gemm");
}

// A sync call that starts after the kernel ended waited for nothing: the host stays on the path, and
// the call's own 5 ns are host time, not waiting for the GPU (it did not wait).
TEST(CriticalPath, AShortKernelLeavesTheHostOnThePath) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 500);
  b.op("aten::mm", 0, 400);
  b.runtime("cudaLaunchKernel", 10, 10, 1);
  b.kernel("k", 30, 20, trace::kNone, 1);
  b.runtime("cudaDeviceSynchronize", 300, 5, 2);
  const trace::RankTrace t = b.take();
  const StepCriticalPath s = critical_path(t, step_path_windows(t)).steps.at(0);
  EXPECT_EQ(s.category(PathCategory::kComputation), 0);
  EXPECT_EQ(s.category(PathCategory::kHost), 400);
  EXPECT_EQ(s.category(PathCategory::kWaitingForGpu), 0);
  EXPECT_EQ(s.category(PathCategory::kIdle), 100);
  EXPECT_EQ(s.hta_length_ns, 395);  // HTA weighs cudaDeviceSynchronize 0 all the same
  EXPECT_EQ(s.bound_by_ns[static_cast<size_t>(BoundBy::kCpuBound)], 400);
}

// The issue's smallest case: one operator launching a 1,400 us kernel in a 1,500 us step, and no
// sync after it. The path ends on the kernel (HTA 0.6.1: 1,450 us, 96.6 % GPU compute).
TEST(CriticalPath, AGpuTailWithoutALaterSyncEndsThePath) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 1'500'000);
  b.op("aten::mm", 0, 100'000);
  b.runtime("cudaLaunchKernel", 20'000, 10'000, 1);
  b.kernel("sm90_gemm", 50'000, 1'400'000, trace::kNone, 1);
  const trace::RankTrace t = b.take();
  const StepCriticalPath s = critical_path(t, step_path_windows(t)).steps.at(0);
  EXPECT_EQ(s.hta_length_ns, 1'450'000);
  EXPECT_EQ(s.hta_bound_by_ns[static_cast<size_t>(BoundBy::kGpuComputeBound)], 1'400'000);
  EXPECT_EQ(s.hta_bound_by_ns[static_cast<size_t>(BoundBy::kGpuKernelLaunchOverhead)], 30'000);
  EXPECT_EQ(s.hta_bound_by_ns[static_cast<size_t>(BoundBy::kCpuBound)], 20'000);
  EXPECT_EQ(s.category(PathCategory::kComputation), 1'400'000);
  EXPECT_EQ(s.category(PathCategory::kIdle), 50'000);  // the kernel's end to the step's end
  EXPECT_EQ(sum(s.category_ns), 1'500'000);
  EXPECT_EQ(s.top.at(0).name, "sm90_gemm");
}

// cudaEventSynchronize waits for the work the thread recorded (stream 7's), not for the longer
// kernel launched after the record on stream 8, which ends the step on its own.
TEST(CriticalPath, EventSynchronizeWaitsForTheRecordedWork) {
  const trace::RankTrace t = from_json(R"(
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0.01,"dur":0.005,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaEventRecord","pid":1,"tid":1,"ts":0.02,"dur":0.005,"args":{"correlation":2}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0.03,"dur":0.005,"args":{"correlation":3}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaEventSynchronize","pid":1,"tid":1,"ts":0.04,"dur":0.37,"args":{"correlation":4}},
    {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":0.45,"dur":0.1},
    {"ph":"X","cat":"kernel","name":"first","pid":0,"tid":7,"ts":0.1,"dur":0.3,"args":{"correlation":1,"stream":7}},
    {"ph":"X","cat":"kernel","name":"second","pid":0,"tid":8,"ts":0.11,"dur":0.7,"args":{"correlation":3,"stream":8}})");
  const std::vector<PathSegment> segs = critical_path_segments(t, step_path_windows(t)).at(0);
  const StepCriticalPath s = critical_path(t, step_path_windows(t)).steps.at(0);
  // HTA 0.6.1 (tests/python/critical_path_cases.py event_sync, run live): 790 us = 10 cpu_bound,
  // 80 launch delay, 700 GPU compute; the path ends on "second".
  EXPECT_EQ(s.hta_length_ns, 790);
  EXPECT_EQ(s.hta_bound_by_ns[static_cast<size_t>(BoundBy::kGpuComputeBound)], 700);
  EXPECT_EQ(s.hta_bound_by_ns[static_cast<size_t>(BoundBy::kGpuKernelLaunchOverhead)], 80);
  EXPECT_EQ(s.hta_bound_by_ns[static_cast<size_t>(BoundBy::kCpuBound)], 10);
  EXPECT_EQ(sum(s.category_ns), 1000);
  EXPECT_EQ(t.name(static_cast<size_t>(segs.at(segs.size() - 2).event)), "second");
  // The event sync's wait is named by stream 7's kernel, the one recorded.
  const trace::RankTrace t2 = from_json(R"(
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0.01,"dur":0.005,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaEventRecord","pid":1,"tid":1,"ts":0.02,"dur":0.005,"args":{"correlation":2}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0.03,"dur":0.005,"args":{"correlation":3}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaEventSynchronize","pid":1,"tid":1,"ts":0.04,"dur":0.37,"args":{"correlation":4}},
    {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":0.45,"dur":0.5},
    {"ph":"X","cat":"kernel","name":"first","pid":0,"tid":7,"ts":0.1,"dur":0.3,"args":{"correlation":1,"stream":7}},
    {"ph":"X","cat":"kernel","name":"second","pid":0,"tid":8,"ts":0.11,"dur":0.35,"args":{"correlation":3,"stream":8}})");
  const StepCriticalPath s2 = critical_path(t2, step_path_windows(t2)).steps.at(0);
  bool named = false;
  for (const PathItem& item : s2.top) named |= item.name == "wait for: first" && item.ns == 10;
  EXPECT_TRUE(named);
  EXPECT_EQ(s2.category(PathCategory::kWaitingForGpu), 10);  // first's end at 400 -> the sync's end at 410
}

// cudaEventRecord on stream 7 then cudaStreamWaitEvent: the kernel launched next on stream 8 waits
// for stream 7's kernel (GPU -> GPU), and the device sync for stream 8's.
TEST(CriticalPath, StreamWaitEventChainsTwoStreams) {
  const trace::RankTrace t = from_json(R"(
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":0,"dur":0.7},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0.01,"dur":0.005,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaEventRecord","pid":1,"tid":1,"ts":0.02,"dur":0.005,"args":{"correlation":2}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaStreamWaitEvent","pid":1,"tid":1,"ts":0.03,"dur":0.005,"args":{"correlation":3}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0.04,"dur":0.005,"args":{"correlation":4}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":0.05,"dur":0.56,"args":{"correlation":5}},
    {"ph":"X","cat":"kernel","name":"first","pid":0,"tid":7,"ts":0.1,"dur":0.4,"args":{"correlation":1,"stream":7}},
    {"ph":"X","cat":"kernel","name":"second","pid":0,"tid":8,"ts":0.51,"dur":0.09,"args":{"correlation":4,"stream":8}})");
  const StepCriticalPath s = critical_path(t, step_path_windows(t)).steps.at(0);
  EXPECT_EQ(s.category(PathCategory::kComputation), 490);
  EXPECT_EQ(s.category(PathCategory::kHost), 90);            // the first launch's delay
  EXPECT_EQ(s.category(PathCategory::kWaitingForGpu), 10);   // 600 -> 610
  EXPECT_EQ(s.category(PathCategory::kIdle), 10 + 10 + 90);  // before the launch, between streams, after
  EXPECT_EQ(sum(s.category_ns), 700);
  bool stream_wait = false;
  for (const PathItem& item : s.top) stream_wait |= item.name == "(waiting for another stream)" && item.ns == 10;
  EXPECT_TRUE(stream_wait);
}

// A kernel queued behind another waits for it (kernel-kernel), not for its launch.
TEST(CriticalPath, AQueuedKernelFollowsThePreviousOne) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 1000);
  b.runtime("cudaLaunchKernel", 10, 10, 1);
  b.runtime("cudaLaunchKernel", 30, 10, 2);
  b.kernel("a", 50, 500, trace::kNone, 1);
  b.kernel("b", 560, 300, trace::kNone, 2);
  b.runtime("cudaDeviceSynchronize", 50, 820, 3);
  const trace::RankTrace t = b.take();
  const std::vector<PathSegment> segs = critical_path_segments(t, step_path_windows(t)).at(0);
  std::vector<PathEdgeType> types;
  for (const PathSegment& s : segs) types.push_back(s.type);
  const std::vector<PathEdgeType> expected = {
      PathEdgeType::kDependency, PathEdgeType::kKernelLaunch,   PathEdgeType::kOperator,  PathEdgeType::kKernelKernel,
      PathEdgeType::kOperator,   PathEdgeType::kSyncDependency, PathEdgeType::kDependency};
  EXPECT_EQ(types, expected);
  EXPECT_EQ(segs[3].start_ns, 550);
  EXPECT_EQ(segs[3].end_ns, 560);
  EXPECT_EQ(segs[3].bound_by, BoundBy::kGpuKernelKernelOverhead);
}

TEST(CriticalPath, RankWaitMovesOutOfCommunication) {
  StepCriticalPath s;
  s.start_ns = 0;
  s.end_ns = 100;
  s.category_ns[static_cast<size_t>(PathCategory::kCommunication)] = 60;
  s.category_ns[static_cast<size_t>(PathCategory::kHost)] = 40;
  EXPECT_EQ(move_rank_wait(&s, 80), 60);
  EXPECT_EQ(s.category(PathCategory::kWaitingForRank), 60);
  EXPECT_EQ(s.category(PathCategory::kCommunication), 0);
  EXPECT_EQ(sum(s.category_ns), 100);
}

trace::RankTrace read_shared(const fs::path& path) {
  trace::ParseOptions options;
  options.lenient = true;
  auto read = trace::read_kineto_trace(path.string(), options);
  EXPECT_TRUE(read) << read.error().message;
  return std::move(read.value());
}

// HTA 0.6.1's stored results (../shared/traces/hta-reference/critical_path.json): the path's length
// by HTA's weights and its shares by bound_by. Differences are in docs/differences-from-hta.md
// (every case the same path, every share equal: alexnet since its event waits are followed by their
// wait_on_cuda_event_record_corr_id, issue 31). The windows are the library's (path_windows).
TEST(CriticalPath, AgreesWithHtaOnItsCriticalPathTraces) {
  const fs::path root = fs::path(SCALEPROF_SHARED_DIR) / "traces";
  const fs::path reference = root / "hta-reference" / "critical_path.json";
  if (!fs::exists(reference)) GTEST_SKIP() << "HTA's reference results not found at " << reference;
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parser.load(reference.string());
  struct Case {
    std::string key;
    fs::path trace;
    double length_tolerance;  // relative, on the path's length by HTA's weights
    double share_tolerance;   // percentage points, on each bound_by's share
  };
  const std::vector<Case> cases = {
      {"simple_add", "hta/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz", 0.001, 0.01},
      {"alexnet", "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", 0.0001, 0.01},
      // The same path since issue 31 (cudaEventSynchronize waits for the recorded work): 2,411 us.
      {"event_sync", "hta/critical_path/cuda_event_sync/event_sync_trace.json.gz", 0.0001, 0.001},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key);
    const simdjson::dom::element ref = doc[c.key];
    const trace::RankTrace t = read_shared(root / c.trace);
    const std::string_view annotation = ref["annotation"].get_string().value();
    const auto instance = static_cast<size_t>(ref["instance_id"].get_int64().value());
    std::vector<PathWindow> w;
    if (annotation == "ProfilerStep") {  // HTA's instance: the position among the steps
      const std::vector<PathWindow> steps = step_path_windows(t);
      ASSERT_GT(steps.size(), instance);
      w = {steps[instance]};
    } else {
      PathWindowSpec spec;
      spec.annotation = std::string(annotation);
      spec.first = spec.last = static_cast<int64_t>(instance);
      w = path_windows(t, spec);
    }
    ASSERT_EQ(w.size(), 1u);
    const std::vector<PathSegment> segs = critical_path_segments(t, w).at(0);
    int64_t length = 0, total = 0;
    std::map<std::string, int64_t> by;
    for (const PathSegment& s : segs) {
      length += s.hta_weight_ns;
      total += s.end_ns - s.start_ns;
      by[std::string(bound_by_name(s.bound_by))] += s.hta_weight_ns;
    }
    EXPECT_EQ(total, w[0].end_ns - w[0].start_ns);
    const double hta_us = ref["critical_path_length_us"].get_double().value();
    std::ostringstream shares;
    for (const auto& [name, ns] : by) shares << name << "=" << 100.0 * static_cast<double>(ns) / length << " ";
    EXPECT_NEAR(static_cast<double>(length) / 1e3, hta_us, c.length_tolerance * hta_us) << shares.str();
    for (auto [name, pct] : ref["summary_pct"].get_object()) {
      if (name.empty()) continue;
      const double ours = 100.0 * static_cast<double>(by[std::string(name)]) / static_cast<double>(length);
      EXPECT_NEAR(ours, pct.get_double().value(), c.share_tolerance) << name << ": " << shares.str();
    }
  }
}

std::vector<fs::path> shared_traces() {
  std::vector<fs::path> out;
  for (const fs::path& root : {fs::path(SCALEPROF_SHARED_DIR) / "traces" / "hta",
                               fs::path(SCALEPROF_SOURCE_DIR) / "tests" / "data" / "gpu-h200" / "traces"}) {
    if (!fs::is_directory(root)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() && (name.ends_with(".json") || name.ends_with(".json.gz"))) out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every shared trace: the segments add up to each step exactly, none negative, in time order.
TEST(CriticalPath, SegmentsAddUpToEveryStepOfEverySharedTrace) {
  const std::vector<fs::path> traces = shared_traces();
  if (traces.size() < 5) GTEST_SKIP() << "shared traces not found at " << SCALEPROF_SHARED_DIR;
  int64_t steps = 0, on_device = 0;
  for (const fs::path& path : traces) {
    SCOPED_TRACE(path.string());
    const trace::RankTrace t = read_shared(path);
    const std::vector<PathWindow> windows = step_path_windows(t);
    const std::vector<std::vector<PathSegment>> segs = critical_path_segments(t, windows);
    const RankCriticalPath p = critical_path(t, windows);
    ASSERT_EQ(p.steps.size(), windows.size());
    for (size_t k = 0; k < windows.size(); ++k) {
      const StepCriticalPath& s = p.steps[k];
      EXPECT_EQ(sum(s.category_ns), s.duration_ns()) << "step " << s.step;
      EXPECT_EQ(sum(s.bound_by_ns), s.duration_ns()) << "step " << s.step;
      int64_t at = windows[k].start_ns;
      for (const PathSegment& seg : segs[k]) {
        EXPECT_EQ(seg.start_ns, at);
        EXPECT_GE(seg.end_ns, seg.start_ns);
        at = seg.end_ns;
      }
      EXPECT_EQ(at, windows[k].end_ns);
      EXPECT_GT(s.hta_length_ns, 0) << "step " << s.step;
      on_device += s.on_device_ns;
      ++steps;
    }
  }
  EXPECT_GT(steps, 10);
  EXPECT_GT(on_device, 0);  // some path runs through device work
}

}  // namespace
}  // namespace scaleprof::analysis

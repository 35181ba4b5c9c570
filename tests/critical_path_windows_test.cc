// The critical path's windows (any annotation, its instances, the whole trace), its edges in order,
// and the overlay trace drawn from them (analysis/critical_path.h, analysis/path_overlay.h,
// trace/trace_overlay.h): exact answers on small hand-written traces, and the overlay's refusals.
#include <gtest/gtest.h>

#include <simdjson.h>

#include <string>
#include <vector>

#include "analysis/critical_path.h"
#include "analysis/path_overlay.h"
#include "trace/kineto_reader.h"
#include "trace/trace_overlay.h"

namespace scaleprof::analysis {
namespace {

const char* const kWindowsTrace = R"({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
  {"ph": "X", "cat": "user_annotation", "name": "## forward ##", "pid": 1, "tid": 1, "ts": 10, "dur": 400},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 20, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 30, "dur": 10,
   "args": {"correlation": 7}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 50, "dur": 900,
   "args": {"correlation": 7, "stream": 7, "device": 0}},
  {"ph": "X", "cat": "user_annotation", "name": "## forward ##", "pid": 1, "tid": 1, "ts": 500, "dur": 200},
  {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 520, "dur": 50},
  {"ph": "i", "s": "t", "name": "marker", "pid": 1, "tid": 1, "ts": 990}
]})";

trace::RankTrace read_windows_trace(const std::string& text) {
  auto t = trace::parse_kineto_trace("windows.json", simdjson::padded_string(text));
  EXPECT_TRUE(t) << t.error().message;
  return std::move(t.value());
}

std::vector<PathWindow> windows_of(const trace::RankTrace& t, const std::string& annotation, int64_t first = -1,
                                   int64_t last = -1) {
  PathWindowSpec spec;
  spec.annotation = annotation;
  spec.first = first;
  spec.last = last;
  return path_windows(t, spec);
}

TEST(CriticalPathWindows, AnnotationsStepsAndTheWholeTrace) {
  const trace::RankTrace t = read_windows_trace(kWindowsTrace);
  const std::vector<PathWindow> steps = windows_of(t, "ProfilerStep");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].step, 3);
  EXPECT_EQ(steps[0].end_ns - steps[0].start_ns, 1'000'000);
  // Every instance of a name containing the text, numbered from 0 in order of start.
  const std::vector<PathWindow> fwd = windows_of(t, "forward");
  ASSERT_EQ(fwd.size(), 2u);
  EXPECT_EQ(fwd[0].step, 0);
  EXPECT_EQ(fwd[1].step, 1);
  EXPECT_EQ(fwd[1].start_ns - fwd[0].start_ns, 490'000);
  // Instances 0-1 as one window: the first one's start to the latest end.
  const std::vector<PathWindow> both = windows_of(t, "forward", 0, 1);
  ASSERT_EQ(both.size(), 1u);
  EXPECT_EQ(both[0].end_ns - both[0].start_ns, 690'000);
  EXPECT_TRUE(windows_of(t, "forward", 2, 2).empty());
  EXPECT_TRUE(windows_of(t, "ProfilerStep", 4, 4).empty());
  EXPECT_TRUE(windows_of(t, "backward").empty());
  // The whole trace: its first start to its last end (device work included).
  const std::vector<PathWindow> all = windows_of(t, "");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].step, -1);
  EXPECT_EQ(all[0].end_ns - all[0].start_ns, 1'000'000);
}

// The kernel outlasts the forward window: the path of the whole step ends on it, and its edges,
// kept in order, follow one another and add up to the window.
TEST(CriticalPathWindows, EdgesInOrderAddUpAndNameTheirEvents) {
  const trace::RankTrace t = read_windows_trace(kWindowsTrace);
  const RankCriticalPath p = critical_path(t, windows_of(t, "ProfilerStep"), 10, /*events=*/true);
  ASSERT_EQ(p.steps.size(), 1u);
  const StepCriticalPath& s = p.steps[0];
  ASSERT_EQ(static_cast<int64_t>(s.events.size()), s.segments);
  int64_t at = s.start_ns, weight = 0;
  bool kernel = false;
  for (const PathEvent& e : s.events) {
    EXPECT_EQ(e.start_ns, at);
    at = e.end_ns;
    weight += e.hta_weight_ns;
    if (e.name == "gemm") {
      kernel = true;
      EXPECT_EQ(e.cat, "kernel");
      EXPECT_EQ(e.stream, 7);
      EXPECT_EQ(e.file_index, 4);
      EXPECT_EQ(e.bound_by, BoundBy::kGpuComputeBound);
      EXPECT_EQ(e.end_ns - e.start_ns, 900'000);
    }
  }
  EXPECT_TRUE(kernel);
  EXPECT_EQ(at, s.end_ns);
  EXPECT_EQ(weight, s.hta_length_ns);
  // The launch edge runs from the runtime call's start to the kernel's start.
  bool launch = false;
  for (const PathEvent& e : s.events) {
    if (e.type != PathEdgeType::kKernelLaunch) continue;
    launch = true;
    EXPECT_EQ(e.from_file_index, 3);
    EXPECT_EQ(e.to_file_index, 4);
    EXPECT_EQ(e.end_ns - e.start_ns, 20'000);
  }
  EXPECT_TRUE(launch);
  // Without `events` nothing is kept.
  EXPECT_TRUE(critical_path(t, windows_of(t, "ProfilerStep")).steps[0].events.empty());
}

TEST(CriticalPathWindows, TheOverlayMarksDrawsAndKeepsTheRest) {
  const trace::RankTrace t = read_windows_trace(kWindowsTrace);
  const RankCriticalPath p = critical_path(t, windows_of(t, "ProfilerStep"), 10, true);
  const trace::OverlaySpec spec = critical_path_overlay_spec(p);
  auto drawn = trace::draw_trace_overlay("windows.json", simdjson::padded_string(std::string(kWindowsTrace)), spec);
  ASSERT_TRUE(drawn) << drawn.error().message;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(drawn.value()).get(doc));
  simdjson::dom::array events = doc["traceEvents"].get_array();
  std::vector<simdjson::dom::element> all(events.begin(), events.end());
  ASSERT_GT(all.size(), 8u);
  // The kernel is on the path: marked, its own args kept.
  EXPECT_EQ(int64_t(all[4]["args"]["critical"]), 1);
  EXPECT_EQ(int64_t(all[4]["args"]["stream"]), 7);
  // The instant is copied as it was, unmarked.
  EXPECT_EQ(std::string_view(all[7]["name"]), "marker");
  EXPECT_TRUE(all[7]["args"].error());
  int64_t slices = 0, starts = 0, finishes = 0;
  double slice_us = 0;
  for (size_t k = 8; k < all.size(); ++k) {
    const std::string_view ph = all[k]["ph"];
    if (ph == "X") {
      ++slices;
      slice_us += double(all[k]["dur"]);
      EXPECT_EQ(int64_t(all[k]["pid"]), trace::kOverlayPid);
    }
    if (ph == "s") ++starts;
    if (ph == "f") {
      ++finishes;
      EXPECT_EQ(std::string_view(all[k]["bp"]), "e");
    }
  }
  EXPECT_EQ(slices, static_cast<int64_t>(spec.slices.size()));
  EXPECT_DOUBLE_EQ(slice_us, 1000.0);
  EXPECT_EQ(starts, finishes);
  EXPECT_GE(starts, 1);
}

TEST(CriticalPathWindows, TheOverlayRefusesWhatIsNotATrace) {
  const trace::OverlaySpec spec;
  // The last two: what the reader repairs and On-Demand would skip unvalidated (found by fuzzing).
  for (const char* text : {"[1, 2]", "{\"traceEvents\": 3}", "{\"x\": 1}", "{\"traceEvents\": [1, {]}",
                           "{\"deviceProperties\": [{\"name\": 555\"x\"}], \"traceEvents\": []}",
                           "{\"traceEvents\": [{\"ph\": \"X\", \"args\": {\"a\": 1 2}}]}"}) {
    auto drawn = trace::draw_trace_overlay("bad.json", simdjson::padded_string(std::string(text)), spec);
    ASSERT_FALSE(drawn) << text;
    EXPECT_NE(drawn.error().message.find("bad.json: cannot draw the critical path on it"), std::string::npos)
        << drawn.error().message;
    EXPECT_EQ(drawn.error().kind, ErrorKind::kBadInput);
  }
  // A hostile name is copied as JSON text, never broken out of its string.
  trace::OverlaySpec named;
  named.track_name = "evil\"}, {\"ph\": \"X";
  auto drawn =
      trace::draw_trace_overlay("ok.json", simdjson::padded_string(std::string(R"({"traceEvents": []})")), named);
  ASSERT_TRUE(drawn);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_FALSE(parser.parse(drawn.value()).get(doc));
  EXPECT_EQ(doc["traceEvents"].get_array().size(), 2u);
}

// cuDNN's pattern: a kernel on stream 20, an event recorded after it, stream 7 made to wait for the
// event, then a kernel on stream 7. The wait's record names the cudaEventRecord (by correlation) and
// the stream it recorded (wait_on_stream): the second kernel waited for the first, not for its launch.
TEST(CriticalPathWindows, AStreamWaitsForTheWorkItsEventRecorded) {
  const trace::RankTrace t = read_windows_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 2000},
    {"ph": "X", "cat": "cpu_op", "name": "aten::conv", "pid": 1, "tid": 1, "ts": 5, "dur": 110},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 10,
     "args": {"correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "fft", "pid": 0, "tid": 20, "ts": 30, "dur": 1000,
     "args": {"correlation": 1, "stream": 20, "device": 0}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 1, "tid": 1, "ts": 40, "dur": 5,
     "args": {"correlation": 2}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 1, "tid": 1, "ts": 50, "dur": 5,
     "args": {"correlation": 3}},
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 7, "ts": 60, "dur": 1,
     "args": {"correlation": 3, "stream": 7, "wait_on_stream": 20, "wait_on_cuda_event_record_corr_id": 2}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 100, "dur": 10,
     "args": {"correlation": 4}},
    {"ph": "X", "cat": "kernel", "name": "add", "pid": 0, "tid": 7, "ts": 1040, "dur": 500,
     "args": {"correlation": 4, "stream": 7, "device": 0}}
  ]})");
  ASSERT_EQ(t.sync_waits.size(), 1u);
  EXPECT_EQ(t.sync_waits.record_correlation[0], 2);
  EXPECT_EQ(t.sync_waits.wait_on_stream[0], 20);
  const RankCriticalPath p = critical_path(t, windows_of(t, "ProfilerStep"), 10, true);
  ASSERT_EQ(p.steps.size(), 1u);
  const StepCriticalPath& s = p.steps[0];
  // launch 10 -> fft 30..1030 -> (sync) add 1040..1540: the launch delay is fft's 20 us only. With
  // add's launch edge (100 -> 1040) the host's busy 95 us before it would make a longer path.
  EXPECT_EQ(s.hta_bound_by_ns[static_cast<size_t>(BoundBy::kGpuComputeBound)], 1'500'000);
  EXPECT_EQ(s.hta_bound_by_ns[static_cast<size_t>(BoundBy::kGpuKernelLaunchOverhead)], 20'000);
  bool sync = false;
  for (const PathEvent& e : s.events) {
    if (e.type == PathEdgeType::kSyncDependency && e.device) {
      sync = true;
      EXPECT_EQ(e.from_file_index, 3);
      EXPECT_EQ(e.to_file_index, 8);
    }
  }
  EXPECT_TRUE(sync);
}

}  // namespace
}  // namespace scaleprof::analysis

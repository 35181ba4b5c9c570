// The critical path of each profiled step of one rank (`scaleprof trace critical-path`, issue 23):
// the longest dependency chain through host operators, runtime calls, device work and
// synchronisation, with every segment of it timed, so that the segments add up to the step exactly.
//
// The graph is HTA's (hta/analyzers/critical_path_analysis.py, CPEdgeType): two nodes per event
// (its start and end), plus a source at the step's start and a sink at its end. Edges:
//   operator:     a span of a host event or of device work, and the gaps between nested host events
//                 (the enclosing event's self time);
//   dependency:   consecutive top-level host events on a thread, source/sink to each thread, and
//                 the end of each device event to the sink (HTA's path may end on any node, so a
//                 GPU tail no host call waits for still bounds the step);
//   launch:       runtime call start -> the device event it launched, when the stream was empty at the
//                 launch (else the kernel waited for the stream, not for the launch);
//   kernel-kernel: the previous device event on the stream -> the next one (gap < 1,500 us, HTA's
//                 threshold);
//   sync:         GPU -> CPU: the device event a blocking call waited for -> the call's end
//                 (cudaStreamSynchronize on the stream its cuda_sync record names, else every stream;
//                 cudaDeviceSynchronize every stream; cudaEventSynchronize the work the thread
//                 launched last before its last cudaEventRecord; a call whose own copy ends before
//                 it returns, cudaMemcpy); GPU -> GPU: cudaEventRecord then
//                 cudaStreamWaitEvent on a thread make the next device work launched on another
//                 stream wait for the work recorded.
// The path is chosen as HTA chooses it, the longest path by HTA's weights (dependency and sync
// edges weigh 0, blocking calls' own spans weigh 0 except cudaMemcpyAsync's, which HTA 0.6.1's
// runtime-lock edges weigh in full, the other edges their duration), in one
// topological pass (Kahn's order over the edges, O(V+E)); ties go to the predecessor that arrived
// last, then to the first edge made, so the path does not depend on anything but the trace.
// Unlike HTA every edge of the path is then timed by its real duration (the time between its two
// nodes): the gaps HTA weighs 0 become "idle" (host idle / Python between top-level operators, the
// GPU idle between kernels, after the device work that ends the path) and "waiting for GPU" (a
// blocking call that waited: the work it waited for was still running when it began; named after
// that work; a blocking call that did not wait is host time). The path runs from the step's start
// to its end, so its segments add up to the step.
//
// Window: host events (cpu_op, runtime and driver calls, and the user annotations of collectives,
// gloo's spans; HTA takes no user annotation, whose self time is then idle)
// of positive duration starting in the step, and the device work they launched that starts in it;
// ends past the step are cut at its end, nested events at their parent's end.
// Waiting for another rank needs the other ranks: the report moves, per rank and step,
// min(communication on the path, the rank's wait at the step's matched collectives) from
// communication to waiting for a rank (move_rank_wait), as `trace decompose` does.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event_table.h"

namespace scaleprof::analysis {

// scaleprof's categories of path time.
enum class PathCategory : uint8_t {
  kComputation,     // device work other than communication
  kCommunication,   // communication kernels, host collectives (gloo)
  kHost,            // host operators and runtime calls, kernel launch delay
  kWaitingForGpu,   // blocking synchronisation and copies: the host waits for device work
  kIdle,            // nothing on the path works: host idle / Python, GPU idle between kernels
  kWaitingForRank,  // waiting at a collective for the last rank (set by the report)
};
inline constexpr int kPathCategoryCount = 6;
// "computation", "communication", "host", "waiting_for_gpu", "idle", "waiting_for_rank"
std::string_view path_category_name(PathCategory c);

// HTA's bound_by (CriticalPathAnalysis.get_critical_path_breakdown); kNone is HTA's "" (its
// zero-weight edges).
enum class BoundBy : uint8_t {
  kNone,
  kCpuBound,
  kGpuComputeBound,
  kGpuCommunicationBound,
  kGpuKernelKernelOverhead,
  kGpuKernelLaunchOverhead,
};
inline constexpr int kBoundByCount = 6;
// "", "cpu_bound", "gpu_compute_bound", ...
std::string_view bound_by_name(BoundBy b);

// HTA's CPEdgeType.
enum class PathEdgeType : uint8_t { kOperator, kDependency, kKernelLaunch, kKernelKernel, kSyncDependency };
// "critical_path_operator", ...
std::string_view path_edge_type_name(PathEdgeType t);

// The name of path time that is no event's: "(launch delay)", "(host idle / Python)", ...
std::string_view path_gap_name(PathEdgeType type, bool device);

// A time window to find the path in: a ProfilerStep, or any annotation's instance.
struct PathWindow {
  int64_t step = -1;  // the ProfilerStep's number; another annotation's instance (0 the first); -1 the whole trace
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// Which windows (`trace critical-path --annotation/--instance`; HTA's `annotation` and `instance_id`).
struct PathWindowSpec {
  // "ProfilerStep" (or "ProfilerStep#"): the steps; "": the whole trace, one window from its first
  // event's start to its last event's end (HTA's annotation ""); any other text: the host annotations
  // and operators whose name contains it (HTA matches names so), in order of start.
  std::string annotation = "ProfilerStep";
  // -1: every instance, each a window of its own (instances that start inside an earlier one are
  // left out, as nested or overlapping steps are: each event then lies in one window). Else the
  // instances first..last as one window, from the first one's start to the latest end among them
  // (HTA's instance_id and (start, end)): ProfilerStep numbers for steps, else positions from 0.
  int64_t first = -1;
  int64_t last = -1;
};

// One edge of the path with its event's name and category copied out of the trace (the events table,
// HTA's get_critical_path_breakdown, and the overlay trace).
struct PathEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t hta_weight_ns = 0;
  PathEdgeType type = PathEdgeType::kOperator;
  PathCategory category = PathCategory::kIdle;
  BoundBy bound_by = BoundBy::kNone;
  bool device = false;
  std::string name;  // the event's name (for a wait: the device work waited for); "" none
  std::string cat;   // its category as the file writes it
  int64_t stream = -1;
  // Positions in traceEvents: the event the edge is time of, and the events of its two ends (-1:
  // none, or the window's own start or end); `*_at_end`: the end is that event's end, not its start.
  int64_t file_index = -1;
  int64_t from_file_index = -1;
  int64_t to_file_index = -1;
  bool from_at_end = false;
  bool to_at_end = false;
  // Where a flow drawn along the edge binds to its two events: the end's time, or for an event's end
  // min(1 us, its duration) before it, as HTA draws it (a slice's end is not in it, and viewers read
  // the file's microseconds as doubles, which keep no nanoseconds at today's epoch times).
  int64_t from_flow_ns = 0;
  int64_t to_flow_ns = 0;
};

// One edge of the path.
struct PathSegment {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t hta_weight_ns = 0;  // what HTA weighs it (0 for dependency and sync edges)
  int64_t event = -1;         // row of the event it is time of (the kernel waited for, for a sync); -1 none
  int64_t from_event = -1;    // rows of the events of its two ends; -1 the window's start or end
  int64_t to_event = -1;
  bool from_at_end = false;  // the end is its event's end, not its start
  bool to_at_end = false;
  PathEdgeType type = PathEdgeType::kOperator;
  PathCategory category = PathCategory::kIdle;
  BoundBy bound_by = BoundBy::kNone;
  bool device = false;  // the segment is on a device stream
};

// The path's time on one name.
struct PathItem {
  std::string name;  // operator, kernel, "wait: <kernel>", or "(host idle)" / "(GPU idle)"
  PathCategory category = PathCategory::kIdle;
  BoundBy bound_by = BoundBy::kNone;
  int64_t ns = 0;
  int64_t segments = 0;
};

struct StepCriticalPath {
  int64_t step = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::array<int64_t, kPathCategoryCount> category_ns{};  // adds up to end_ns - start_ns
  std::array<int64_t, kBoundByCount> bound_by_ns{};       // the same time by HTA's bound_by
  int64_t hta_length_ns = 0;                              // the path's length under HTA's weights
  std::array<int64_t, kBoundByCount> hta_bound_by_ns{};   // that length by bound_by (HTA's summary())
  int64_t segments = 0;
  int64_t on_device_ns = 0;       // path time on a device stream
  std::vector<PathItem> top;      // the longest items, longest first (ties by name)
  std::vector<PathEvent> events;  // the path's edges in order, when asked for (critical_path's `events`)

  int64_t duration_ns() const { return end_ns - start_ns; }
  int64_t category(PathCategory c) const { return category_ns[static_cast<size_t>(c)]; }
};

struct RankCriticalPath {
  std::string path;
  bool device = false;  // the rank has device work
  int64_t base_time_ns =
      0;  // baseTimeNanoseconds, added to every time here (0 none): the file's own clock is time - this
  std::vector<StepCriticalPath> steps;
};

// The windows of the rank's ProfilerSteps (every step, the last one included), or only step
// `only_step` when it is >= 0.
std::vector<PathWindow> step_path_windows(const trace::RankTrace& trace, int64_t only_step = -1);

// The windows `spec` names in this rank's trace (none when it names none).
std::vector<PathWindow> path_windows(const trace::RankTrace& trace, const PathWindowSpec& spec);

// The path's segments in each window, in time order (for tests and the Python API).
std::vector<std::vector<PathSegment>> critical_path_segments(const trace::RankTrace& trace,
                                                             const std::vector<PathWindow>& windows);

// The path of each window summed by category, by bound_by, and its `top` longest items; with
// `events`, every edge of it too (StepCriticalPath::events).
RankCriticalPath critical_path(const trace::RankTrace& trace, const std::vector<PathWindow>& windows, int top = 10,
                               bool events = false);

// Moves min(wait_ns, communication on the path) from communication to waiting for a rank; the
// categories still add up to the step. Returns the time moved.
int64_t move_rank_wait(StepCriticalPath* step, int64_t wait_ns);

}  // namespace scaleprof::analysis

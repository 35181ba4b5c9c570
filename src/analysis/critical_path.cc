#include "analysis/critical_path.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analysis/device_events.h"
#include "analysis/kernel_classify.h"
#include "analysis/phases.h"
#include "analysis/profiler_steps.h"
#include "core/run_sort.h"

namespace scaleprof::analysis {

namespace {

using trace::Category;

constexpr int64_t kKernelKernelThresholdNs = 1'500'000;  // HTA's KERNEL_KERNEL_DELAY_THRESHOLD_US
constexpr int64_t kUnreached = std::numeric_limits<int64_t>::min();
constexpr uint32_t kSource = 0;
constexpr uint32_t kSink = 1;
// Context Sync in cuda_sync records: the whole device, not one stream.
constexpr int64_t kContextStream = 4294967295;

// What a runtime call's name says about synchronisation, decided once per name id.
enum class CallKind : uint8_t {
  kOther,
  kSyncAll,
  kSyncStream,
  kSyncEvent,
  kBlockingCopy,
  kBlockingOther,
  kEventRecord,
  kStreamWait
};

CallKind call_kind_of(std::string_view name) {
  auto any = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  if (any({"cudaDeviceSynchronize", "hipDeviceSynchronize"})) return CallKind::kSyncAll;
  if (any({"cudaEventSynchronize", "hipEventSynchronize"})) return CallKind::kSyncEvent;
  if (any({"cudaStreamSynchronize", "hipStreamSynchronize"})) return CallKind::kSyncStream;
  if (any({"cudaMemcpy", "cudaMemcpyAsync", "hipMemcpy", "hipMemcpyAsync", "hipMemcpyWithStream"})) {
    return CallKind::kBlockingCopy;
  }
  if (any({"cudaEventQuery", "hipEventQuery"})) return CallKind::kBlockingOther;
  if (any({"cudaEventRecord", "cudaEventRecordWithFlags", "hipEventRecord"})) return CallKind::kEventRecord;
  if (any({"cudaStreamWaitEvent", "hipStreamWaitEvent"})) return CallKind::kStreamWait;
  return CallKind::kOther;
}

bool blocking(CallKind k) {
  return k == CallKind::kSyncAll || k == CallKind::kSyncStream || k == CallKind::kSyncEvent ||
         k == CallKind::kBlockingCopy || k == CallKind::kBlockingOther;
}

// HTA 0.6.1 weighs a blocking call's span 0 (CPGraph.BLOCKING_SYNC_CALLS) except where its runtime-lock
// chain (`_construct_graph_from_cuda_runtime_events`, CUDA_RUNTIME_EVENTS: cudaHostAlloc,
// cudaLaunchKernel, cudaMemcpyAsync) gives the call a full-weight operator edge instead: of the
// blocking calls, cudaMemcpyAsync (and its HIP name, which scaleprof treats alike).
bool hta_full_weight(std::string_view name) {
  return name == "cudaMemcpyAsync" || name == "hipMemcpyAsync";
}

// Rows of one track, sorted by start (longer first at equal starts, so a parent precedes its child).
struct TrackRows {
  uint32_t track = 0;
  int64_t stream = trace::kNone;  // device tracks: the stream argument of their events
  std::vector<uint32_t> rows;
};

struct Edge {
  uint32_t src = 0;
  uint32_t dst = 0;
  int64_t weight = 0;  // HTA's
  int64_t event = -1;
  PathEdgeType type = PathEdgeType::kOperator;
  PathCategory category = PathCategory::kIdle;
  BoundBy bound_by = BoundBy::kNone;
  bool device = false;
  bool dropped = false;  // taken out of the graph after it was made (see the GPU -> GPU syncs)
};

// Everything about the rank that does not depend on the window, found once.
class RankGraphSource {
 public:
  explicit RankGraphSource(const trace::RankTrace& t)
      : t_(t),
        launch_(launch_rows(t)),
        local_(t.events.size(), -1),
        roles_(t.strings),
        types_(t.strings),
        call_kinds_(t.strings.size(), 0xFF) {
    const trace::EventTable& ev = t.events;
    std::vector<uint32_t> host, device, annotations;
    for (size_t i = 0; i < ev.size(); ++i) {
      if (ev.phase[i] != trace::Phase::kComplete || ev.dur[i] <= 0) continue;
      const Category c = ev.cat[i];
      if (is_stream_work(c)) {
        device.push_back(static_cast<uint32_t>(i));
      } else if (trace::is_runtime_category(c) || c == Category::kCpuOp ||
                 (c == Category::kUserAnnotation && roles_.of(ev.name[i], c) == HostRole::kCommunication)) {
        // HTA's nodes: operators and runtime calls, no user annotations (their self time is the
        // Python between the operators they enclose); the host spans of collectives (gloo) are kept:
        // they are the communication of a CPU run.
        host.push_back(static_cast<uint32_t>(i));
      } else if (c == Category::kUserAnnotation) {
        annotations.push_back(static_cast<uint32_t>(i));
      } else if (c == Category::kCudaSync && ev.correlation[i] != trace::kNone) {
        sync_stream_.emplace_back(ev.correlation[i], ev.stream[i]);
      }
    }
    // As HTA: the backward pass (the one thread with "autograd" host events) is put on the forward
    // thread (the one with "forward" events), so that the path runs through it where the forward
    // thread waits for it (`## backward ##` encloses nothing on its own thread).
    annotations.insert(annotations.end(), host.begin(), host.end());
    const std::optional<uint32_t> fwd = only_track_with(annotations, "forward");
    const std::optional<uint32_t> bwd = only_track_with(annotations, "autograd");
    if (fwd && bwd && *fwd != *bwd) {
      remap_from_ = *bwd;
      remap_to_ = *fwd;
    }
    host_ = group(host, false);
    device_ = group(device, true);
    std::sort(sync_stream_.begin(), sync_stream_.end());
    // Event waits (HTA's `wait_on_cuda_event_record_corr_id`): the cudaEventRecord calls by
    // correlation, and per waiting call (by its correlation) the record it waits on.
    for (const TrackRows& track : host_) {
      for (uint32_t r : track.rows) {
        if (trace::is_runtime_category(ev.cat[r]) && ev.correlation[r] != trace::kNone &&
            call_kind(r) == CallKind::kEventRecord) {
          records_.emplace_back(ev.correlation[r], ev.ts[r]);
        }
      }
    }
    std::sort(records_.begin(), records_.end());
    const trace::SyncWaitTable& w = t.sync_waits;
    for (size_t i = 0; i < w.size(); ++i) {
      const uint32_t row = w.event[i];
      if (ev.correlation[row] == trace::kNone) continue;
      const int64_t pid = t.tracks.pid[ev.track[row]];
      waits_.push_back({ev.correlation[row], w.record_correlation[i], w.wait_on_stream[i], ev.stream[row], pid});
    }
    std::sort(waits_.begin(), waits_.end(),
              [](const EventWait& a, const EventWait& b) { return a.correlation < b.correlation; });
  }

  std::vector<PathSegment> path(const PathWindow& w);

 private:
  // Rows bucketed by track (in track order), each bucket by start, longer first: Kineto writes a
  // thread's events almost in this order, so each costs a pass and a merge or two (core/run_sort.h).
  std::vector<TrackRows> group(const std::vector<uint32_t>& rows, bool device) const {
    const trace::EventTable& ev = t_.events;
    std::vector<TrackRows> by_track(t_.tracks.size());
    for (uint32_t r : rows) {
      const uint32_t track = !device && ev.track[r] == remap_from_ ? remap_to_ : ev.track[r];
      by_track[track].rows.push_back(r);
    }
    std::vector<TrackRows> out;
    for (size_t k = 0; k < by_track.size(); ++k) {
      TrackRows& b = by_track[k];
      if (b.rows.empty()) continue;
      stable_sort_runs(b.rows.begin(), b.rows.end(), [&](uint32_t x, uint32_t y) {
        return ev.ts[x] < ev.ts[y] || (ev.ts[x] == ev.ts[y] && ev.dur[x] > ev.dur[y]);
      });
      b.track = static_cast<uint32_t>(k);
      b.stream = device ? static_cast<int64_t>(ev.stream[b.rows.front()]) : trace::kNone;
      out.push_back(std::move(b));
    }
    return out;
  }
  // The one track whose cpu_op / user_annotation names contain `word`, if exactly one has any.
  std::optional<uint32_t> only_track_with(const std::vector<uint32_t>& host, std::string_view word) const {
    const trace::EventTable& ev = t_.events;
    std::vector<int8_t> has(t_.strings.size(), -1);  // by name id: -1 unknown, 0 no, 1 yes
    std::optional<uint32_t> found;
    for (uint32_t r : host) {
      if (!trace::is_cpu_op_category(ev.cat[r])) continue;
      int8_t& h = has[ev.name[r]];
      if (h < 0) h = t_.name(r).find(word) != std::string_view::npos ? 1 : 0;
      if (h == 0) continue;
      if (found && *found != ev.track[r]) return std::nullopt;
      found = ev.track[r];
    }
    return found;
  }
  CallKind call_kind(uint32_t row) {
    uint8_t& k = call_kinds_[t_.events.name[row]];
    if (k == 0xFF) k = static_cast<uint8_t>(call_kind_of(t_.name(row)));
    return static_cast<CallKind>(k);
  }

  const trace::RankTrace& t_;
  std::vector<int64_t> launch_;
  std::vector<int32_t> local_;  // row -> local event of the window being built, -1 outside it
  HostRoles roles_;
  KernelNameTypes types_;
  std::vector<uint8_t> call_kinds_;
  std::vector<std::pair<int64_t, int64_t>> sync_stream_;  // (correlation, stream) of the cuda_sync records
  // A cudaEventSynchronize's or cudaStreamWaitEvent's wait, from its cuda_sync record.
  struct EventWait {
    int64_t correlation = 0;         // the waiting runtime call's
    int64_t record_correlation = 0;  // the cudaEventRecord call's
    int64_t recorded_stream = 0;     // the stream the event was recorded on (kNone: unknown)
    int64_t waiting_stream = 0;      // Stream Wait Event: the stream made to wait
    int64_t device = 0;              // the record's pid: the device
  };
  std::vector<EventWait> waits_;                      // by correlation
  std::vector<std::pair<int64_t, int64_t>> records_;  // (correlation, ts) of the cudaEventRecord calls
  const EventWait* wait_of(uint32_t row) const {
    const int64_t c = t_.events.correlation[row];
    if (c == trace::kNone) return nullptr;
    const auto it = std::lower_bound(waits_.begin(), waits_.end(), c,
                                     [](const EventWait& w, int64_t v) { return w.correlation < v; });
    return it != waits_.end() && it->correlation == c ? &*it : nullptr;
  }
  std::optional<int64_t> record_time(int64_t correlation) const {
    const auto it = std::lower_bound(records_.begin(), records_.end(),
                                     std::make_pair(correlation, std::numeric_limits<int64_t>::min()));
    if (it == records_.end() || it->first != correlation) return std::nullopt;
    return it->second;
  }
  std::vector<TrackRows> host_, device_;
  // One step's graph, kept for the next step.
  struct Scratch {
    std::vector<uint32_t> row_of;
    std::vector<int64_t> begin, finish;
    std::vector<Edge> edges;
    std::vector<std::vector<size_t>> runtime_calls;
    std::vector<std::vector<std::pair<int64_t, size_t>>> stream_work;
    std::vector<std::vector<size_t>> latest;                // per stream: the work of its prefix that ends last
    std::vector<std::pair<size_t, size_t>> blocking_edges;  // (edge, local blocking call)
    std::vector<int64_t> launched, waited, dist, pred, entry_edge;
    std::vector<uint32_t> first, out, indegree, fill, ready;
  } scratch_;
  uint32_t remap_from_ = std::numeric_limits<uint32_t>::max();  // the backward thread's track, put on
  uint32_t remap_to_ = 0;                                       // the forward thread's
};

// The graph of one window and its longest path.
std::vector<PathSegment> RankGraphSource::path(const PathWindow& w) {
  const trace::EventTable& ev = t_.events;
  // The buffers are the rank's, reused from step to step (fresh pages for each step's graph were a
  // tenth of the run on df_index_resolver).
  Scratch& b = scratch_;
  std::vector<uint32_t>& row_of = b.row_of;
  std::vector<int64_t>& begin = b.begin;  // node times of each local event, clipped
  std::vector<int64_t>& finish = b.finish;
  std::vector<Edge>& edges = b.edges;
  row_of.clear();
  begin.clear();
  finish.clear();
  edges.clear();
  auto start = [](size_t k) { return static_cast<uint32_t>(2 + 2 * k); };
  auto end = [](size_t k) { return static_cast<uint32_t>(3 + 2 * k); };
  auto time = [&](uint32_t node) {
    if (node == kSource) return w.start_ns;
    if (node == kSink) return w.end_ns;
    const size_t k = (node - 2) / 2;
    return node % 2 == 0 ? begin[k] : finish[k];
  };
  auto add_local = [&](uint32_t row, int64_t s, int64_t e) {
    local_[row] = static_cast<int32_t>(row_of.size());
    row_of.push_back(row);
    begin.push_back(s);
    finish.push_back(e);
    return row_of.size() - 1;
  };
  // Edges never run back in time, so the path's segments add up to the window.
  auto add_edge = [&](uint32_t src, uint32_t dst, PathEdgeType type, PathCategory category, BoundBy bound_by,
                      bool zero_weight, int64_t event, bool device = false) {
    const int64_t dt = time(dst) - time(src);
    if (dt < 0) return;
    edges.push_back({src, dst, zero_weight ? 0 : dt, event, type, category, bound_by, device});
  };
  add_edge(kSource, kSink, PathEdgeType::kDependency, PathCategory::kIdle, BoundBy::kNone, true, -1);

  // The host: per thread, the nesting of its events (operator edges) and its top-level chain
  // (dependency edges), from the source to the sink.
  std::vector<std::vector<size_t>>& runtime_calls = b.runtime_calls;  // per host track, its runtime calls in order
  runtime_calls.resize(host_.size());
  size_t host_track = 0;
  // Self time of local host event k, from node src to node dst. A blocking call's edges are
  // classified once the device work it waited for is known (below).
  std::vector<std::pair<size_t, size_t>>& blocking_edges = b.blocking_edges;
  blocking_edges.clear();
  auto self_edge = [&](uint32_t src, uint32_t dst, size_t k) {
    const uint32_t row = row_of[k];
    const Category c = ev.cat[row];
    if (trace::is_runtime_category(c) && blocking(call_kind(row))) {
      const size_t before = edges.size();
      add_edge(src, dst, PathEdgeType::kOperator, PathCategory::kHost, BoundBy::kCpuBound,
               !hta_full_weight(t_.name(row)), row);
      if (edges.size() > before) blocking_edges.emplace_back(before, k);
      return;
    }
    const bool comm = roles_.of(ev.name[row], c) == HostRole::kCommunication;
    add_edge(src, dst, PathEdgeType::kOperator, comm ? PathCategory::kCommunication : PathCategory::kHost,
             BoundBy::kCpuBound, false, row);
  };
  for (const TrackRows& track : host_) {
    runtime_calls[host_track].clear();
    std::vector<size_t>& calls_of_track = runtime_calls[host_track++];
    auto it = std::lower_bound(track.rows.begin(), track.rows.end(), w.start_ns,
                               [&](uint32_t r, int64_t ts) { return ev.ts[r] < ts; });
    struct Frame {
      size_t k;
      uint32_t cursor;
    };
    std::vector<Frame> stack;
    uint32_t thread_cursor = kSource;
    auto pop = [&] {
      const Frame f = stack.back();
      stack.pop_back();
      self_edge(f.cursor, end(f.k), f.k);
      (stack.empty() ? thread_cursor : stack.back().cursor) = end(f.k);
    };
    for (; it != track.rows.end() && ev.ts[*it] < w.end_ns; ++it) {
      const uint32_t row = *it;
      while (!stack.empty() && finish[stack.back().k] <= ev.ts[row]) pop();
      const int64_t limit = stack.empty() ? w.end_ns : finish[stack.back().k];
      const size_t k = add_local(row, ev.ts[row], std::min(ev.end(row), limit));
      if (stack.empty()) {
        add_edge(thread_cursor, start(k), PathEdgeType::kDependency, PathCategory::kIdle, BoundBy::kNone, true, -1);
      } else {
        self_edge(stack.back().cursor, start(k), stack.back().k);  // the parent's self time up to this child
      }
      stack.push_back({k, start(k)});
      if (trace::is_runtime_category(ev.cat[row])) calls_of_track.push_back(k);
    }
    while (!stack.empty()) pop();
    add_edge(thread_cursor, kSink, PathEdgeType::kDependency, PathCategory::kIdle, BoundBy::kNone, true, -1);
  }

  // Device work launched in the window: spans, kernel-kernel and launch edges.
  const size_t host_count = row_of.size();
  std::vector<int64_t>& launched = b.launched;  // local runtime call -> the local device event it launched
  launched.assign(host_count, -1);
  // Per device event (local k - host_count): the launch or kernel-kernel edge that brings it onto
  // the graph, -1 none.
  std::vector<int64_t>& entry_edge = b.entry_edge;
  entry_edge.clear();
  auto& stream_work = b.stream_work;  // per device track: (launch start, local)
  stream_work.resize(device_.size());
  size_t device_track = 0;
  for (const TrackRows& track : device_) {
    stream_work[device_track].clear();
    std::vector<std::pair<int64_t, size_t>>& work_of_track = stream_work[device_track++];
    auto it = std::lower_bound(track.rows.begin(), track.rows.end(), w.start_ns,
                               [&](uint32_t r, int64_t ts) { return ev.ts[r] < ts; });
    int64_t prev = -1;
    for (; it != track.rows.end() && ev.ts[*it] < w.end_ns; ++it) {
      const uint32_t row = *it;
      const int64_t launcher = launch_[row];
      if (launcher < 0 || local_[static_cast<size_t>(launcher)] < 0) continue;
      const auto lk = static_cast<size_t>(local_[static_cast<size_t>(launcher)]);
      const size_t k = add_local(row, ev.ts[row], std::min(ev.end(row), w.end_ns));
      const KernelType type =
          ev.cat[row] == Category::kKernel ? types_.of(ev.name[row]) : classify_device_event(ev.cat[row], t_.name(row));
      const bool comm = type == KernelType::kCommunication;
      add_edge(start(k), end(k), PathEdgeType::kOperator,
               comm ? PathCategory::kCommunication : PathCategory::kComputation,
               comm ? BoundBy::kGpuCommunicationBound : BoundBy::kGpuComputeBound, false, row, true);
      // Device work reaches the step's end on its own (HTA's longest path may end on any node): a
      // kernel the host never waits for still bounds the step when it ends last.
      add_edge(end(k), kSink, PathEdgeType::kDependency, PathCategory::kIdle, BoundBy::kNone, true, -1, true);
      // As HTA: the launch delays the kernel when the stream was empty when the call began (its queue
      // length 0, over the whole trace: the work before it on the stream may be outside the window);
      // a kernel queued behind another waits for that one instead (kernel-kernel, when that one is on
      // the graph and the gap is under HTA's threshold; else, where HTA adds no edge, a zero-weight
      // edge from the launch keeps the kernel on the graph: "queued behind earlier work").
      const bool queued = it != track.rows.begin() && ev.end(*std::prev(it)) > ev.ts[launcher];
      const int64_t gap = prev >= 0 ? begin[k] - finish[static_cast<size_t>(prev)] : -1;
      entry_edge.push_back(static_cast<int64_t>(edges.size()));  // the edge made next, if it is made
      if (queued && prev >= 0 && gap >= 0 && gap < kKernelKernelThresholdNs) {
        add_edge(end(static_cast<size_t>(prev)), start(k), PathEdgeType::kKernelKernel, PathCategory::kIdle,
                 BoundBy::kGpuKernelKernelOverhead, false, -1, true);
      } else if (queued) {
        add_edge(start(lk), start(k), PathEdgeType::kKernelLaunch, PathCategory::kIdle, BoundBy::kNone, true, -1, true);
      } else {
        add_edge(start(lk), start(k), PathEdgeType::kKernelLaunch, PathCategory::kHost,
                 BoundBy::kGpuKernelLaunchOverhead, false, -1);
      }
      if (static_cast<size_t>(entry_edge.back()) >= edges.size()) entry_edge.back() = -1;
      launched[lk] = static_cast<int64_t>(k);
      work_of_track.emplace_back(begin[lk], k);
      prev = static_cast<int64_t>(k);
    }
  }

  // Per stream, for each prefix of its work (in launch order), the work that ends last: a sync finds
  // what it waited for with one binary search per stream instead of a walk back over every launch.
  // The running maximum of the ends is non-decreasing, so the prefix whose latest end is still <=
  // the call's end is found by upper_bound; on a stream whose work does not overlap (a stream runs
  // its work in order) that is exactly the work launched before the call that ended last by then.
  auto& latest = b.latest;
  latest.resize(device_.size());
  for (size_t s = 0; s < device_.size(); ++s) {
    latest[s].clear();
    for (const auto& [launch, k] : stream_work[s]) {
      latest[s].push_back(latest[s].empty() || finish[k] > finish[latest[s].back()] ? k : latest[s].back());
    }
  }

  // Synchronisation: GPU -> CPU at blocking calls, GPU -> GPU at cudaStreamWaitEvent.
  std::vector<int64_t>& waited = b.waited;  // blocking call -> the device event it waited for
  waited.assign(host_count, -1);
  auto wait_on = [&](size_t x, size_t d) {
    if (finish[d] > finish[x]) return;  // it returned before the work ended: it did not wait for it
    // As HTA, the edge is made whenever the call returned after the work: it weighs 0 and may carry
    // the path. It is waiting for the GPU only where the work was still running when the call
    // began; else the host was doing something else meanwhile (idle on the path).
    const bool waits = finish[d] > begin[x];
    add_edge(end(d), end(x), PathEdgeType::kSyncDependency, waits ? PathCategory::kWaitingForGpu : PathCategory::kIdle,
             BoundBy::kNone, true, waits ? static_cast<int64_t>(row_of[d]) : -1);
    if (waits) waited[x] = static_cast<int64_t>(d);
  };
  // The device work launched before local call x that ended last by its end (on `stream` when known).
  auto last_ended = [&](size_t x, int64_t stream) {
    int64_t best = -1;
    for (size_t s = 0; s < device_.size(); ++s) {
      if (stream != trace::kNone && stream != kContextStream && device_[s].stream != stream) continue;
      const auto& work = stream_work[s];
      const size_t prefix = static_cast<size_t>(
          std::lower_bound(work.begin(), work.end(), std::make_pair(begin[x], size_t{0})) - work.begin());
      const auto& l = latest[s];
      const auto p = std::upper_bound(l.begin(), l.begin() + static_cast<std::ptrdiff_t>(prefix), finish[x],
                                      [&](int64_t f, size_t k) { return f < finish[k]; });
      if (p == l.begin()) continue;
      const size_t k = *std::prev(p);
      if (best < 0 || finish[k] > finish[static_cast<size_t>(best)]) best = static_cast<int64_t>(k);
    }
    return best;
  };
  // The device work an event wait waits for, as HTA finds it: the last work launched on the stream
  // the event was recorded on (on the wait's device) before the cudaEventRecord call; -1 unknown or
  // outside the window.
  auto recorded_work = [&](const EventWait& wait) {
    const std::optional<int64_t> at = record_time(wait.record_correlation);
    if (!at || wait.recorded_stream == trace::kNone) return int64_t{-1};
    int64_t best = -1, best_launch = 0;
    for (size_t s = 0; s < device_.size(); ++s) {
      if (device_[s].stream != wait.recorded_stream || t_.tracks.pid[device_[s].track] != wait.device) continue;
      const auto& work = stream_work[s];
      const auto p = std::lower_bound(work.begin(), work.end(), std::make_pair(*at, size_t{0}));
      if (p == work.begin()) continue;
      const auto& [launch, k] = *std::prev(p);
      if (best < 0 || launch > best_launch) best = static_cast<int64_t>(k), best_launch = launch;
    }
    return best;
  };
  for (const std::vector<size_t>& calls : runtime_calls) {
    int64_t last_launched = -1, recorded = -1, pending = -1, pending_stream = trace::kNone;
    for (size_t x : calls) {
      const uint32_t row = row_of[x];
      const CallKind kind = call_kind(row);
      const EventWait* wait = kind == CallKind::kSyncEvent || kind == CallKind::kStreamWait ? wait_of(row) : nullptr;
      const int64_t waited_work = wait != nullptr ? recorded_work(*wait) : -1;
      if (kind == CallKind::kSyncEvent && waited_work >= 0) {
        wait_on(x, static_cast<size_t>(waited_work));
      } else if (kind == CallKind::kStreamWait && waited_work >= 0) {
        pending = waited_work;
        pending_stream = wait->waiting_stream;
      } else if (kind == CallKind::kSyncAll || kind == CallKind::kSyncStream ||
                 (kind == CallKind::kSyncEvent && recorded < 0)) {
        int64_t stream = trace::kNone;
        if (kind == CallKind::kSyncStream && ev.correlation[row] != trace::kNone) {
          const auto s = std::lower_bound(sync_stream_.begin(), sync_stream_.end(),
                                          std::make_pair(ev.correlation[row], std::numeric_limits<int64_t>::min()));
          if (s != sync_stream_.end() && s->first == ev.correlation[row]) stream = s->second;
        }
        const int64_t best = last_ended(x, stream);
        if (best >= 0) wait_on(x, static_cast<size_t>(best));
      } else if (kind == CallKind::kSyncEvent) {
        // cudaEventSynchronize waits for the work recorded by the thread's last cudaEventRecord
        // (HTA: the launch before the record its Event Sync names; see docs/differences-from-hta.md).
        wait_on(x, static_cast<size_t>(recorded));
      } else if (kind == CallKind::kBlockingCopy && launched[x] >= 0) {
        wait_on(x, static_cast<size_t>(launched[x]));
      } else if (kind == CallKind::kEventRecord) {
        recorded = last_launched;
      } else if (kind == CallKind::kStreamWait) {
        pending = recorded;
        pending_stream = trace::kNone;
      }
      if (launched[x] >= 0) {
        const auto d = static_cast<size_t>(launched[x]);
        // The next work launched on the stream made to wait (HTA: on the waiting stream, from this
        // thread); without the wait's record, the next work launched on another stream.
        const bool waits_here = pending_stream != trace::kNone ? ev.stream[row_of[d]] == pending_stream : true;
        if (pending >= 0 && waits_here && ev.track[row_of[static_cast<size_t>(pending)]] != ev.track[row_of[d]]) {
          const auto src = static_cast<size_t>(pending);
          const size_t before = edges.size();
          add_edge(end(src), start(d), PathEdgeType::kSyncDependency, PathCategory::kIdle, BoundBy::kNone, true, -1,
                   true);
          // As HTA: work that waited for another stream's work still running when it was launched
          // did not wait for its launch (no launch edge), nor for the work before it on its own
          // stream unless that ended after what it waited for (no kernel-kernel edge).
          const int64_t e = edges.size() > before ? entry_edge[d - host_count] : -1;
          if (e >= 0) {
            Edge& entry = edges[static_cast<size_t>(e)];
            const bool launch = entry.type == PathEdgeType::kKernelLaunch;
            if ((launch && finish[src] >= begin[x]) || (!launch && finish[src] >= time(entry.src))) {
              entry.dropped = true;
            }
          }
        }
        if (waits_here) {
          pending = -1;
          pending_stream = trace::kNone;
        }
        last_launched = launched[x];
      }
    }
  }
  // A blocking call that waited is waiting for the GPU (HTA's zero weight: bound_by ""); one that
  // did not wait was host time like any call.
  for (const auto& [edge, x] : blocking_edges) {
    if (waited[x] < 0) continue;
    Edge& e = edges[edge];
    e.category = PathCategory::kWaitingForGpu;
    if (e.weight == 0) e.bound_by = BoundBy::kNone;
  }

  // The longest path by HTA's weights: Kahn's order over the edges, one pass.
  const size_t nodes = 2 + 2 * row_of.size();
  std::vector<uint32_t>& first = b.first;
  std::vector<uint32_t>& out = b.out;
  std::vector<uint32_t>& indegree = b.indegree;
  first.assign(nodes + 1, 0);
  out.resize(edges.size());
  indegree.assign(nodes, 0);
  for (const Edge& e : edges) {
    if (e.dropped) continue;
    ++first[e.src + 1];
    ++indegree[e.dst];
  }
  for (size_t v = 0; v < nodes; ++v) first[v + 1] += first[v];
  {
    std::vector<uint32_t>& fill = b.fill;
    fill.assign(first.begin(), first.end() - 1);
    for (size_t i = 0; i < edges.size(); ++i) {
      if (!edges[i].dropped) out[fill[edges[i].src]++] = static_cast<uint32_t>(i);
    }
  }
  std::vector<int64_t>& dist = b.dist;
  std::vector<int64_t>& pred = b.pred;
  dist.assign(nodes, kUnreached);
  pred.assign(nodes, -1);
  dist[kSource] = 0;
  std::vector<uint32_t>& ready = b.ready;
  ready.clear();
  for (uint32_t v = 0; v < nodes; ++v) {
    if (indegree[v] == 0) ready.push_back(v);
  }
  for (size_t next = 0; next < ready.size(); ++next) {
    const uint32_t u = ready[next];
    for (uint32_t j = first[u]; j < first[u + 1]; ++j) {
      const Edge& e = edges[out[j]];
      if (dist[u] != kUnreached) {
        const int64_t cand = dist[u] + e.weight;
        // Ties: the predecessor that arrived last, then the first edge made.
        const bool better = cand > dist[e.dst] || (cand == dist[e.dst] && pred[e.dst] >= 0 &&
                                                   time(u) > time(edges[static_cast<size_t>(pred[e.dst])].src));
        if (better) {
          dist[e.dst] = cand;
          pred[e.dst] = out[j];
        }
      }
      if (--indegree[e.dst] == 0) ready.push_back(e.dst);
    }
  }

  std::vector<PathSegment> segments;
  for (uint32_t v = kSink; v != kSource && pred[v] >= 0;) {
    const Edge& e = edges[static_cast<size_t>(pred[v])];
    int64_t event = e.event;
    if (e.category == PathCategory::kWaitingForGpu && e.type == PathEdgeType::kOperator && event >= 0) {
      const size_t x = static_cast<size_t>(local_[static_cast<size_t>(event)]);
      if (waited[x] >= 0) event = row_of[static_cast<size_t>(waited[x])];
    }
    auto event_of = [&](uint32_t node) {
      return node < 2 ? int64_t{-1} : static_cast<int64_t>(row_of[(node - 2) / 2]);
    };
    segments.push_back({time(e.src), time(e.dst), e.weight, event, event_of(e.src), event_of(e.dst),
                        e.src >= 2 && e.src % 2 == 1, e.dst >= 2 && e.dst % 2 == 1, e.type, e.category, e.bound_by,
                        e.device});
    v = e.src;
  }
  std::reverse(segments.begin(), segments.end());
  for (uint32_t row : row_of) local_[row] = -1;
  return segments;
}

PathEvent path_event(const trace::RankTrace& trace, const PathSegment& seg) {
  const trace::EventTable& ev = trace.events;
  PathEvent e;
  e.start_ns = seg.start_ns;
  e.end_ns = seg.end_ns;
  e.hta_weight_ns = seg.hta_weight_ns;
  e.type = seg.type;
  e.category = seg.category;
  e.bound_by = seg.bound_by;
  e.device = seg.device;
  auto file_index = [&](int64_t row) {
    return row < 0 ? int64_t{-1} : static_cast<int64_t>(ev.file_index[static_cast<size_t>(row)]);
  };
  if (seg.event >= 0) {
    const auto row = static_cast<size_t>(seg.event);
    e.name = std::string(trace.name(row));
    e.cat = std::string(trace.strings.view(ev.cat_name[row]));
    e.stream = ev.stream[row] == trace::kNone ? -1 : static_cast<int64_t>(ev.stream[row]);
  }
  e.file_index = file_index(seg.event);
  e.from_file_index = file_index(seg.from_event);
  e.to_file_index = file_index(seg.to_event);
  e.from_at_end = seg.from_at_end;
  e.to_at_end = seg.to_at_end;
  auto flow_time = [&](int64_t row, bool at_end, int64_t t) {
    return row >= 0 && at_end ? t - std::min<int64_t>(1000, ev.dur[static_cast<size_t>(row)]) : t;
  };
  e.from_flow_ns = flow_time(seg.from_event, seg.from_at_end, seg.start_ns);
  e.to_flow_ns = flow_time(seg.to_event, seg.to_at_end, seg.end_ns);
  return e;
}

}  // namespace

std::vector<std::vector<PathSegment>> critical_path_segments(const trace::RankTrace& trace,
                                                             const std::vector<PathWindow>& windows) {
  RankGraphSource source(trace);
  std::vector<std::vector<PathSegment>> out;
  out.reserve(windows.size());
  for (const PathWindow& w : windows) out.push_back(source.path(w));
  return out;
}

RankCriticalPath critical_path(const trace::RankTrace& trace, const std::vector<PathWindow>& windows, int top,
                               bool events) {
  RankCriticalPath out;
  out.path = trace.path;
  out.base_time_ns = trace.metadata.base_time_ns.value_or(0);
  for (size_t i = 0; i < trace.events.size() && !out.device; ++i) out.device = is_stream_work(trace.events.cat[i]);
  RankGraphSource source(trace);
  for (const PathWindow& w : windows) {
    StepCriticalPath s;
    s.step = w.step;
    s.start_ns = w.start_ns;
    s.end_ns = w.end_ns;
    // Time per (category, name): the name id, or -1 for the unnamed idle kinds.
    std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> items;
    const std::vector<PathSegment> segments = source.path(w);
    if (events) s.events.reserve(segments.size());
    for (const PathSegment& seg : segments) {
      const int64_t dt = seg.end_ns - seg.start_ns;
      if (events) s.events.push_back(path_event(trace, seg));
      s.category_ns[static_cast<size_t>(seg.category)] += dt;
      s.bound_by_ns[static_cast<size_t>(seg.bound_by)] += dt;
      s.hta_length_ns += seg.hta_weight_ns;
      s.hta_bound_by_ns[static_cast<size_t>(seg.bound_by)] += seg.hta_weight_ns;
      if (seg.device) s.on_device_ns += dt;
      ++s.segments;
      if (dt == 0) continue;
      // Launch delays and stream waits are kept apart from the idle gaps by their edge type.
      const uint64_t name = seg.event >= 0
                                ? trace.events.name[static_cast<size_t>(seg.event)]
                                : (0xFFFFFFF0u | static_cast<uint32_t>(seg.type) << 1 | (seg.device ? 1 : 0));
      const uint64_t kind = static_cast<uint64_t>(seg.category) << 4 | static_cast<uint64_t>(seg.bound_by);
      auto& [ns, count] = items[kind << 32 | name];
      ns += dt;
      ++count;
    }
    for (const auto& [key, value] : items) {
      PathItem item;
      item.category = static_cast<PathCategory>(key >> 36);
      item.bound_by = static_cast<BoundBy>((key >> 32) & 0xF);
      const auto name = static_cast<uint32_t>(key);
      if (name >= 0xFFFFFFF0u) {
        item.name = path_gap_name(static_cast<PathEdgeType>((name & 0xF) >> 1), (name & 1) != 0);
      } else {
        item.name = std::string(trace.strings.view(name));
        if (item.category == PathCategory::kWaitingForGpu) item.name = "wait for: " + item.name;
      }
      item.ns = value.first;
      item.segments = value.second;
      s.top.push_back(std::move(item));
    }
    std::sort(s.top.begin(), s.top.end(), [](const PathItem& a, const PathItem& b) {
      return std::tie(b.ns, a.name, a.category) < std::tie(a.ns, b.name, b.category);
    });
    if (top > 0 && s.top.size() > static_cast<size_t>(top)) s.top.resize(static_cast<size_t>(top));
    out.steps.push_back(std::move(s));
  }
  return out;
}

int64_t move_rank_wait(StepCriticalPath* step, int64_t wait_ns) {
  int64_t& comm = step->category_ns[static_cast<size_t>(PathCategory::kCommunication)];
  const int64_t moved = std::clamp<int64_t>(wait_ns, 0, comm);
  comm -= moved;
  step->category_ns[static_cast<size_t>(PathCategory::kWaitingForRank)] += moved;
  return moved;
}

}  // namespace scaleprof::analysis

// The critical path's vocabulary (the names of its categories, bounds and edges, as HTA writes them)
// and its windows: which spans of a rank's trace each path is taken over (the whole trace, every
// ProfilerStep#N, or the instances of a user annotation). critical_path.cc builds the graph of a window.
#include <algorithm>
#include <limits>
#include <tuple>

#include "analysis/critical_path.h"
#include "analysis/profiler_steps.h"

namespace scaleprof::analysis {

std::string_view path_category_name(PathCategory c) {
  switch (c) {
    case PathCategory::kComputation:
      return "computation";
    case PathCategory::kCommunication:
      return "communication";
    case PathCategory::kHost:
      return "host";
    case PathCategory::kWaitingForGpu:
      return "waiting_for_gpu";
    case PathCategory::kIdle:
      return "idle";
    case PathCategory::kWaitingForRank:
      break;
  }
  return "waiting_for_rank";
}

std::string_view bound_by_name(BoundBy b) {
  switch (b) {
    case BoundBy::kNone:
      return "";
    case BoundBy::kCpuBound:
      return "cpu_bound";
    case BoundBy::kGpuComputeBound:
      return "gpu_compute_bound";
    case BoundBy::kGpuCommunicationBound:
      return "gpu_communication_bound";
    case BoundBy::kGpuKernelKernelOverhead:
      return "gpu_kernel_kernel_overhead";
    case BoundBy::kGpuKernelLaunchOverhead:
      break;
  }
  return "gpu_kernel_launch_overhead";
}

std::string_view path_edge_type_name(PathEdgeType t) {
  switch (t) {
    case PathEdgeType::kOperator:
      return "critical_path_operator";
    case PathEdgeType::kDependency:
      return "critical_path_dependency";
    case PathEdgeType::kKernelLaunch:
      return "critical_path_kernel_launch_delay";
    case PathEdgeType::kKernelKernel:
      return "critical_path_kernel_kernel_delay";
    case PathEdgeType::kSyncDependency:
      break;
  }
  return "critical_path_sync_dependency";
}

std::string_view path_gap_name(PathEdgeType type, bool device) {
  return type == PathEdgeType::kKernelLaunch   ? (device ? "(queued behind earlier work)" : "(launch delay)")
         : type == PathEdgeType::kKernelKernel ? "(GPU idle between kernels)"
         : device && type == PathEdgeType::kSyncDependency ? "(waiting for another stream)"
         : device                                          ? "(after the device work)"
                                                           : "(host idle / Python)";
}

std::vector<PathWindow> step_path_windows(const trace::RankTrace& trace, int64_t only_step) {
  std::vector<PathWindow> out;
  for (const ProfilerStepWindow& s : find_profiler_steps(trace).steps) {
    if (only_step < 0 || s.step == only_step) out.push_back({s.step, s.start_ns, s.end_ns});
  }
  return out;
}

std::vector<PathWindow> path_windows(const trace::RankTrace& trace, const PathWindowSpec& spec) {
  const trace::EventTable& ev = trace.events;
  std::vector<PathWindow> out;
  if (spec.annotation.empty()) {  // the whole trace
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < ev.size(); ++i) {
      if (ev.phase[i] != trace::Phase::kComplete) continue;
      lo = std::min(lo, ev.ts[i]);
      hi = std::max(hi, ev.end(i));
    }
    if (lo < hi) out.push_back({-1, lo, hi});
    return out;
  }
  // (number, start, end) of each instance, in order of start.
  std::vector<std::tuple<int64_t, int64_t, int64_t>> instances;
  if (names_profiler_steps(spec.annotation)) {
    for (const ProfilerStepWindow& s : find_profiler_steps(trace).steps)
      instances.emplace_back(s.step, s.start_ns, s.end_ns);
  } else {
    std::vector<uint32_t> rows;
    std::vector<int8_t> matches(trace.strings.size(), -1);  // by name id: -1 unknown, 0 no, 1 yes
    for (size_t i = 0; i < ev.size(); ++i) {
      const trace::Category c = ev.cat[i];
      if (ev.phase[i] != trace::Phase::kComplete || ev.dur[i] <= 0) continue;
      if (c != trace::Category::kUserAnnotation && !trace::is_cpu_op_category(c)) continue;
      int8_t& m = matches[ev.name[i]];
      if (m < 0) m = trace.name(i).find(spec.annotation) != std::string_view::npos ? 1 : 0;
      if (m == 1) rows.push_back(static_cast<uint32_t>(i));
    }
    std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
      return ev.ts[a] < ev.ts[b] || (ev.ts[a] == ev.ts[b] && ev.file_index[a] < ev.file_index[b]);
    });
    for (size_t k = 0; k < rows.size(); ++k) {
      instances.emplace_back(static_cast<int64_t>(k), ev.ts[rows[k]], ev.end(rows[k]));
    }
  }
  if (spec.first < 0) {
    // Every instance its own window; one that starts inside an earlier window is left out.
    int64_t until = std::numeric_limits<int64_t>::min();
    for (const auto& [number, start, end] : instances) {
      if (start < until) continue;
      out.push_back({number, start, end});
      until = end;
    }
    return out;
  }
  const int64_t last = std::max(spec.first, spec.last);
  PathWindow w{spec.first, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (const auto& [number, start, end] : instances) {
    if (number < spec.first || number > last) continue;
    w.start_ns = std::min(w.start_ns, start);
    w.end_ns = std::max(w.end_ns, end);
  }
  if (w.start_ns < w.end_ns) out.push_back(w);
  return out;
}

}  // namespace scaleprof::analysis

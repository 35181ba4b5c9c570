#include "analysis/profiler_steps.h"

#include <algorithm>
#include <utility>

#include "analysis/device_events.h"
#include "core/number_text.h"

namespace scaleprof::analysis {

namespace {

using trace::Category;

// The host events a ProfilerStep annotation can be: user_annotation in 2.x, cpu_op or no `cat` in
// older and legacy files. gpu_user_annotation copies are device spans, not windows.
bool is_host_step_category(Category c) {
  return c == Category::kUserAnnotation || c == Category::kCpuOp || c == Category::kNone || c == Category::kUnknown;
}

}  // namespace

std::optional<int64_t> profiler_step_number(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";  // the one place it is spelled
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const std::string_view digits = name.substr(kPrefix.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  return parse_int64(digits);  // nullopt when out of range
}

ProfilerSteps find_profiler_steps(const trace::RankTrace& trace) {
  const trace::EventTable& ev = trace.events;
  const size_t n = ev.size();
  ProfilerSteps out;
  for (size_t i = 0; i < n; ++i) {
    if (ev.phase[i] != trace::Phase::kComplete || !is_host_step_category(ev.cat[i])) continue;
    auto step = profiler_step_number(trace.name(i));
    if (!step) continue;
    ProfilerStepWindow w;
    w.step = *step;
    w.event = static_cast<uint32_t>(i);
    w.start_ns = ev.ts[i];
    w.end_ns = ev.end(i);
    out.steps.push_back(w);
  }
  // By start, the longer first among equal starts (it is the one kept), then file order.
  std::stable_sort(out.steps.begin(), out.steps.end(), [](const ProfilerStepWindow& a, const ProfilerStepWindow& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  });
  // Disjoint windows only (profiler_steps.h): one starting before the last kept one ends is left out.
  size_t kept = 0;
  for (size_t s = 0; s < out.steps.size(); ++s) {
    if (kept > 0 && out.steps[s].start_ns < out.steps[kept - 1].end_ns) {
      ++out.overlapping_steps;
      continue;
    }
    out.steps[kept++] = out.steps[s];
  }
  out.steps.resize(kept);

  // Without a step every device event is outside the steps: no launch needs finding (the runtime
  // calls' list below was most of this function's time on traces of runtime calls alone).
  if (out.steps.empty()) {
    for (size_t i = 0; i < n; ++i) {
      if (!is_stream_work(ev.cat[i]) || ev.phase[i] != trace::Phase::kComplete) continue;
      out.has_kernels = true;
      ++out.kernels_outside_steps;
    }
    return out;
  }

  // Launch time of each correlation id (runtime/driver call), and of each External id (host op) for
  // the device events no runtime call launched: the host ops are most of the events, so their list
  // is made and sorted only when such an event is found.
  std::vector<std::pair<int64_t, int64_t>> launch_by_correlation, launch_by_external;
  for (size_t i = 0; i < n; ++i) {
    if (ev.phase[i] == trace::Phase::kComplete && trace::is_runtime_category(ev.cat[i]) &&
        ev.correlation[i] != trace::kNone) {
      launch_by_correlation.emplace_back(ev.correlation[i], ev.ts[i]);
    }
  }
  std::sort(launch_by_correlation.begin(), launch_by_correlation.end());
  auto find_launch = [](const std::vector<std::pair<int64_t, int64_t>>& v, int64_t id) -> std::optional<int64_t> {
    if (id == trace::kNone) return std::nullopt;
    auto it = std::lower_bound(v.begin(), v.end(), std::make_pair(id, INT64_MIN));
    if (it == v.end() || it->first != id) return std::nullopt;
    return it->second;
  };

  // Device work per step, as (start, end) intervals (sorted below, so the order they come in does
  // not matter).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> kernels(out.steps.size());
  auto add_to_step = [&](size_t i, std::optional<int64_t> launch) {
    size_t step = out.steps.size();
    if (launch) {
      // The last window starting at or before the launch; it holds the launch if it has not ended.
      auto it = std::upper_bound(out.steps.begin(), out.steps.end(), *launch,
                                 [](int64_t t, const ProfilerStepWindow& w) { return t < w.start_ns; });
      if (it != out.steps.begin() && *launch < std::prev(it)->end_ns) step = std::prev(it) - out.steps.begin();
    }
    if (step == out.steps.size()) {
      ++out.kernels_outside_steps;
      return;
    }
    kernels[step].emplace_back(ev.ts[i], ev.end(i));
  };
  std::vector<uint32_t> by_external;  // device events to find through their External id
  for (size_t i = 0; i < n; ++i) {
    if (!is_stream_work(ev.cat[i]) || ev.phase[i] != trace::Phase::kComplete) continue;
    out.has_kernels = true;
    std::optional<int64_t> launch = find_launch(launch_by_correlation, ev.correlation[i]);
    if (!launch && ev.external_id[i] != trace::kNone) {
      by_external.push_back(static_cast<uint32_t>(i));
      continue;
    }
    add_to_step(i, launch);
  }
  if (!by_external.empty()) {
    for (size_t i = 0; i < n; ++i) {
      if (ev.phase[i] == trace::Phase::kComplete && trace::is_cpu_op_category(ev.cat[i]) &&
          ev.external_id[i] != trace::kNone) {
        launch_by_external.emplace_back(ev.external_id[i], ev.ts[i]);
      }
    }
    std::sort(launch_by_external.begin(), launch_by_external.end());
    for (uint32_t i : by_external) add_to_step(i, find_launch(launch_by_external, ev.external_id[i]));
  }

  for (size_t s = 0; s < out.steps.size(); ++s) {
    ProfilerStepWindow& w = out.steps[s];
    auto& k = kernels[s];
    if (k.empty()) continue;
    std::sort(k.begin(), k.end());
    w.kernels = static_cast<int64_t>(k.size());
    w.first_kernel_start_ns = k.front().first;
    int64_t run_start = k.front().first, run_end = k.front().second;
    for (const auto& [start, end] : k) {
      w.kernel_sum_ns += end - start;
      w.last_kernel_end_ns = std::max(w.last_kernel_end_ns, end);
      if (start > run_end) {
        w.gpu_busy_ns += run_end - run_start;
        run_start = start;
      }
      run_end = std::max(run_end, end);
    }
    w.gpu_busy_ns += run_end - run_start;
  }
  return out;
}

}  // namespace scaleprof::analysis

#include "analysis/analysis_window.h"

#include <algorithm>
#include <limits>

#include "analysis/device_events.h"
#include "analysis/profiler_steps.h"

namespace scaleprof::analysis {

namespace {

using trace::Category;

}  // namespace

AnalysisWindow compute_analysis_window(const trace::RankTrace& trace, const WindowOptions& options) {
  const trace::EventTable& ev = trace.events;
  const size_t n = ev.size();
  AnalysisWindow w;

  // Steps: host annotations named ProfilerStep#N, counted by distinct name id. The name test is made
  // once per distinct string, not once per event (millions in a large trace).
  std::vector<uint8_t> is_step_name(trace.strings.size(), 0);
  for (size_t id = 0; id < is_step_name.size(); ++id) {
    is_step_name[id] = is_profiler_step_name(trace.strings.view(static_cast<trace::StringId>(id))) ? 1 : 0;
  }
  std::vector<uint32_t> step_rows;
  for (size_t i = 0; i < n; ++i) {
    if (is_step_name[ev.name[i]] == 0 || !trace::is_cpu_op_category(ev.cat[i]) ||
        ev.phase[i] != trace::Phase::kComplete) {
      continue;
    }
    step_rows.push_back(static_cast<uint32_t>(i));
  }
  // profiler_steps.h's rule: a step window starting inside an earlier one (by start, the longer
  // first) is left out, so the last step here is the last step every analysis sees.
  std::stable_sort(step_rows.begin(), step_rows.end(), [&](uint32_t a, uint32_t b) {
    return ev.ts[a] != ev.ts[b] ? ev.ts[a] < ev.ts[b] : ev.end(a) > ev.end(b);
  });
  std::vector<trace::StringId> step_names;
  int64_t last_start = std::numeric_limits<int64_t>::min();
  int64_t last_end = std::numeric_limits<int64_t>::min();
  int64_t kept_end = std::numeric_limits<int64_t>::min();
  for (const uint32_t i : step_rows) {
    if (!step_names.empty() && ev.ts[i] < kept_end) continue;
    kept_end = ev.end(i);
    step_names.push_back(ev.name[i]);
    last_start = std::max(last_start, ev.ts[i]);
    last_end = std::max(last_end, ev.end(i));
  }
  std::sort(step_names.begin(), step_names.end());
  w.distinct_steps = static_cast<size_t>(std::unique(step_names.begin(), step_names.end()) - step_names.begin());

  w.rows.reserve(n);
  if (w.distinct_steps < 2) {
    for (size_t i = 0; i < n; ++i) {
      if (ev.cat[i] != Category::kTrace) w.rows.push_back(static_cast<uint32_t>(i));
    }
    return w;
  }
  w.filtered = true;
  w.last_step_start = last_start;
  w.last_step_end = last_end;
  auto in_time = [&](size_t i) { return options.include_last_step ? ev.ts[i] <= last_end : ev.ts[i] < last_start; };

  // Pass 1: host events by time; remember the correlation ids of the kept ones (their launches).
  std::vector<int64_t> kept_correlations;
  std::vector<uint8_t> keep(n, 0);
  int64_t max_correlation = -1;
  for (size_t i = 0; i < n; ++i) {
    const Category c = ev.cat[i];
    if (c == Category::kTrace || is_device_work(c)) continue;
    if (!in_time(i)) continue;
    keep[i] = 1;
    if (ev.correlation[i] >= 0) {
      kept_correlations.push_back(ev.correlation[i]);
      max_correlation = std::max(max_correlation, ev.correlation[i]);
    }
  }
  // Pass 2: device work follows its launch. Correlation ids are small counters in practice, so a
  // bitmap over them answers each lookup at once (a binary search over a million ids was most of
  // this function's time on a 500 MB trace); ids too sparse for that are searched in sorted order.
  const bool dense = static_cast<uint64_t>(max_correlation) <= 8 * static_cast<uint64_t>(n) + 4096;
  std::vector<bool> kept_bitmap;
  if (dense) {
    kept_bitmap.assign(static_cast<size_t>(max_correlation + 1), false);
    for (int64_t corr : kept_correlations) kept_bitmap[static_cast<size_t>(corr)] = true;
  } else {
    std::sort(kept_correlations.begin(), kept_correlations.end());
  }
  auto launch_kept = [&](int64_t corr) {
    if (dense) return corr <= max_correlation && kept_bitmap[static_cast<size_t>(corr)];
    return std::binary_search(kept_correlations.begin(), kept_correlations.end(), corr);
  };
  for (size_t i = 0; i < n; ++i) {
    if (!is_device_work(ev.cat[i])) continue;
    const int64_t corr = ev.correlation[i];
    keep[i] = corr >= 0 ? launch_kept(corr) : in_time(i);
  }
  for (size_t i = 0; i < n; ++i) {
    if (keep[i]) w.rows.push_back(static_cast<uint32_t>(i));
  }
  return w;
}

}  // namespace scaleprof::analysis

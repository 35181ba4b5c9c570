// `scaleprof trace steps`: the ProfilerStep windows of every selected rank with the device time of
// the kernels launched in each, and the spread of each step's duration across ranks (a slow rank
// holds every other rank back at the next collective). JSON shapes: docs/trace-json.md.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "analysis/profiler_steps.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

Table steps_table(const engine::RankStore& all) {
  bool kernels = false;
  int64_t origin = std::numeric_limits<int64_t>::max();
  int64_t overlapping = 0;
  all->for_each([&](const engine::RankResults& r) {
    kernels |= r.steps->has_kernels;
    overlapping += r.steps->overlapping_steps;
    for (const auto& w : r.steps->steps) origin = std::min(origin, w.start_ns);
  });
  Table out;
  out.title = "ProfilerStep windows (start relative to the earliest step of the selected ranks)";
  // analysis/profiler_steps.h: windows that start inside an earlier one are left out of every analysis.
  if (overlapping > 0) {
    out.title += fmt::format("; {} overlapping ProfilerStep window{} left out (each started inside an earlier one)",
                             overlapping, overlapping == 1 ? "" : "s");
  }
  out.columns = {{"rank", "Rank"}, {"step", "Step"}, {"start_us", "Start (us)"}, {"duration_us", "Duration (us)"}};
  if (kernels) {
    out.columns.insert(out.columns.end(), {{"kernels", "Kernels"},
                                           {"gpu_busy_us", "GPU busy (us)"},
                                           {"gpu_busy_pct", "GPU busy (% of step)"},
                                           {"kernel_sum_us", "Kernel sum (us)"}});
  }
  out.set_importance(Importance::kKey, {"rank", "step"});
  out.set_importance(Importance::kUseful, {"start_us", "kernel_sum_us"});
  out.row_source = [all, kernels, origin](const RowVisitor& visit) {
    all->for_each([&](const engine::RankResults& r) {
      for (const auto& w : r.steps->steps) {
        std::vector<Cell> row = {r.rank, w.step, us_cell(w.start_ns - origin), us_cell(w.duration_ns())};
        if (kernels) {
          const double busy_pct =
              w.duration_ns() > 0 ? 100.0 * static_cast<double>(w.gpu_busy_ns) / static_cast<double>(w.duration_ns())
                                  : std::numeric_limits<double>::quiet_NaN();
          row.insert(row.end(),
                     {Cell(w.kernels), us_cell(w.gpu_busy_ns), pct_cell(busy_pct), us_cell(w.kernel_sum_ns)});
        }
        visit(row);
      }
    });
  };
  return out;
}

// Per step number: how much the ranks disagree. A step number seen twice on one rank (PyTorch 1.13
// writes ProfilerStep#0 twice) contributes each window separately.
Table spread_table(const engine::RankStore& all) {
  struct Acc {
    int64_t windows = 0;
    int64_t min_ns = std::numeric_limits<int64_t>::max();
    int64_t max_ns = std::numeric_limits<int64_t>::min();
    int64_t sum_ns = 0;
    int64_t slowest_rank = -1;
    int64_t ranks = 0;  // distinct ranks with the step: they come in rank order, so the last one tells
    int64_t last_rank = -1;
  };
  std::map<int64_t, Acc> by_step;
  all->for_each([&](const engine::RankResults& r) {
    for (const auto& w : r.steps->steps) {
      Acc& a = by_step[w.step];
      ++a.windows;
      a.sum_ns += w.duration_ns();
      a.min_ns = std::min(a.min_ns, w.duration_ns());
      if (w.duration_ns() > a.max_ns) {
        a.max_ns = w.duration_ns();
        a.slowest_rank = r.rank;
      }
      if (a.ranks == 0 || a.last_rank != r.rank) {
        ++a.ranks;
        a.last_rank = r.rank;
      }
    }
  });
  Table out;
  out.title = "Step duration across ranks";
  out.columns = {{"step", "Step"},
                 {"ranks", "Ranks"},
                 {"min_us", "Min (us)"},
                 {"mean_us", "Mean (us)"},
                 {"max_us", "Max (us)"},
                 {"spread_pct", "Spread (% of mean)"},
                 {"slowest_rank", "Slowest rank"}};
  out.set_importance(Importance::kKey, {"step"});
  out.set_importance(Importance::kUseful, {"min_us", "max_us"});
  for (const auto& [step, a] : by_step) {
    const double mean = static_cast<double>(a.sum_ns) / static_cast<double>(a.windows);
    const double spread =
        mean > 0 ? 100.0 * static_cast<double>(a.max_ns - a.min_ns) / mean : std::numeric_limits<double>::quiet_NaN();
    out.add_row(
        {step, a.ranks, us_cell(a.min_ns), us_stat_cell(mean), us_cell(a.max_ns), pct_cell(spread), a.slowest_rank});
  }
  return out;
}

}  // namespace

TraceReport steps_tables(const engine::RankStore& ranks) {
  TraceReport report;
  report.add("steps", steps_table(ranks));
  report.add("step_spread", spread_table(ranks));
  return report;
}

}  // namespace scaleprof::report

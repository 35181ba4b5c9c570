// `scaleprof trace stragglers`: who the others wait for at the collectives, per rank and per step,
// and what differs in the worst straggler's steps. Rules in src/analysis/stragglers.h; JSON shapes:
// docs/trace-json.md.
#include <fmt/format.h>

#include <memory>
#include <utility>
#include <vector>

#include "analysis/stragglers.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {
// A sum that would pass int64 is left out (null), never wrapped (core/checked_sum.h).
constexpr const char* kPastInt64 = "; null: the sum would pass int64 nanoseconds (292 years) and is left out";
}  // namespace

TraceReport stragglers_tables(const std::vector<analysis::RankCollectives>& ranks, const TraceReportOptions& options) {
  return stragglers_tables(analysis::compact_rows(ranks), options);
}

TraceReport stragglers_tables(analysis::CollectiveRows rows, const TraceReportOptions& options) {
  ReportSections sections;
  sections.stragglers = true;
  return collective_tables(std::move(rows), sections, options);
}

TraceReport stragglers_tables(analysis::StragglerAnalysis s) {
  Table per_rank;
  per_rank.title = "Stragglers: wait each rank imposed on the others at matched collectives";
  per_rank.columns = {{"rank", "Rank"},
                      {"calls", "Calls"},
                      {"arrived_last", "Arrived last"},
                      {"wait_imposed_us", "Wait imposed (us)"},
                      {"own_wait_us", "Own wait (us)"},
                      {"mean_lag_when_last_us", "Mean lag when last (us)"}};
  per_rank.set_importance(Importance::kKey, {"rank"});
  per_rank.set_importance(Importance::kUseful, {"own_wait_us", "mean_lag_when_last_us"});
  bool inexact = false;
  for (const auto& r : s.ranks) inexact |= !r.wait_imposed_exact || !r.own_wait_exact;
  if (inexact) per_rank.title += kPastInt64;
  // A row per rank, made as it is rendered from the ranks' few numbers.
  per_rank.row_source = [ranks = std::make_shared<const std::vector<analysis::RankStraggling>>(std::move(s.ranks))](
                            const RowVisitor& visit) {
    for (const auto& r : *ranks) {
      visit({r.rank, r.calls, r.arrived_last, r.wait_imposed_exact ? us_cell(r.wait_imposed_ns) : Cell::null(),
             r.own_wait_exact ? us_cell(r.own_wait_ns) : Cell::null(),
             r.arrived_last > 0 ? us_stat_cell(r.mean_lag_when_last_ns) : Cell::null()});
    }
  };

  Table per_step;
  per_step.title =
      "Slowest rank per step (lag = its gap since its previous collective minus the others' median gap, summed)";
  per_step.columns = {{"step", "Step"}, {"calls", "Calls"}, {"slowest_rank", "Slowest rank"}, {"lag_us", "Lag (us)"}};
  per_step.set_importance(Importance::kKey, {"step"});
  inexact = false;
  for (const auto& st : s.steps) {
    per_step.add_row({st.step, st.calls, st.slowest_rank, st.lag_exact ? us_cell(st.lag_ns) : Cell::null()});
    inexact |= !st.lag_exact;
  }
  if (inexact) per_step.title += kPastInt64;

  Table compare;
  compare.title = s.worst_rank >= 0 ? fmt::format(
                                          "Worst straggler rank {} against the median rank, mean per step "
                                          "over {} steps",
                                          s.worst_rank, s.steps_compared)
                                    : std::string("Worst straggler: none (no rank made another wait)");
  compare.columns = {{"rank", "Rank"},
                     {"quantity", "Quantity"},
                     {"straggler_us", "Straggler (us)"},
                     {"median_us", "Median rank (us)"},
                     {"difference_us", "Difference (us)"}};
  compare.set_importance(Importance::kKey, {"rank", "quantity"});
  for (const auto& c : s.worst_vs_median) {
    compare.add_row({s.worst_rank, c.quantity, us_stat_cell(c.straggler_ns), us_stat_cell(c.median_ns),
                     us_stat_cell(c.straggler_ns - c.median_ns)});
  }
  TraceReport report;
  report.add("stragglers", std::move(per_rank));
  report.add("step_stragglers", std::move(per_step));
  report.add("straggler_vs_median", std::move(compare));
  return report;
}

}  // namespace scaleprof::report

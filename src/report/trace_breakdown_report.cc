// `scaleprof trace breakdown`: HTA's temporal breakdown, one row per rank: of the span from the
// first to the last device event, how much was idle, computing, or busy with anything else.
// One table, so `--format json` prints a plain array of per-rank objects; with several ranks a
// last object (rank null) pools them.
#include "analysis/temporal_breakdown.h"
#include "core/checked_sum.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

std::vector<Cell> breakdown_row(const Cell& rank, const analysis::TemporalBreakdown& b) {
  return {rank,
          us_cell(b.kernel_time_ns),
          us_cell(b.idle_ns),
          us_cell(b.compute_ns),
          us_cell(b.non_compute_ns),
          pct_cell(b.idle_pct()),
          pct_cell(b.compute_pct()),
          pct_cell(b.non_compute_pct()),
          b.device_events};
}

}  // namespace

TraceReport breakdown_tables(const engine::RankStore& ranks) {
  Table table;
  table.title = "Temporal breakdown of GPU time (kernel time = first to last device event)";
  table.columns = {{"rank", "Rank"},
                   {"kernel_us", "Kernel time (us)"},
                   {"idle_us", "Idle (us)"},
                   {"compute_us", "Compute (us)"},
                   {"non_compute_us", "Non-compute (us)"},
                   {"idle_pct", "Idle (%)"},
                   {"compute_pct", "Compute (%)"},
                   {"non_compute_pct", "Non-compute (%)"},
                   {"device_events", "Device events"}};
  table.set_importance(Importance::kKey, {"rank"});
  table.set_importance(Importance::kUseful, {"idle_us", "compute_us", "non_compute_us"});
  table.set_importance(Importance::kDetail, {"device_events"});
  analysis::TemporalBreakdown pooled;
  bool exact = true;  // the pooled sums fit in int64 ns
  ranks->for_each([&](const engine::RankResults& r) {
    const analysis::TemporalBreakdown& b = r.breakdown.value();
    pooled.device_events += b.device_events;
    exact = add_checked(&pooled.kernel_time_ns, b.kernel_time_ns) && exact;
    exact = add_checked(&pooled.idle_ns, b.idle_ns) && exact;
    exact = add_checked(&pooled.compute_ns, b.compute_ns) && exact;
    exact = add_checked(&pooled.non_compute_ns, b.non_compute_ns) && exact;
  });
  // All ranks pooled (rank null): each share weighted by the rank's kernel time, i.e. the fraction
  // of all GPUs' time, which a mean of per-rank percentages is not when spans differ.
  const bool pooled_row = ranks->size() > 1 && exact;
  if (pooled_row) {
    table.title += "; last row: all ranks pooled";
  } else if (ranks->size() > 1) {
    table.title += "; no pooled row: the ranks' times summed exceed 292 years of nanoseconds";
  }
  table.row_source = [ranks, pooled, pooled_row](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) { visit(breakdown_row(r.rank, r.breakdown.value())); });
    if (pooled_row) visit(breakdown_row(Cell::null(), pooled));
  };
  TraceReport report;
  report.add("breakdown", std::move(table));
  return report;
}

}  // namespace scaleprof::report

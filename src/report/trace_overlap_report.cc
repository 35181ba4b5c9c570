// `scaleprof trace overlap`: the share of each rank's communication time hidden under
// computation. A rank without communication kernels has no share: the percentage is null in JSON
// and CSV (empty in the text table) and `comm_events` is 0, rather than HTA's NaN. With several
// ranks a last row (rank null) pools them.
#include <optional>

#include "analysis/comm_comp_overlap.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

std::vector<Cell> overlap_row(const Cell& rank, const analysis::CommCompOverlap& o) {
  const std::optional<double> pct = o.overlap_pct();
  return {rank,
          pct ? Cell(*pct, 2) : Cell::null(),
          us_cell(o.communication_ns),
          us_cell(o.computation_ns),
          us_cell(o.overlap_ns),
          o.communication_events};
}

}  // namespace

TraceReport overlap_tables(const engine::RankStore& ranks) {
  Table table;
  table.title = "Communication hidden under computation";
  table.columns = {{"rank", "Rank"},
                   {"comm_comp_overlap_pct", "Overlap (% of comm)"},
                   {"comm_us", "Communication (us)"},
                   {"compute_us", "Computation (us)"},
                   {"overlap_us", "Overlap (us)"},
                   {"comm_events", "Comm events"}};
  table.set_importance(Importance::kKey, {"rank"});
  table.set_importance(Importance::kUseful, {"overlap_us"});
  table.set_importance(Importance::kDetail, {"comm_events"});
  analysis::CommCompOverlap pooled;
  bool any_without_communication = false;
  ranks->for_each([&](const engine::RankResults& r) {
    const analysis::CommCompOverlap& o = r.overlap.value();
    pooled.communication_ns += o.communication_ns;
    pooled.computation_ns += o.computation_ns;
    pooled.overlap_ns += o.overlap_ns;
    pooled.communication_events += o.communication_events;
    pooled.computation_events += o.computation_events;
    any_without_communication |= o.communication_events == 0;
  });
  // The empty-cell legend only where a cell is empty.
  if (any_without_communication) table.title += " (empty: no communication kernels)";
  // All ranks pooled (rank null): the share of all communication time that was hidden.
  const bool pooled_row = ranks->size() > 1;
  if (pooled_row) table.title += "; last row: all ranks pooled";
  table.row_source = [ranks, pooled, pooled_row](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) { visit(overlap_row(r.rank, r.overlap.value())); });
    if (pooled_row) visit(overlap_row(Cell::null(), pooled));
  };
  TraceReport report;
  report.add("overlap", std::move(table));
  return report;
}

}  // namespace scaleprof::report

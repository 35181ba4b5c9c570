// `scaleprof trace overlap`: the share of each rank's communication time hidden under
// computation. A rank without communication kernels has no share: the percentage is null in JSON
// and CSV (empty in the text table) and `comm_events` is 0, rather than HTA's NaN. With several
// ranks a last row (rank null) pools them.
#include <algorithm>

#include "analysis/comm_comp_overlap.h"
#include "report/rank_analysis.h"
#include "report/trace_report.h"

namespace scaleprof::report {

TraceReport overlap_tables(const std::vector<RankResults>& ranks) {
  Table table;
  table.title = "Communication hidden under computation";
  table.columns = {{"rank", "Rank"},
                   {"comm_comp_overlap_pct", "Overlap (% of comm)"},
                   {"comm_us", "Communication (us)"},
                   {"compute_us", "Computation (us)"},
                   {"overlap_us", "Overlap (us)"},
                   {"comm_events", "Comm events"}};
  auto add = [&](const Cell& rank, const analysis::CommCompOverlap& o) {
    const std::optional<double> pct = o.overlap_pct();
    table.add_row({rank, pct ? Cell(*pct, 2) : Cell::null(), us_cell(o.communication_ns), us_cell(o.computation_ns),
                   us_cell(o.overlap_ns), o.communication_events});
  };
  analysis::CommCompOverlap pooled;
  for (const RankResults& r : ranks) {
    const analysis::CommCompOverlap& o = r.overlap.value();
    add(r.rank, o);
    pooled.communication_ns += o.communication_ns;
    pooled.computation_ns += o.computation_ns;
    pooled.overlap_ns += o.overlap_ns;
    pooled.communication_events += o.communication_events;
    pooled.computation_events += o.computation_events;
  }
  // The empty-cell legend only where a cell is empty.
  if (std::any_of(ranks.begin(), ranks.end(),
                  [](const RankResults& r) { return r.overlap->communication_events == 0; })) {
    table.title += " (empty: no communication kernels)";
  }
  // All ranks pooled (rank null): the share of all communication time that was hidden.
  if (ranks.size() > 1) {
    table.title += "; last row: all ranks pooled";
    add(Cell::null(), pooled);
  }
  TraceReport report;
  report.add("overlap", std::move(table));
  return report;
}

TraceReport overlap_report(const trace::TraceSet& set, const TraceReportOptions& options) {
  return trace_report("overlap", set, options);
}

}  // namespace scaleprof::report

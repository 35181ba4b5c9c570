// `scaleprof trace ops`: torch's key_averages() table per rank, its totals, and itwinai's
// computation fraction (per rank and pooled over the selected ranks). JSON shapes: docs/trace-json.md.
#include <fmt/format.h>

#include <optional>

#include "analysis/computation_fraction.h"
#include "analysis/operator_table.h"
#include "report/rank_analysis.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

using analysis::OperatorRow;
using analysis::OperatorTable;

Cell avg_us(int64_t ns, int64_t calls) {
  return calls > 0 ? us_stat_cell(static_cast<double>(ns) / static_cast<double>(calls)) : Cell::null();
}

Table operators_table(const std::vector<const trace::RankTrace*>& ranks, const std::vector<OperatorTable>& tables,
                      analysis::OperatorSortKey sort, int top) {
  bool device = false, memory = false, device_memory = false;
  for (const OperatorTable& t : tables) {
    device |= t.has_device_time;
    memory |= t.has_memory;
    device_memory |= t.has_device_memory;
  }
  Table out;
  out.title = top > 0 ? fmt::format("Operators (top {} per rank, like torch key_averages().table())", top)
                      : "Operators (like torch key_averages().table())";
  out.columns = {{"rank", "Rank"},
                 {"name", "Name"},
                 {"side", "Side"},
                 {"self_cpu_pct", "Self CPU (%)"},
                 {"self_cpu_us", "Self CPU (us)"},
                 {"cpu_total_pct", "CPU total (%)"},
                 {"cpu_total_us", "CPU total (us)"},
                 {"cpu_avg_us", "CPU avg (us)"}};
  if (device) {
    out.columns.insert(out.columns.end(), {{"self_device_us", "Self device (us)"},
                                           {"self_device_pct", "Self device (%)"},
                                           {"device_total_us", "Device total (us)"},
                                           {"device_avg_us", "Device avg (us)"}});
  }
  if (memory) {
    out.columns.insert(out.columns.end(),
                       {{"cpu_mem_bytes", "CPU mem (B)"}, {"self_cpu_mem_bytes", "Self CPU mem (B)"}});
    if (device_memory) {
      out.columns.insert(out.columns.end(),
                         {{"device_mem_bytes", "Device mem (B)"}, {"self_device_mem_bytes", "Self device mem (B)"}});
    }
  }
  out.columns.insert(out.columns.end(), {{"calls", "Calls"}, {"async", "Async"}});
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (const OperatorRow& row : analysis::top_operators(tables[r], sort, top)) {
      std::vector<Cell> cells = {ranks[r]->rank,
                                 row.name,
                                 row.side == analysis::OpSide::kHost ? "host" : "device",
                                 pct_cell(row.self_cpu_pct),
                                 us_cell(row.self_cpu_ns),
                                 pct_cell(row.cpu_total_pct),
                                 us_cell(row.cpu_total_ns),
                                 avg_us(row.cpu_total_ns, row.calls)};
      if (device) {
        cells.insert(cells.end(), {us_cell(row.self_device_ns), pct_cell(row.self_device_pct),
                                   us_cell(row.device_total_ns), avg_us(row.device_total_ns, row.calls)});
      }
      if (memory) {
        cells.insert(cells.end(), {Cell(row.cpu_memory_bytes), Cell(row.self_cpu_memory_bytes)});
        if (device_memory)
          cells.insert(cells.end(), {Cell(row.device_memory_bytes), Cell(row.self_device_memory_bytes)});
      }
      cells.insert(cells.end(), {Cell(row.calls), Cell(row.async ? "yes" : "no")});
      out.add_row(std::move(cells));
    }
  }
  return out;
}

Table totals_table(const std::vector<const trace::RankTrace*>& ranks, const std::vector<OperatorTable>& tables) {
  Table out;
  out.title = "Operator totals (the footers of torch's table)";
  out.columns = {{"rank", "Rank"},
                 {"rows", "Rows"},
                 {"calls", "Calls"},
                 {"self_cpu_total_us", "Self CPU total (us)"},
                 {"self_device_total_us", "Self device total (us)"},
                 {"async_calls", "Async calls"},
                 {"dup_nodes_removed", "Dup nodes removed"},
                 {"calls_ended_at_stop", "Calls ended at stop"},
                 {"unattributed_device_events", "Unattributed device events"}};
  for (size_t r = 0; r < ranks.size(); ++r) {
    const OperatorTable& t = tables[r];
    int64_t calls = 0;
    for (const OperatorRow& row : t.rows) calls += row.calls;
    out.add_row({ranks[r]->rank, static_cast<int64_t>(t.rows.size()), calls, us_cell(t.sum_self_cpu_ns),
                 us_cell(t.sum_self_device_ns), t.async_calls, t.dup_nodes_removed, t.calls_ended_at_stop,
                 t.unattributed_device_events});
  }
  return out;
}

void add_fraction_row(Table* out, std::optional<int64_t> rank, const analysis::ComputationFraction& f) {
  if (!f.exact) {  // a sum past int64 ns: empty cells, never a wrapped value
    out->add_row({rank ? Cell(*rank) : Cell::null(), std::string(analysis::fraction_basis_name(f.basis)), Cell::null(),
                  Cell::null(), Cell::null(), Cell::null()});
    return;
  }
  out->add_row({rank ? Cell(*rank) : Cell::null(), std::string(analysis::fraction_basis_name(f.basis)),
                us_cell(f.computation_ns), us_cell(f.total_ns), us_cell(f.profiler_step_ns),
                pct_cell(100.0 * f.fraction)});
}

Table fraction_table(const std::vector<const trace::RankTrace*>& ranks, const std::vector<OperatorTable>& tables) {
  Table out;
  out.title = "Computation fraction (itwinai: ATen/c10/autograd self time / (all self time - ProfilerStep*))";
  out.columns = {{"rank", "Rank"},
                 {"basis", "Basis"},
                 {"computation_us", "Computation (us)"},
                 {"total_us", "Total self (us)"},
                 {"profiler_step_us", "ProfilerStep* (us)"},
                 {"fraction_pct", "Fraction (%)"}};
  std::vector<const OperatorTable*> all;
  for (size_t r = 0; r < ranks.size(); ++r) {
    add_fraction_row(&out, ranks[r]->rank, analysis::computation_fraction(tables[r]));
    all.push_back(&tables[r]);
  }
  if (ranks.size() > 1) {
    const analysis::ComputationFraction pooled = analysis::computation_fraction(all);
    if (pooled.exact) {
      out.title += "; last row: selected ranks pooled";
      add_fraction_row(&out, std::nullopt, pooled);
    } else {
      out.title += "; no pooled row: the ranks' self times summed exceed 292 years of nanoseconds";
    }
  }
  return out;
}

}  // namespace

TraceReport ops_report(const trace::TraceSet& set, const TraceReportOptions& options) {
  const std::vector<const trace::RankTrace*> ranks = selected_ranks(set, options);
  // Like torch, the table covers the whole trace, not the analysis window of the HTA reports.
  const std::vector<OperatorTable> tables = analyse_ranks(
      set, options,
      [](const trace::RankTrace& t, const analysis::AnalysisWindow&) { return analysis::compute_operator_table(t); });
  // The CLI validates --sort; an unknown key here falls back to torch's usual Self CPU order.
  const analysis::OperatorSortKey sort =
      analysis::parse_operator_sort_key(options.sort_by).value_or(analysis::OperatorSortKey::kSelfCpu);
  TraceReport report;
  report.add("operators", operators_table(ranks, tables, sort, options.top));
  report.add("operator_totals", totals_table(ranks, tables));
  report.add("computation_fraction", fraction_table(ranks, tables));
  return report;
}

}  // namespace scaleprof::report

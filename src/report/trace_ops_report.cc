// `scaleprof trace ops`: torch's key_averages() table per rank, its totals, and itwinai's
// computation fraction (per rank and pooled over the selected ranks). JSON shapes: docs/trace-json.md.
#include <fmt/format.h>

#include <optional>

#include "analysis/computation_fraction.h"
#include "analysis/operator_table.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

using analysis::OperatorRow;

Cell avg_us(int64_t ns, int64_t calls) {
  return calls > 0 ? us_stat_cell(static_cast<double>(ns) / static_cast<double>(calls)) : Cell::null();
}

Table operators_table(const engine::RankStore& ranks, int top) {
  bool device = false, memory = false, device_memory = false;
  ranks->for_each([&](const engine::RankResults& r) {
    device |= r.ops->has_device_time;
    memory |= r.ops->has_memory;
    device_memory |= r.ops->has_device_memory;
  });
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
  out.set_importance(Importance::kKey, {"rank", "name"});
  out.set_importance(Importance::kUseful,
                     {"self_cpu_pct", "cpu_total_pct", "cpu_avg_us", "self_device_pct", "device_avg_us"});
  out.set_importance(Importance::kDetail, {"side", "cpu_mem_bytes", "self_cpu_mem_bytes", "device_mem_bytes",
                                           "self_device_mem_bytes", "async"});
  out.row_source = [ranks, device, memory, device_memory](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const OperatorRow& row : r.ops->top) {
        std::vector<Cell> cells = {r.rank,
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
        visit(cells);
      }
    });
  };
  return out;
}

Table totals_table(const engine::RankStore& ranks) {
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
  out.set_importance(Importance::kKey, {"rank"});
  out.set_importance(Importance::kUseful, {"unattributed_device_events"});
  out.set_importance(Importance::kDetail, {"async_calls", "dup_nodes_removed", "calls_ended_at_stop"});
  out.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      const engine::RankOperators& t = r.ops.value();
      visit({r.rank, t.rows, t.calls, us_cell(t.sum_self_cpu_ns), us_cell(t.sum_self_device_ns), t.async_calls,
             t.dup_nodes_removed, t.calls_ended_at_stop, t.unattributed_device_events});
    });
  };
  return out;
}

std::vector<Cell> fraction_row(std::optional<int64_t> rank, const analysis::ComputationFraction& f) {
  if (!f.exact) {  // a sum past int64 ns: empty cells, never a wrapped value
    return {rank ? Cell(*rank) : Cell::null(),
            std::string(analysis::fraction_basis_name(f.basis)),
            Cell::null(),
            Cell::null(),
            Cell::null(),
            Cell::null()};
  }
  return {rank ? Cell(*rank) : Cell::null(), std::string(analysis::fraction_basis_name(f.basis)),
          us_cell(f.computation_ns),         us_cell(f.total_ns),
          us_cell(f.profiler_step_ns),       pct_cell(100.0 * f.fraction)};
}

Table fraction_table(const engine::RankStore& ranks) {
  Table out;
  out.title = "Computation fraction (itwinai: ATen/c10/autograd self time / (all self time - ProfilerStep*))";
  out.columns = {{"rank", "Rank"},
                 {"basis", "Basis"},
                 {"computation_us", "Computation (us)"},
                 {"total_us", "Total self (us)"},
                 {"profiler_step_us", "ProfilerStep* (us)"},
                 {"fraction_pct", "Fraction (%)"}};
  out.set_importance(Importance::kKey, {"rank"});
  out.set_importance(Importance::kUseful, {"basis"});
  out.set_importance(Importance::kDetail, {"profiler_step_us"});
  std::optional<analysis::ComputationFraction> pooled;
  if (ranks->size() > 1) {
    std::vector<analysis::FractionParts> all;
    all.reserve(ranks->size());
    ranks->for_each([&](const engine::RankResults& r) { all.push_back(r.ops->fraction_parts); });
    pooled = analysis::pooled_fraction(all);
    if (pooled->exact) {
      out.title += "; last row: selected ranks pooled";
    } else {
      out.title += "; no pooled row: the ranks' self times summed exceed 292 years of nanoseconds";
      pooled.reset();
    }
  }
  out.row_source = [ranks, pooled](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) { visit(fraction_row(r.rank, r.ops->fraction)); });
    if (pooled) visit(fraction_row(std::nullopt, *pooled));
  };
  return out;
}

}  // namespace

TraceReport ops_tables(const engine::RankStore& ranks, const TraceReportOptions& options) {
  TraceReport report;
  report.add("operators", operators_table(ranks, options.top));
  report.add("operator_totals", totals_table(ranks));
  report.add("computation_fraction", fraction_table(ranks));
  return report;
}

}  // namespace scaleprof::report

// `scaleprof trace fsdp` (issue 33): per rank, the exposed time of its collectives per process group,
// phase and collective type, then per FSDP layer, most exposed first (analysis/exposed_collectives.h),
// and one row per rank with its steps, calls and what could not be done.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "analysis/exposed_collectives.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

Cell fsdp_text_or_null(const std::string& s) {
  return s.empty() ? Cell::null() : Cell(s);
}

// A sum of durations per analysed step; null when unknown or there is no step.
Cell fsdp_per_step_cell(int64_t ns, int64_t steps) {
  if (steps <= 0 || is_unknown_figure(ns)) return Cell::null();
  return us_stat_cell(static_cast<double>(ns) / static_cast<double>(steps));
}

Cell fsdp_us_or_null(int64_t ns) {
  return is_unknown_figure(ns) ? Cell::null() : us_cell(ns);
}

std::vector<Cell> fsdp_row_cells(int64_t rank, const analysis::ExposedRow& row, int64_t steps, bool layer) {
  std::vector<Cell> cells = {rank, fsdp_text_or_null(row.group), fsdp_text_or_null(row.group_ranks),
                             std::string(analysis::step_phase_name(row.phase)), row.type};
  if (layer) cells.emplace_back(row.layer.empty() ? Cell("(none)") : Cell(row.layer));
  cells.insert(cells.end(), {Cell(row.calls), fsdp_us_or_null(row.duration_ns), fsdp_us_or_null(row.span_ns),
                             fsdp_us_or_null(row.exposed_ns), fsdp_per_step_cell(row.exposed_ns, steps),
                             row.bytes > 0 ? figure_cell(row.bytes) : Cell::null()});
  return cells;
}

std::vector<Column> fsdp_row_columns(bool layer) {
  std::vector<Column> c = {
      {"rank", "Rank"}, {"group", "Group"}, {"group_ranks", "Group ranks"}, {"phase", "Phase"}, {"type", "Collective"}};
  if (layer) c.push_back({"layer", "Layer"});
  c.insert(c.end(), {{"calls", "Calls"},
                     {"duration_us", "Duration (us)"},
                     {"span_us", "Span (us)"},
                     {"exposed_us", "Exposed (us)"},
                     {"exposed_per_step_us", "Exposed per step (us)"},
                     {"bytes", "Bytes"}});
  return c;
}

}  // namespace

TraceReport fsdp_tables(const engine::RankStore& ranks) {
  Table totals;
  totals.title =
      "Exposed collective time per process group, phase and collective over the analysed steps (exposed: the "
      "issuing thread runs no operator (CPU) or no computation kernel runs (GPU) while the call is in flight)";
  totals.columns = fsdp_row_columns(false);
  totals.set_importance(Importance::kKey, {"rank", "phase", "type"});
  totals.set_importance(Importance::kUseful, {"group_ranks", "span_us", "bytes"});
  totals.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const auto& row : r.exposed->totals) visit(fsdp_row_cells(r.rank, row, r.exposed->steps, false));
    });
  };

  Table layers;
  layers.title =
      "Most exposed collectives per layer (the module FSDP's record_function label names, or the nn.Module "
      "whose DeepSpeed ZeRO-3 parameter fetch issued it; (none): neither), most exposed first per rank";
  layers.columns = fsdp_row_columns(true);
  layers.set_importance(Importance::kKey, {"rank", "phase", "type", "layer"});
  layers.set_importance(Importance::kUseful, {"group", "group_ranks", "span_us", "bytes"});
  layers.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const auto& row : r.exposed->layers) visit(fsdp_row_cells(r.rank, row, r.exposed->steps, true));
    });
  };

  Table per_rank;
  per_rank.title = "Per rank: analysed steps, collective calls in them, and their exposed time";
  per_rank.columns = {{"rank", "Rank"},
                      {"file", "File"},
                      {"device", "Device"},
                      {"steps", "Steps"},
                      {"step_us", "Steps (us)"},
                      {"calls", "Calls"},
                      {"fsdp_calls", "FSDP calls"},
                      {"exposed_us", "Exposed (us)"},
                      {"exposed_pct", "Exposed (% of steps)"},
                      {"note", "Note"}};
  per_rank.set_importance(Importance::kKey, {"rank", "exposed_us"});
  per_rank.set_importance(Importance::kUseful, {"file", "step_us"});
  per_rank.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      const analysis::RankExposedCollectives& e = *r.exposed;
      std::string note;
      for (const std::string& n : e.notes) note += (note.empty() ? "" : "; ") + n;
      const double pct = e.step_ns > 0 && !is_unknown_figure(e.step_ns)
                             ? 100.0 * static_cast<double>(e.exposed_ns) / static_cast<double>(e.step_ns)
                             : std::numeric_limits<double>::quiet_NaN();
      visit({r.rank, e.path, e.gpu ? "gpu" : "cpu", e.steps, fsdp_us_or_null(e.step_ns), e.calls, e.labelled,
             fsdp_us_or_null(e.exposed_ns), pct_cell(pct), fsdp_text_or_null(note)});
    });
  };

  TraceReport report;
  report.add("fsdp", std::move(totals));
  report.add("fsdp_layers", std::move(layers));
  report.add("fsdp_ranks", std::move(per_rank));
  return report;
}

}  // namespace scaleprof::report

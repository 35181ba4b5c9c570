#include "report/trace_diff_report.h"

#include <fmt/format.h>

#include <cmath>

#include "report/trace_cells.h"

namespace scaleprof::report {

namespace {

using analysis::DiffRow;

Cell count_cell(double count) {
  return std::isfinite(count) ? Cell(count, 1) : Cell::null();
}

std::string steps_text(const analysis::DiffRankSummary& r) {
  if (!r.has_steps) return "whole trace (no ProfilerStep)";
  std::string out;
  for (int64_t s : r.steps) out += (out.empty() ? "" : ",") + std::to_string(s);
  return out;
}

Table inputs_table(const analysis::DiffSide& a, const analysis::DiffSide& b, const DiffSideInfo& info_a,
                   const DiffSideInfo& info_b) {
  Table out;
  out.title = "Inputs (steps: the analysed ProfilerSteps after warm-up)";
  out.columns = {{"side", "Side"},         {"input", "Input"},
                 {"rank", "Rank"},         {"file", "File"},
                 {"steps", "Steps"},       {"warmup_skipped", "Warm-up skipped"},
                 {"strategy", "Strategy"}, {"samples_per_step", "Samples/step"}};
  out.set_importance(Importance::kKey, {"side"});
  out.set_importance(Importance::kUseful, {"input", "strategy", "samples_per_step"});
  out.set_importance(Importance::kDetail, {"warmup_skipped"});
  for (const auto& [side, info] : {std::pair{&a, &info_a}, std::pair{&b, &info_b}}) {
    for (const analysis::DiffRankSummary& r : side->ranks) {
      out.add_row({info->label, info->input, r.rank, r.path, steps_text(r), r.warmup_skipped,
                   info->strategy.empty() ? Cell::null() : Cell(info->strategy),
                   info->samples_per_step > 0 ? Cell(info->samples_per_step, 1) : Cell::null()});
    }
  }
  return out;
}

// The columns every figure row ends with.
void figure_columns(Table* t, const char* what) {
  t->columns.insert(t->columns.end(), {{"a_us", fmt::format("A {} (us)", what)},
                                       {"a_spread_us", "A spread (us)"},
                                       {"b_us", fmt::format("B {} (us)", what)},
                                       {"b_spread_us", "B spread (us)"},
                                       {"delta_us", "B-A (us)"},
                                       {"change_pct", "Change (%)"},
                                       {"significant", "Significant"}});
  t->set_importance(Importance::kDetail, {"a_spread_us", "b_spread_us"});
}

void figure_cells(const DiffRow& r, std::vector<Cell>* row) {
  row->insert(row->end(),
              {us_stat_cell(r.a.median), us_stat_cell(r.a.spread), us_stat_cell(r.b.median), us_stat_cell(r.b.spread),
               us_stat_cell(r.delta), pct_cell(r.change_pct), Cell(r.significant ? "yes" : "no")});
}

Cell optional_text(const std::string& s) {
  return s.empty() ? Cell::null() : Cell(s);
}

}  // namespace

TraceReport diff_tables(const analysis::TraceDiff& diff, const analysis::DiffSide& a, const analysis::DiffSide& b,
                        const DiffSideInfo& info_a, const DiffSideInfo& info_b) {
  TraceReport report;
  report.add("inputs", inputs_table(a, b, info_a, info_b));

  const std::string basis = diff.per_sample ? "per sample" : "per step";
  Table basis_table;
  basis_table.title =
      "Basis: medians over each side's (rank, step) pairs, spread = interquartile range; a change is significant "
      "when larger than both spreads";
  basis_table.columns = {
      {"basis", "Times"}, {"a_samples_per_step", "A samples/step"}, {"b_samples_per_step", "B samples/step"}};
  basis_table.add_row({basis, a.samples_per_step > 0 ? Cell(a.samples_per_step, 1) : Cell::null(),
                       b.samples_per_step > 0 ? Cell(b.samples_per_step, 1) : Cell::null()});
  report.add("basis", std::move(basis_table));

  const char* unit = diff.per_sample ? "per sample" : "per step";
  Table steps;
  steps.title = fmt::format("Step time ({}): wall time and GPU busy time of the work launched in the step", unit);
  steps.columns = {{"figure", "Figure"}};
  figure_columns(&steps, "median");
  steps.set_importance(Importance::kKey, {"figure"});
  for (const DiffRow& r : diff.steps) {
    std::vector<Cell> row = {r.name};
    figure_cells(r, &row);
    steps.add_row(std::move(row));
  }
  report.add("steps", std::move(steps));

  Table kernels;
  kernels.title =
      fmt::format("Kernels ({}), matched by what launched them (operator path and kernel type), then by name", unit);
  kernels.columns = {{"type", "Type"},
                     {"name", "Kernel"},
                     {"name_b", "Kernel in B"},
                     {"launched_from", "Launched from"},
                     {"launched_from_b", "Launched from in B"},
                     {"match", "Match"},
                     {"a_count", "A count"},
                     {"b_count", "B count"}};
  figure_columns(&kernels, "time");
  kernels.set_importance(Importance::kKey, {"type", "name"});
  kernels.set_importance(Importance::kUseful, {"launched_from", "a_count", "b_count"});
  kernels.set_importance(Importance::kDetail, {"name_b", "launched_from_b"});
  for (const DiffRow& r : diff.kernels) {
    std::vector<Cell> row = {analysis::kernel_type_name(r.type),
                             r.name,
                             optional_text(r.name_b),
                             r.path,
                             optional_text(r.path_b),
                             analysis::diff_match_name(r.match, true),
                             count_cell(r.a.count),
                             count_cell(r.b.count)};
    figure_cells(r, &row);
    kernels.add_row(std::move(row));
  }
  report.add("kernels", std::move(kernels));

  Table ops;
  ops.title = fmt::format("Operators by exclusive (self) host time ({}), matched by name", unit);
  ops.columns = {{"name", "Operator"}, {"match", "Match"}, {"a_calls", "A calls"}, {"b_calls", "B calls"}};
  figure_columns(&ops, "self");
  ops.set_importance(Importance::kKey, {"name"});
  ops.set_importance(Importance::kUseful, {"a_calls", "b_calls"});
  for (const DiffRow& r : diff.operators) {
    std::vector<Cell> row = {r.name, analysis::diff_match_name(r.match, false), count_cell(r.a.count),
                             count_cell(r.b.count)};
    figure_cells(r, &row);
    ops.add_row(std::move(row));
  }
  report.add("operators", std::move(ops));
  return report;
}

Table ops_diff_table(const analysis::OpsDiff& diff) {
  Table t;
  t.title = fmt::format(
      "Ops diff (HTA's TraceDiff.ops_diff): names added, deleted, increased, decreased or unchanged in B, by calls "
      "per (rank, step): A {} pair(s), B {}",
      diff.a_pairs, diff.b_pairs);
  t.columns = {{"change", "Change"},
               {"kind", "Kind"},
               {"name", "Name"},
               {"a_calls", "A calls"},
               {"b_calls", "B calls"},
               {"a_calls_per_step", "A calls/step"},
               {"b_calls_per_step", "B calls/step"}};
  t.set_importance(Importance::kKey, {"change", "name"});
  t.set_importance(Importance::kDetail, {"a_calls", "b_calls"});
  for (const analysis::OpsDiffRow& r : diff.rows) {
    t.add_row({analysis::ops_change_name(r.change), r.kernel ? "kernel" : "operator", r.name,
               r.a_exact ? Cell(r.a_calls) : Cell::null(), r.b_exact ? Cell(r.b_calls) : Cell::null(),
               r.a_exact ? Cell(r.a_per_step, 2) : Cell::null(), r.b_exact ? Cell(r.b_per_step, 2) : Cell::null()});
  }
  return t;
}

}  // namespace scaleprof::report

#include "report/scalability_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "analysis/computation_fraction.h"
#include "core/terminal_text.h"
#include "report/scalability_explanation.h"
#include "report/straggler_causes_report.h"
#include "report/table_layout.h"
#include "report/throughput_report.h"

namespace scaleprof::report {

// ---- tables ------------------------------------------------------------------------------------

namespace {

Cell num(double v, int digits) {
  return std::isfinite(v) ? Cell(v, digits) : Cell::null();
}
Cell pct(double fraction) {
  return std::isfinite(fraction) ? Cell(fraction * 100.0, 2) : Cell::null();
}
Cell nodes_cell(int64_t nodes) {
  return nodes > 0 ? Cell(nodes) : Cell::null();
}
Cell text_cell(const std::string& s) {
  return s.empty() ? Cell::null() : Cell(s);
}

// What a FAILED configuration is shown with: the first exit code and the first log its failed runs
// recorded (each run's own are in "Runs read").
struct FailedCells {
  Cell exit_code = Cell::null();
  Cell log = Cell::null();
  std::string status = "FAILED";  // "NOT RUN: <why>" where no job ever ran it (RunData::not_run)
};
FailedCells failed_cells(const ScalabilityAnalysis& a, const ScaleGroup& g) {
  FailedCells c;
  if (!g.failed_runs.empty() &&
      std::all_of(g.failed_runs.begin(), g.failed_runs.end(), [&](size_t i) { return !a.runs[i]->not_run.empty(); })) {
    c.status = "NOT RUN: " + a.runs[g.failed_runs.front()]->not_run;
  }
  bool exit_known = false;
  bool log_known = false;
  for (size_t i : g.failed_runs) {
    const RunData& r = *a.runs[i];
    if (!exit_known && r.exit_code) {
      c.exit_code = Cell(*r.exit_code);
      exit_known = true;
    }
    if (!log_known && !r.log.empty()) {
      c.log = Cell(r.log);
      log_known = true;
    }
  }
  return c;
}

std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string("null");
}

// The `causes` list of a scaling_loss row: each named cause with its points, its seconds per epoch at
// both scales and what grew, then the unattributed rest (no seconds: it is not a part of the epoch),
// so that the list adds up to lost_pts as the chart and the sentences do.
std::string loss_causes_json(const analysis::ScaleLoss& l) {
  std::string out = "[";
  auto item = [&out](const std::string& cause, double points, double from, double to, const std::string& detail,
                     const std::vector<analysis::CauseDetail>& parts = {}) {
    out += fmt::format(
        "{}{{\"cause\": {}, \"pts\": {}, \"seconds_per_epoch_from\": {}, \"seconds_per_epoch_to\": {}, "
        "\"detail\": {}",
        out.size() > 1 ? ", " : "", json_quote(cause), json_number(points * 100.0), json_number(from), json_number(to),
        json_quote(detail));
    // A cause's named parts (communication's all-to-all imbalance): inside its pts, not beside them.
    if (!parts.empty()) {
      out += ", \"parts\": [";
      for (size_t i = 0; i < parts.size(); ++i) {
        const analysis::CauseDetail& d = parts[i];
        out +=
            fmt::format("{}{{\"part\": {}, \"pts\": {}, \"seconds_per_epoch_from\": {}, \"seconds_per_epoch_to\": {}}}",
                        i > 0 ? ", " : "", json_quote(d.name), json_number(d.points * 100.0), json_number(d.seconds0),
                        json_number(d.seconds1));
      }
      out += "]";
    }
    out += "}";
  };
  for (const analysis::LossCause& c : l.causes)
    item(c.name, c.points, c.seconds0, c.seconds1, cause_detail(c, l), c.details);
  if (analysis::is_attributed(l.basis) || !l.causes.empty()) {
    item(analysis::kUnattributed, l.rest, tables::kNaN, tables::kNaN, "the loss beyond the causes named");
  } else {
    item(analysis::kUnattributed, l.rest, tables::kNaN, tables::kNaN,
         fmt::format("nothing attributed on basis {}", analysis::loss_basis_name(l.basis)));
  }
  return out + "]";
}

// The `gains` list of a scaling_loss row (analysis/whatif_gains.h): what fixing each cause would gain,
// largest first, with the epoch time it predicts.
std::string loss_gains_json(const analysis::ScaleLoss& l) {
  std::string out = "[";
  for (const analysis::CauseGain& g : l.gains) {
    out += fmt::format(
        "{}{{\"cause\": {}, \"pts\": {}, \"seconds_per_epoch\": {}, \"predicted_epoch_s\": {}, \"detail\": {}, "
        "\"rank\": {}}}",
        out.size() > 1 ? ", " : "", json_quote(g.name), json_number(g.points * 100.0), json_number(g.seconds),
        json_number(g.predicted_epoch_s), json_quote(gain_detail(g, l)),
        g.rank >= 0 ? fmt::format("{}", g.rank) : "null");
  }
  return out + "]";
}

// A cause's column in the loss tables: "<cause>_pts", "<Cause> (pts)".
Column cause_column(const std::string& cause) {
  std::string key = cause;
  std::replace(key.begin(), key.end(), '-', '_');
  std::replace(key.begin(), key.end(), ' ', '_');
  std::string title = cause;
  if (!title.empty()) title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
  return {key + "_pts", title + " (pts)"};
}

// What each rank was doing: the exclusive split of the rows that lead with the what-if gains.
Table split_table(const ScalabilityAnalysis& a, const std::vector<std::string>& causes) {
  Table t;
  t.title =
      "What each rank was doing: the lost efficiency split into exclusive parts of the epoch (percentage points; "
      "the causes overlap in what fixing them gains, never here)";
  t.columns = {{"strategy", "Strategy"},
               {"from_workers", "From workers"},
               {"to_workers", "To workers"},
               {"lost_pts", "Lost (pts)"}};
  for (const std::string& c : causes) t.columns.push_back(cause_column(c));
  t.columns.push_back({"unattributed_pts", "Unattributed (pts)"});
  t.set_importance(Importance::kKey, {"strategy", "from_workers", "to_workers"});
  for (const SeriesResult& sr : a.series) {
    for (const analysis::ScaleLoss& l : sr.losses) {
      if (l.gains.empty()) continue;
      std::vector<Cell> row = {sr.series, l.n0, l.n1, pct(l.lost)};
      for (const std::string& name : causes) {
        Cell cell = Cell::null();
        for (const analysis::LossCause& c : l.causes) {
          if (c.name == name) cell = pct(c.points);
        }
        row.push_back(cell);
      }
      row.push_back(pct(l.rest));
      t.add_row(std::move(row));
    }
  }
  return t;
}

// The user's --what-if rows: the epoch and step time predicted at each scale.
Table what_if_table(const ScalabilityAnalysis& a) {
  Table t;
  t.title =
      "What if: the profiled steps of every rank re-timed under each change (what-if model), applied to the "
      "time in the steps";
  t.columns = {{"series", "Strategy"},
               {"workers", "Workers"},
               {"what_if", "What if"},
               {"epoch_s", "Epoch (s)"},
               {"predicted_epoch_s", "Predicted epoch (s)"},
               {"gain_s", "Gain (s)"},
               {"gain_pts", "Gain (% of epoch)"},
               {"step_ms", "Step (ms)"},
               {"predicted_step_ms", "Predicted step (ms)"},
               {"predicted_step_ms_min", "Predicted step, fastest (ms)"},
               {"predicted_step_ms_max", "Predicted step, slowest (ms)"},
               {"basis", "", true}};
  t.set_importance(Importance::kKey, {"series", "workers", "what_if"});
  t.set_importance(Importance::kDetail, {"predicted_step_ms_min", "predicted_step_ms_max"});
  for (const analysis::WhatIfRow& r : a.what_ifs) {
    const analysis::WhatIfOutcome& o = r.outcome;
    const double gain = o.epoch_s - o.predicted_epoch_s;
    t.add_row({r.series, r.workers, r.spec.text, num(o.epoch_s, 3), num(o.predicted_epoch_s, 3), num(gain, 3),
               num(o.epoch_s > 0 ? 100.0 * gain / o.epoch_s : tables::kNaN, 1), num(o.step_ms, 2),
               num(o.predicted_step_ms, 2), num(o.predicted_step_ms_min, 2), num(o.predicted_step_ms_max, 2),
               std::string("every rank's profiled steps re-timed across the collectives matched between ranks, the "
                           "change applied to the time in the steps of the epoch")});
  }
  return t;
}

// The epoch time projected by the what-if model beside Amdahl's.
Table model_projection_table(const ScalabilityAnalysis& a) {
  Table t;
  t.title = "Projection to more workers from the what-if model (a projection, not a measurement), beside Amdahl's";
  t.columns = {{"series", "Strategy"},
               {"workers", "Workers"},
               {"predicted_epoch_s", "Model epoch (s)"},
               {"amdahl_epoch_s", "Amdahl epoch (s)"},
               {"assumptions", "Assumptions"}};
  t.set_importance(Importance::kKey, {"series", "workers"});
  t.set_importance(Importance::kDetail, {"assumptions"});
  for (const SeriesResult& sr : a.series) {
    for (int k = 0; k < 2; ++k) {
      const analysis::ModelProjection& p = sr.model_projection[k];
      if (!p.ok) continue;
      double amdahl = tables::kNaN;
      for (const ScaleGroup& g : a.groups) {
        if (g.series == sr.series && g.workers == sr.amdahl.base_workers && g.epoch.count > 0 &&
            sr.projected_speedup[k] > 0) {
          amdahl = g.epoch.mean / sr.projected_speedup[k];
        }
      }
      t.add_row({sr.series, p.workers, num(p.predicted_epoch_s, 3), num(amdahl, 3), p.assumptions});
    }
  }
  return t;
}

// The names of a section with one table.
struct SectionNames {
  const char* key;
  const char* title;
  const char* table_title;
  const char* table_key;
};

// A section of one row per configuration with itwinai's operator self-time sums: the fraction, the
// given sums in seconds, the ranks pooled and the basis.
ReportSection fraction_section(const ScalabilityAnalysis& a, const SectionNames& names, std::string note,
                               double ScaleGroup::*fraction,
                               const std::vector<std::pair<Column, int64_t ComputationSums::*>>& sums) {
  ReportSection s;
  s.key = names.key;
  s.title = names.title;
  s.notes.push_back(std::move(note));
  Table t;
  t.title = names.table_title;
  t.columns = {
      {"strategy", "Strategy"}, {"num_gpus", "Workers"}, {"computation_fraction_pct", "Computation fraction (%)"}};
  for (const auto& [column, field] : sums) t.columns.push_back(column);
  t.columns.push_back({"ranks", "Ranks"});
  t.columns.push_back({"basis", "Basis"});
  t.set_importance(Importance::kKey, {"strategy", "num_gpus"});
  t.set_importance(Importance::kUseful, {"computation_s", "communication_s", "total_s", "profiler_step_s"});
  t.set_importance(Importance::kDetail, {"ranks", "basis"});
  for (const ScaleGroup& g : a.groups) {
    if (!g.computation) continue;
    const ComputationSums& c = *g.computation;
    std::vector<Cell> row = {g.series, g.workers, pct(g.*fraction)};
    for (const auto& [column, field] : sums) row.emplace_back(static_cast<double>(c.*field) / 1e9, 6);
    row.emplace_back(c.ranks);
    row.emplace_back(std::string(analysis::fraction_basis_name(c.basis)));
    t.add_row(std::move(row));
  }
  s.table_keys = {names.table_key};
  s.tables = {std::move(t)};
  return s;
}

}  // namespace

std::vector<ReportSection> scalability_sections(const ScalabilityAnalysis& a) {
  std::vector<ReportSection> out;
  const int skip = a.options.skip_epochs;

  // Epoch time and scaling
  bool any_epochs = false;
  for (const ScaleGroup& g : a.groups) any_epochs |= g.epoch.count > 0 || g.failed;
  if (any_epochs) {
    ReportSection s;
    s.key = "epoch_time";
    s.title = "Epoch Time Report";
    s.notes.push_back(skip > 0 ? fmt::format("The first {} epoch(s) of every run are skipped as warm-up "
                                             "(--skip-epochs {}); repetitions of a configuration are pooled.",
                                             skip, skip)
                               : "No warm-up epochs skipped (--skip-epochs 0); repetitions are pooled.");
    for (const std::string& line : failure_sentences(a)) s.notes.push_back(line);
    Table t;
    t.title = "Epoch time per strategy and number of workers";
    t.columns = {{"strategy", "Strategy"},  {"workers", "Workers"}, {"nodes", "Nodes"},         {"runs", "Runs"},
                 {"epochs", "Epochs used"}, {"mean_s", "Mean (s)"}, {"median_s", "Median (s)"}, {"std_s", "Std (s)"},
                 {"min_s", "Min (s)"},      {"max_s", "Max (s)"}};
    // Where a configuration failed, both tables show it as a row of its own, FAILED, with no figures,
    // and say what each strategy's baseline is; otherwise they stay as they were.
    const bool failed = a.any_failed_group;
    if (failed) {
      t.columns.push_back({"status", "Status"});
      t.columns.push_back({"exit_code", "Exit code"});
      t.columns.push_back({"log", "Log"});
    }
    t.set_importance(Importance::kKey, {"strategy", "workers"});
    t.set_importance(Importance::kUseful, {"std_s", "min_s", "max_s", "log"});
    t.set_importance(Importance::kDetail, {"nodes", "runs", "epochs"});
    Table sc;
    sc.title = failed ? "Relative speedup and parallel efficiency (baseline: each strategy's smallest worker count "
                        "that did not fail)"
                      : "Relative speedup and parallel efficiency (baseline: each strategy's smallest worker count)";
    sc.columns = {{"strategy", "Strategy"},
                  {"workers", "Workers"},
                  {"nodes", "Nodes"},
                  {"mean_s", "Mean epoch (s)"},
                  {"speedup", "Speedup (x)"},
                  {"ideal_speedup", "Ideal speedup (x)"},
                  {"efficiency_pct", "Efficiency (%)"}};
    if (failed) {
      sc.columns.push_back({"status", "Status"});
      sc.columns.push_back({"baseline_workers", "Baseline (workers)"});
    }
    sc.set_importance(Importance::kKey, {"strategy", "workers"});
    sc.set_importance(Importance::kUseful, {"mean_s"});
    sc.set_importance(Importance::kDetail, {"nodes", "ideal_speedup"});
    for (const ScaleGroup& g : a.groups) {
      if (g.epoch.count == 0 && !g.failed) continue;
      if (g.failed) {
        const FailedCells fc = failed_cells(a, g);
        const Cell none = Cell::null();
        t.add_row({g.series, g.workers, nodes_cell(g.nodes), static_cast<int64_t>(g.failed_runs.size()), int64_t{0},
                   none, none, none, none, none, fc.status, fc.exit_code, fc.log});
        const int64_t base = analysis::baseline_workers(a, g.series);
        sc.add_row({g.series, g.workers, nodes_cell(g.nodes), none, none, none, none, fc.status,
                    base > 0 ? Cell(base) : none});
        continue;
      }
      t.add_row({g.series, g.workers, nodes_cell(g.nodes), static_cast<int64_t>(g.runs.size()), g.epoch.count,
                 num(g.epoch.mean, 3), num(g.epoch.median, 3), num(g.epoch.std, 3), num(g.epoch.min, 3),
                 num(g.epoch.max, 3)});
      sc.add_row({g.series, g.workers, nodes_cell(g.nodes), num(g.epoch.mean, 3), num(g.scaling.speedup, 3),
                  num(g.scaling.ideal_speedup, 3), pct(g.scaling.efficiency)});
      if (failed) {
        t.rows.back().insert(t.rows.back().end(), {Cell("measured"), Cell::null(), Cell::null()});
        sc.rows.back().insert(sc.rows.back().end(), {Cell("measured"), Cell(analysis::baseline_workers(a, g.series))});
      }
    }
    add_scaling_mode_columns(a, &sc);
    s.table_keys = {"epoch_time", "scaling"};
    s.tables = {std::move(t), std::move(sc)};
    out.push_back(std::move(s));

    ReportSection am;
    am.key = "amdahl";
    am.title = "Amdahl Projection";
    am.notes.push_back(
        "PROJECTION, not a measurement: T(n) = a + b/n fitted by least squares to the mean epoch times; serial "
        "fraction = a / (a + b); projected speedup relative to the smallest measured worker count. Two "
        "parameters fitted through two worker counts pass through both exactly: the fit then shows no evidence of "
        "its quality (no RMS is given); measure a third scale to test it.");
    Table p;
    p.title = "Amdahl fit and projected speedup at 2x and 4x the largest measured scale";
    p.columns = {{"strategy", "Strategy"},
                 {"points", "Points"},
                 {"serial_fraction_pct", "Serial fraction (%)"},
                 {"serial_s", "a: serial (s)"},
                 {"parallel_s", "b: parallel (s)"},
                 {"rms_residual_s", "Fit RMS (s)"},
                 {"projected_workers_2x", "Workers @2x"},
                 {"projected_speedup_2x", "Proj. speedup @2x (x)"},
                 {"projected_efficiency_2x_pct", "Proj. eff. @2x (%)"},
                 {"projected_workers_4x", "Workers @4x"},
                 {"projected_speedup_4x", "Proj. speedup @4x (x)"},
                 {"projected_efficiency_4x_pct", "Proj. eff. @4x (%)"},
                 {"kind", "Kind"}};
    p.set_importance(Importance::kKey, {"strategy"});
    p.set_importance(Importance::kUseful, {"serial_s", "parallel_s", "projected_workers_4x", "projected_speedup_4x",
                                           "projected_efficiency_4x_pct"});
    p.set_importance(Importance::kDetail, {"points", "rms_residual_s", "kind"});
    for (const SeriesResult& sr : a.series) {
      if (!sr.amdahl.ok) {
        p.add_row({sr.series, sr.amdahl.points, Cell::null(), Cell::null(), Cell::null(), Cell::null(), Cell::null(),
                   Cell::null(), Cell::null(), Cell::null(), Cell::null(), Cell::null(), "no fit (one worker count)"});
        continue;
      }
      // Two parameters through two points: the fit is exact whatever the data, and its zero residual
      // says nothing about how well the model fits; no RMS is shown then.
      const bool exact = sr.amdahl.points == 2 && !sr.amdahl.constrained;
      p.add_row({sr.series, sr.amdahl.points, pct(sr.amdahl.serial_fraction), num(sr.amdahl.serial_s, 3),
                 num(sr.amdahl.parallel_s, 3), exact ? Cell::null() : num(sr.amdahl.rms_residual_s, 3),
                 sr.projected_workers[0], num(sr.projected_speedup[0], 3), pct(sr.projected_efficiency[0]),
                 sr.projected_workers[1], num(sr.projected_speedup[1], 3), pct(sr.projected_efficiency[1]),
                 sr.amdahl.constrained ? "projection (clamped fit)"
                 : exact               ? "projection (exact through 2 points: no evidence of fit quality)"
                                       : "projection"});
    }
    am.table_keys = {"amdahl"};
    am.tables = {std::move(p)};
    out.push_back(std::move(am));
    if (std::optional<ReportSection> tp = throughput_section(a)) out.push_back(std::move(*tp));
  }

  // GPU data
  bool any_gpu = false;
  for (const ScaleGroup& g : a.groups) any_gpu |= g.gpus > 0;
  if (any_gpu) {
    ReportSection s;
    s.key = "gpu";
    s.title = "GPU Data Report";
    s.notes.push_back(
        "Energy: the driver's counter when every sample has it, else the trapezoid rule over power and sample "
        "times; itwinai's CSVs use its own rule (power x probing interval). Energy per epoch = run energy / epochs "
        "of the run (warm-up included: the energy covers it).");
    Table t;
    t.title = "GPU utilization and energy per strategy and number of workers";
    t.columns = {{"strategy", "Strategy"},
                 {"workers", "Workers"},
                 {"nodes", "Nodes"},
                 {"gpus", "GPUs sampled"},
                 {"utilization_pct", "Utilization (%)"},
                 {"energy_wh_total", "Energy total (Wh)"},
                 {"energy_wh_per_run", "Energy per run (Wh)"},
                 {"energy_wh_per_epoch", "Energy per epoch (Wh)"},
                 {"energy_method", "Energy rule"}};
    t.set_importance(Importance::kKey, {"strategy", "workers"});
    t.set_importance(Importance::kUseful, {"energy_wh_total", "energy_wh_per_run"});
    t.set_importance(Importance::kDetail, {"nodes", "gpus", "energy_method"});
    for (const ScaleGroup& g : a.groups) {
      if (g.gpus == 0) continue;
      t.add_row({g.series, g.workers, nodes_cell(g.nodes), g.gpus, num(g.utilization_pct, 2), num(g.energy_wh_total, 4),
                 num(g.energy_wh_per_run, 4), num(g.energy_wh_per_epoch, 4),
                 g.energy_method.empty() ? Cell::null() : Cell(g.energy_method)});
    }
    Table d;
    d.title = "Per-GPU detail";
    d.columns = {{"strategy", "Strategy"},     {"workers", "Workers"},          {"run", "Run"},
                 {"device", "Device"},         {"samples", "Samples"},          {"utilization_pct", "Utilization (%)"},
                 {"energy_wh", "Energy (Wh)"}, {"energy_method", "Energy rule"}};
    for (const GpuDeviceRow& r : a.devices) {
      d.add_row({r.series, r.workers, r.run, r.device, r.samples, num(r.utilization_pct, 2), num(r.energy_wh, 4),
                 r.method.empty() ? Cell::null() : Cell(r.method)});
    }
    s.table_keys = {"gpu", "gpu_devices"};
    s.tables = {std::move(t), std::move(d)};
    out.push_back(std::move(s));
  }

  // Straggler causes (issue 33): a rank's slow steps beside its GPU's clock in them.
  if (std::optional<ReportSection> sc = straggler_causes_section(a)) out.push_back(std::move(*sc));

  // Traces
  bool any_traces = false;
  for (const ScaleGroup& g : a.groups) any_traces |= g.traces && g.traces->span_ns > 0;
  if (any_traces) {
    ReportSection s;
    s.key = "trace";
    s.title = "Trace Breakdown Report";
    s.notes.push_back(
        "Shares of GPU time from the profiler traces (complete ProfilerSteps, first to last device event per rank, "
        "ranks summed): computation, communication not hidden under computation, memory copies hidden under "
        "neither, other device work, idle.");
    Table t;
    t.title = "GPU time by kind";
    t.columns = {{"strategy", "Strategy"},
                 {"workers", "Workers"},
                 {"nodes", "Nodes"},
                 {"ranks", "Ranks traced"},
                 {"span_ms", "GPU span (ms)"},
                 {"computation_pct", "Computation (%)"},
                 {"communication_pct", "Communication (%)"},
                 {"memory_pct", "Memory (%)"},
                 {"other_pct", "Other (%)"},
                 {"idle_pct", "Idle (%)"}};
    t.set_importance(Importance::kKey, {"strategy", "workers"});
    t.set_importance(Importance::kUseful, {"memory_pct", "other_pct"});
    t.set_importance(Importance::kDetail, {"nodes", "ranks", "span_ms"});
    for (const ScaleGroup& g : a.groups) {
      if (!g.traces || g.traces->span_ns <= 0) continue;
      t.add_row({g.series, g.workers, nodes_cell(g.nodes), g.traces->ranks,
                 Cell(static_cast<double>(g.traces->span_ns) / 1e6, 3), pct(g.trace_share(&TraceSums::computation_ns)),
                 pct(g.trace_share(&TraceSums::communication_ns)), pct(g.trace_share(&TraceSums::memory_ns)),
                 pct(g.trace_share(&TraceSums::other_ns)), pct(g.trace_share(&TraceSums::idle_ns))});
    }
    s.table_keys = {"trace_breakdown"};
    s.tables = {std::move(t)};
    out.push_back(std::move(s));
  }

  // Peak device memory per GPU against workers (issue 23), where the traces have [memory] events.
  bool any_memory = false;
  for (const ScaleGroup& g : a.groups) any_memory |= g.peak_device_memory_bytes >= 0;
  if (any_memory) {
    ReportSection s;
    s.key = "memory";
    s.title = "Peak Device Memory";
    s.notes.push_back(
        "Peak bytes allocated on one GPU (the trace's Total Allocated of its [memory] events, profile_memory=True, "
        "blocks allocated before profiling included), the largest and the smallest over the ranks traced: with "
        "data parallelism it stays flat as workers grow; sharded training (FSDP, ZeRO) should shrink it.");
    Table t;
    t.title = "Peak device memory per GPU";
    t.columns = {{"strategy", "Strategy"},
                 {"workers", "Workers"},
                 {"max_peak_gb", "Max peak (GB)"},
                 {"min_peak_gb", "Min peak (GB)"},
                 {"imbalance", "Max / min"}};
    t.set_importance(Importance::kKey, {"strategy", "workers"});
    for (const ScaleGroup& g : a.groups) {
      if (g.peak_device_memory_bytes < 0) continue;
      const auto max = static_cast<double>(g.peak_device_memory_bytes);
      const auto min = static_cast<double>(g.min_peak_device_memory_bytes);
      t.add_row(
          {g.series, g.workers, Cell(max / 1e9, 3), Cell(min / 1e9, 3), min > 0 ? Cell(max / min, 3) : Cell::null()});
    }
    s.table_keys = {"peak_device_memory"};
    s.tables = {std::move(t)};
    out.push_back(std::move(s));
  }

  // FLOPs and MFU against workers (issue 23), where the traces recorded shapes.
  bool any_flops = false;
  for (const ScaleGroup& g : a.groups) any_flops |= !std::isnan(g.tflops_per_gpu);
  if (any_flops) {
    ReportSection s;
    s.key = "flops";
    s.title = "FLOPs and MFU";
    s.notes.push_back(
        "FLOPs from the shapes the profiler recorded (record_shapes=True; docs/flops.md: FlopCounterMode's "
        "counting), over the profiled steps of every rank traced: achieved TFLOP/s per GPU (the FLOPs over the "
        "ranks' step time) and MFU (the time the matmul, convolution and attention FLOPs would take at the "
        "device's peak, docs/flops.md's table, over the step time). With perfect scaling both stay flat as "
        "workers grow; what falls is time lost to communication, waiting and overhead.");
    Table t;
    t.title = "FLOPs and MFU per GPU";
    t.columns = {{"strategy", "Strategy"},
                 {"workers", "Workers"},
                 {"tflops_per_gpu", "TFLOP/s per GPU"},
                 {"tflops_total", "TFLOP/s, all workers"},
                 {"mfu_pct", "MFU (%)"}};
    t.set_importance(Importance::kKey, {"strategy", "workers"});
    auto number = [](double v, int digits) { return std::isnan(v) ? Cell::null() : Cell(v, digits); };
    for (const ScaleGroup& g : a.groups) {
      if (std::isnan(g.tflops_per_gpu)) continue;
      t.add_row({g.series, g.workers, number(g.tflops_per_gpu, 4),
                 number(g.tflops_per_gpu * static_cast<double>(g.workers), 4), number(g.mfu_pct, 2)});
    }
    s.table_keys = {"flops"};
    s.tables = {std::move(t)};
    out.push_back(std::move(s));
  }

  // Collectives matched across ranks: communication vs. waiting for stragglers
  bool any_collectives = false;
  for (const ScaleGroup& g : a.groups) any_collectives |= g.traces && g.traces->collective_calls > 0;
  if (any_collectives) {
    ReportSection s;
    s.key = "collectives";
    s.title = "Collectives Across Ranks";
    s.notes.push_back(
        "Collective calls launched in the profiled steps (GPU communication kernels, or gloo ops on CPU runs), "
        "matched across the ranks of their process group: communication = each matched call's latency (the "
        "shortest duration over ranks) once per rank, waiting = each rank's wait for the last rank to arrive; both "
        "as shares of the profiled step time, ranks summed. Calls that could not be matched with confidence are "
        "counted, never paired by guess; where some are, the split is not used to explain the scaling.");
    Table t;
    t.title = "Time in collectives per strategy and number of workers";
    t.columns = {{"strategy", "Strategy"},
                 {"workers", "Workers"},
                 {"nodes", "Nodes"},
                 {"ranks", "Ranks traced"},
                 {"step_ms", "Profiled steps (ms, ranks summed)"},
                 {"calls", "Calls"},
                 {"matched", "Matched"},
                 {"communication_pct", "Communication (% of steps)"},
                 {"waiting_pct", "Waiting for stragglers (% of steps)"}};
    t.set_importance(Importance::kKey, {"strategy", "workers"});
    t.set_importance(Importance::kUseful, {"calls", "matched"});
    t.set_importance(Importance::kDetail, {"nodes", "ranks", "step_ms"});
    for (const ScaleGroup& g : a.groups) {
      if (!g.traces || g.traces->collective_calls == 0) continue;
      const TraceSums& c = *g.traces;
      const auto step = static_cast<double>(c.step_ns);
      t.add_row({g.series, g.workers, nodes_cell(g.nodes), c.ranks, Cell(step / 1e6, 3), c.collective_calls,
                 c.collectives_matched,
                 step > 0 ? pct(static_cast<double>(c.collective_latency_ns) / step) : Cell::null(),
                 step > 0 ? pct(static_cast<double>(c.collective_wait_ns) / step) : Cell::null()});
    }
    s.table_keys = {"collective_time"};
    s.tables = {std::move(t)};
    out.push_back(std::move(s));
  }

  // itwinai's computation fraction, and its deprecated computation vs. communication (only on its
  // --include-communication)
  bool any_comp = false;
  for (const ScaleGroup& g : a.groups) any_comp |= g.computation.has_value();
  if (any_comp) {
    out.push_back(fraction_section(
        a, {"computation", "Computation Data Report", "Computation vs. other", "computation_fraction"},
        "itwinai's computation fraction: self device time of ATen/c10/autograd operators over all self device "
        "time minus ProfilerStep*, all ranks pooled (cpu_self_time basis: the same rule on CPU self time, for "
        "traces without device time).",
        &ScaleGroup::computation_fraction,
        {{{"computation_s", "Computation (s)"}, &ComputationSums::computation_ns},
         {{"total_s", "Total self time (s)"}, &ComputationSums::total_ns},
         {{"profiler_step_s", "ProfilerStep* (s)"}, &ComputationSums::profiler_step_ns}}));
  }
  if (any_comp && a.options.include_communication) {
    out.push_back(fraction_section(
        a,
        {"communication", "Communication Data Report", "Computation vs. communication", "computation_vs_communication"},
        "itwinai's deprecated computation vs. communication: ATen/c10/autograd self time over that plus the self "
        "time of operators named nccl:all_reduce, nccl:broadcast, nccl:reduce, nccl:all_gather, nccl:gather, "
        "nccl:reduce_scatter, cudaStreamWaitEvent or cudaStreamSynchronize (its NCCL-only rule: gloo and RCCL "
        "names do not match). itwinai deprecated it as unreliable; with profiler traces, communication not "
        "hidden under computation is measured in \"Where Scaling Is Lost\".",
        &ScaleGroup::computation_vs_communication,
        {{{"computation_s", "Computation (s)"}, &ComputationSums::computation_ns},
         {{"communication_s", "Communication (s)"}, &ComputationSums::communication_ns}}));
  }

  // Where scaling is lost
  bool any_loss = false;
  for (const SeriesResult& sr : a.series) any_loss |= sr.has_loss();
  if (any_loss || !a.best.empty()) {
    ReportSection s;
    s.key = "scaling_loss";
    s.title = "Where Scaling Is Lost";
    for (const SeriesResult& sr : a.series) {
      for (const std::string& line : loss_sentences(sr)) s.notes.push_back(line);
    }
    for (const std::string& line : best_strategy_sentences(a)) s.notes.push_back(line);
    // One column per cause the analysis attributes (in order of first appearance), so a new cause
    // slots in as a column; what is not attributed is in other_pts. A row with the what-if model's
    // gains shows them (what fixing the cause would gain); the others the exclusive split.
    std::vector<std::string> causes;
    bool any_gains = false;
    for (const SeriesResult& sr : a.series) {
      for (const analysis::ScaleLoss& l : sr.losses) {
        any_gains |= !l.gains.empty();
        for (const analysis::LossCause& c : l.causes) {
          if (std::find(causes.begin(), causes.end(), c.name) == causes.end()) causes.push_back(c.name);
        }
        for (const analysis::CauseGain& g : l.gains) {
          if (std::find(causes.begin(), causes.end(), g.name) == causes.end()) causes.push_back(g.name);
        }
      }
    }
    Table t;
    t.title = any_gains
                  ? "Efficiency lost between each strategy's smallest scale and each larger one, and what fixing "
                    "each cause would gain (percentage points, what-if model)"
                  : "Efficiency lost between each strategy's smallest scale and each larger one (percentage points)";
    t.columns = {{"strategy", "Strategy"},
                 {"from_workers", "From workers"},
                 {"to_workers", "To workers"},
                 {"efficiency_pct", "Efficiency (%)"},
                 {"lost_pts", "Lost (pts)"}};
    for (const std::string& c : causes) t.columns.push_back(cause_column(c));
    // Communication's all-to-all imbalance: a part of the communication column, not a cause beside it.
    bool any_alltoall = false;
    for (const SeriesResult& sr : a.series) {
      for (const analysis::ScaleLoss& l : sr.losses) {
        for (const analysis::LossCause& c : l.causes) any_alltoall |= !c.details.empty();
      }
    }
    if (any_alltoall) t.columns.push_back({"alltoall_imbalance_pts", "Of communication: all-to-all imbalance (pts)"});
    if (any_gains) t.columns.push_back({"interaction_pts", "Interaction (pts)"});
    t.columns.push_back({"unattributed_pts", "Unattributed (pts)"});
    if (any_gains) t.columns.push_back({"all_fixed_epoch_s", "Epoch with all fixed (s)"});
    t.columns.push_back({"non_computation_from_pct", "Non-computation op. self time, from (%)"});
    t.columns.push_back({"non_computation_to_pct", "Non-computation op. self time, to (%)"});
    t.columns.push_back({"basis", "Basis"});
    // JSON only: the causes as a list, and other_pts, unattributed_pts's name before it was renamed.
    t.columns.push_back({"causes", "", true});
    t.columns.push_back({"other_pts", "", true});
    // JSON only: the measure of the cause columns, the gains as a list, and the rest beyond all fixes.
    t.columns.push_back({"measure", "", true});
    t.columns.push_back({"gains", "", true});
    t.columns.push_back({"gains_rest_pts", "", true});
    t.set_importance(Importance::kKey, {"strategy", "from_workers", "to_workers"});
    t.set_importance(Importance::kUseful, {"basis"});
    t.set_importance(Importance::kDetail, {"non_computation_from_pct", "non_computation_to_pct"});
    for (const SeriesResult& sr : a.series) {
      for (const analysis::ScaleLoss& l : sr.losses) {
        const bool gains = !l.gains.empty();
        std::vector<Cell> row = {sr.series, l.n0, l.n1, pct(l.efficiency), pct(l.lost)};
        for (const std::string& name : causes) {
          Cell cell = Cell::null();
          if (gains) {
            for (const analysis::CauseGain& g : l.gains) {
              if (g.name == name) cell = pct(g.points);
            }
          } else {
            for (const analysis::LossCause& c : l.causes) {
              if (c.name == name) cell = pct(c.points);
            }
          }
          row.push_back(cell);
        }
        if (any_alltoall) {
          Cell cell = Cell::null();
          for (const analysis::LossCause& c : l.causes) {
            for (const analysis::CauseDetail& d : c.details) {
              if (d.name == analysis::kAlltoallImbalanceDetail) cell = pct(d.points);
            }
          }
          row.push_back(cell);
        }
        const double rest = gains ? l.gains_rest : l.rest;
        if (any_gains) row.push_back(gains ? pct(l.interaction) : Cell::null());
        row.push_back(pct(rest));
        if (any_gains) row.push_back(gains ? num(l.all_fixed_epoch_s, 3) : Cell::null());
        row.push_back(pct(l.non_computation0));
        row.push_back(pct(l.non_computation1));
        row.emplace_back(std::string(analysis::loss_basis_name(l.basis)));
        row.emplace_back(JsonText{loss_causes_json(l)});
        row.push_back(pct(rest));
        row.emplace_back(std::string(gains ? "what-if" : "exclusive split"));
        row.emplace_back(JsonText{loss_gains_json(l)});
        row.push_back(gains ? pct(l.gains_rest) : Cell::null());
        t.add_row(std::move(row));
      }
    }
    Table b;
    b.title = "Best strategy per scale (lowest mean epoch time)";
    b.columns = {{"workers", "Workers"},     {"strategy", "Best strategy"},    {"mean_s", "Mean epoch (s)"},
                 {"runner_up", "Runner-up"}, {"runner_up_s", "Runner-up (s)"}, {"candidates", "Strategies"}};
    b.set_importance(Importance::kKey, {"workers"});
    b.set_importance(Importance::kUseful, {"runner_up", "runner_up_s"});
    b.set_importance(Importance::kDetail, {"candidates"});
    for (const analysis::BestAtScale& x : a.best) {
      b.add_row({x.workers, x.strategy, num(x.seconds, 3), x.runner_up.empty() ? Cell::null() : Cell(x.runner_up),
                 num(x.runner_up_seconds, 3), x.candidates});
    }
    s.table_keys = {"scaling_loss"};
    s.tables.push_back(std::move(t));
    if (any_gains) {
      s.table_keys.emplace_back("scaling_split");
      s.tables.push_back(split_table(a, causes));
    }
    if (!a.what_ifs.empty()) {
      s.table_keys.emplace_back("what_if");
      s.tables.push_back(what_if_table(a));
    }
    if (Table p = model_projection_table(a); !p.rows.empty()) {
      s.table_keys.emplace_back("model_projection");
      s.tables.push_back(std::move(p));
    }
    s.table_keys.emplace_back("best_strategy");
    s.tables.push_back(std::move(b));
    out.push_back(std::move(s));
  }

  // The runs used
  ReportSection r;
  r.key = "runs";
  r.title = "Runs Used";
  Table t;
  t.title = "Runs read";
  t.columns = {{"experiment", "Experiment"},
               {"run", "Run"},
               {"strategy", "Strategy"},
               {"workers", "Workers"},
               {"nodes", "Nodes"},
               {"status", "Status"},
               {"epochs_read", "Epochs read"},
               {"epochs_used", "Epochs used"},
               {"gpu_series", "GPUs sampled"},
               {"trace_files", "Traces"},
               {"layout", "Layout"},
               {"path", "Path"}};
  // Where a run failed, each run's exit code and job log too (otherwise the table stays as it was).
  if (a.any_failed_run) {
    t.columns.push_back({"exit_code", "Exit code"});
    t.columns.push_back({"log", "Log"});
  }
  t.set_importance(Importance::kKey, {"run"});
  t.set_importance(Importance::kUseful, {"experiment", "path"});
  t.set_importance(Importance::kDetail, {"nodes", "epochs_read", "gpu_series", "trace_files", "layout"});
  for (size_t i = 0; i < a.runs.size(); ++i) {
    const RunData& run = *a.runs[i];
    t.add_row({run.experiment, run.name, run.strategy, run.workers, nodes_cell(run.nodes),
               run.status.empty() ? Cell::null() : Cell(run.status), static_cast<int64_t>(run.epochs.size()),
               a.run_epochs_used[i], static_cast<int64_t>(run.gpus.size()),
               static_cast<int64_t>(run.trace_files.size()), run.layout, run.path});
    if (a.any_failed_run) {
      t.rows.back().push_back(run.exit_code ? Cell(*run.exit_code) : Cell::null());
      t.rows.back().push_back(text_cell(run.log));
    }
  }
  r.table_keys = {"runs"};
  r.tables = {std::move(t)};
  out.push_back(std::move(r));
  return out;
}

std::string render_sections_text(const std::vector<ReportSection>& sections, const RenderOptions& options) {
  std::string out;
  RenderOptions ro = options;
  ro.format = Format::kTable;
  const bool color = ro.color;
  // Notes wrap at the width the tables fit, unless --wide asked for one line each.
  const size_t note_width = ro.wide ? 0 : ro.max_width;
  for (const ReportSection& s : sections) {
    if (!out.empty()) out += "\n";
    const std::string heading = fmt::format("######## {} ########", terminal_safe(s.title));
    out += color ? fmt::format("\x1b[1;36m{}\x1b[0m\n", heading) : heading + "\n";
    for (const std::string& n : s.notes) {
      for (const std::string& line : wrap_words(terminal_safe(n), note_width)) out += line + "\n";
    }
    for (size_t i = 0; i < s.tables.size(); ++i) {
      const Table& t = s.tables[i];
      out += "\n";
      // The console shows one row per configuration; per-device detail would bury it (one row per GPU
      // of every run), so it is only named here and written by the other forms.
      if (s.table_keys[i] == "gpu_devices") {
        const std::string line =
            fmt::format("{}: {} row(s), one per GPU of every run: see --format csv or json, or the --html page.",
                        t.title, t.rows.size());
        for (const std::string& piece : wrap_words(line, note_width)) out += piece + "\n";
        continue;
      }
      out += render(t, ro);
    }
  }
  return out;
}

namespace {

std::string json_string_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + json_quote(items[i]);
  return out + "]";
}

}  // namespace

std::string render_sections_json(const std::vector<ReportSection>& sections, const ScalabilityAnalysis& analysis) {
  RenderOptions ro;
  ro.format = Format::kJson;
  std::string out = "{\n" + json_quote("skip_epochs") + ": " + fmt::format("{}", analysis.options.skip_epochs);
  for (const ReportSection& s : sections) {
    for (size_t i = 0; i < s.tables.size(); ++i) {
      std::string body = render(s.tables[i], ro);
      while (!body.empty() && body.back() == '\n') body.pop_back();
      out += ",\n" + json_quote(s.table_keys[i]) + ": " + body;
    }
  }
  std::vector<std::string> explanation = failure_sentences(analysis);
  for (const SeriesResult& sr : analysis.series) {
    for (const std::string& line : loss_sentences(sr)) explanation.push_back(line);
  }
  for (const std::string& line : best_strategy_sentences(analysis)) explanation.push_back(line);
  for (const std::string& line : throughput_sentences(analysis)) explanation.push_back(line);
  out += ",\n" + json_quote("explanation") + ": " + json_string_array(explanation);
  out += ",\n" + json_quote("warnings") + ": " + json_string_array(texts(analysis.warnings));
  out += ",\n" + json_quote("errors") + ": " + json_string_array(texts(analysis.errors));
  return out + "\n}\n";
}

std::string render_sections_csv(const std::vector<ReportSection>& sections) {
  RenderOptions ro;
  ro.format = Format::kCsv;
  std::string out;
  for (const ReportSection& s : sections) {
    for (size_t i = 0; i < s.tables.size(); ++i) {
      if (!out.empty()) out += "\n";
      out += "# " + s.table_keys[i] + "\n" + render(s.tables[i], ro);
    }
  }
  return out;
}

}  // namespace scaleprof::report

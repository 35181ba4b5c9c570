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
#include "report/scalability_loss_section.h"
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

  // Where scaling is lost (report/scalability_loss_section.h)
  if (std::optional<ReportSection> s = scaling_loss_section(a)) out.push_back(std::move(*s));

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

#include "report/scalability_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace scaleprof::report {

namespace {

using analysis::kNaN;

// Energy of one GPU series in joules and the rule used.
std::pair<double, std::string> series_energy_j(const GpuSeries& s) {
  if (!std::isnan(s.probing_interval_s)) {
    return {analysis::rectangle_energy_j(s.power_w, s.probing_interval_s), "rectangle"};
  }
  // The driver's counter when every sample has it, else power over time.
  bool counter = !s.energy_j.empty();
  for (double e : s.energy_j) counter &= !std::isnan(e);
  if (counter) return {analysis::counter_energy_j(s.energy_j), "counter"};
  bool any_power = false;
  for (double p : s.power_w) any_power |= !std::isnan(p);
  if (!any_power) return {kNaN, ""};
  return {analysis::trapezoid_energy_j(s.time_s, s.power_w), "trapezoid"};
}

std::string join_methods(const std::set<std::string>& methods) {
  std::string out;
  for (const std::string& m : methods) out += (out.empty() ? "" : "+") + m;
  return out;
}

std::string fmt_s(double s) {
  if (!std::isfinite(s)) return "n/a";
  if (s >= 100) return fmt::format("{:.1f} s", s);
  if (s >= 1) return fmt::format("{:.2f} s", s);
  return fmt::format("{:.3f} s", s);
}

std::string fmt_pct(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.1f}%", fraction * 100.0) : "n/a";
}

std::string fmt_pts(double fraction) {
  return fmt::format("{:.1f}", fraction * 100.0);
}

void explain_loss(SeriesResult* s) {
  const auto& l = s->loss;
  std::vector<std::string>& out = s->sentences;
  out.push_back(fmt::format(
      "{}: from {} to {} workers the epoch time went from {} to {}, a speedup of {:.2f}x where {:.2f}x is ideal: "
      "parallel efficiency {}.",
      s->series, s->n0, s->n1, fmt_s(s->t0), fmt_s(s->t1), s->t0 / s->t1,
      static_cast<double>(s->n1) / static_cast<double>(s->n0), fmt_pct(l.efficiency)));
  if (!(l.lost > 0)) {
    out.push_back(fmt::format("{} lost no efficiency (at or above linear scaling).", s->series));
    return;
  }
  if (s->loss_basis == "none") {
    out.push_back(fmt::format(
        "{} percentage points of efficiency were lost; without profiler traces or computation data at both scales "
        "they cannot be attributed.",
        fmt_pts(l.lost)));
    return;
  }
  std::string parts;
  for (size_t k = 0; k < s->components.size(); ++k) {
    const double pts = l.parts[k];
    std::string what;
    if (std::isnan(pts)) {
      what = fmt::format("{} cannot be measured at both scales", s->components[k]);
    } else {
      const std::string detail = fmt::format(
          "{} of the epoch time at {} worker{}, {} at {}: {} per epoch vs. {} if it had shrunk with the "
          "workers",
          fmt_pct(s->share0[k]), s->n0, s->n0 == 1 ? "" : "s", fmt_pct(s->share1[k]), s->n1,
          fmt_s(s->t1 * s->share1[k]), fmt_s(s->t0 * s->share0[k] * s->n0 / s->n1));
      what = pts >= 0 ? fmt::format("{} growth accounts for {} points ({})", s->components[k], fmt_pts(pts), detail)
                      : fmt::format("{} shrank faster than the workers grew and gives back {} points ({})",
                                    s->components[k], fmt_pts(-pts), detail);
    }
    parts += (parts.empty() ? "" : "; ") + what;
  }
  out.push_back(fmt::format(
      "Of the {} points of efficiency lost, {}; {}.", fmt_pts(l.lost), parts,
      l.rest >= 0 ? fmt::format("everything else accounts for {} points", fmt_pts(l.rest))
                  : fmt::format("everything else shrank faster than the workers grew and gives back {} points",
                                fmt_pts(-l.rest))));
  if (s->loss_basis == "computation_fraction") {
    out.push_back(
        "(No device traces at both scales: the split uses itwinai's computation fraction, which counts all time "
        "outside ATen/c10/autograd operators as non-computation, so communication and idle time are not "
        "separated.)");
  }
  // The largest named cause.
  size_t best = s->components.size();
  for (size_t k = 0; k < s->components.size(); ++k) {
    if (!std::isnan(l.parts[k]) && (best == s->components.size() || l.parts[k] > l.parts[best])) best = k;
  }
  if (best < s->components.size()) {
    if (l.parts[best] >= l.rest) {
      out.push_back(
          fmt::format("The main reason {} does not scale better is {} growth.", s->series, s->components[best]));
    } else {
      out.push_back(fmt::format(
          "Most of the loss is outside {}: work that does not shrink with more workers (per-worker overheads, a "
          "serial part, smaller per-worker batches running less efficiently).",
          s->components.size() == 1 ? s->components[0] : "communication and idle time"));
    }
  }
}

}  // namespace

double ScaleGroup::trace_share(int64_t TraceSums::*part) const {
  if (!traces || traces->span_ns <= 0) return kNaN;
  return static_cast<double>((*traces).*part) / static_cast<double>(traces->span_ns);
}

ScalabilityAnalysis analyse_scalability(const ScalabilityData& data, const ScalabilityOptions& options) {
  ScalabilityAnalysis out;
  out.options = options;
  out.warnings = data.warnings;
  out.errors = data.errors;
  std::set<std::string> experiments;
  for (const RunData& r : data.runs) experiments.insert(r.experiment);
  const bool many_experiments = experiments.size() > 1;

  // Group runs by (series, workers, nodes).
  std::map<std::tuple<std::string, int64_t, int64_t>, ScaleGroup> groups;
  out.runs.reserve(data.runs.size());
  for (size_t i = 0; i < data.runs.size(); ++i) {
    const RunData& r = data.runs[i];
    out.runs.push_back(&r);
    std::string series = many_experiments && !r.experiment.empty() ? r.experiment + "/" + r.strategy : r.strategy;
    ScaleGroup& g = groups[{series, r.workers, r.nodes}];
    g.series = std::move(series);
    g.workers = r.workers;
    g.nodes = r.nodes;
    g.runs.push_back(i);
  }

  bool any_epochs = false;
  bool any_gpu = false;
  bool any_computation = false;
  bool any_traces = false;
  out.run_epochs_used.assign(data.runs.size(), 0);
  for (auto& [key, g] : groups) {
    std::vector<double> kept;
    std::vector<double> util;
    std::set<std::string> methods;
    double energy_total = 0;
    int64_t energy_runs = 0;
    double per_epoch_sum = 0;
    int64_t per_epoch_runs = 0;
    for (size_t i : g.runs) {
      const RunData& r = data.runs[i];
      g.epochs_read += static_cast<int64_t>(r.epochs.size());
      const std::vector<analysis::EpochTime> used = analysis::skip_warmup(r.epochs, options.skip_epochs);
      out.run_epochs_used[i] = static_cast<int64_t>(used.size());
      if (!r.epochs.empty() && used.empty()) {
        out.warnings.push_back(
            fmt::format("{}: all {} epoch(s) skipped as warm-up (--skip-epochs {}); run not used "
                        "for epoch times",
                        r.path, r.epochs.size(), options.skip_epochs));
      }
      for (const auto& e : used) kept.push_back(e.seconds);
      // GPU data
      double run_energy = 0;
      bool run_has_energy = false;
      for (const GpuSeries& s : r.gpus) {
        ++g.gpus;
        auto [joules, method] = series_energy_j(s);
        GpuDeviceRow d;
        d.series = g.series;
        d.workers = g.workers;
        d.run = r.name;
        d.device = s.device;
        d.samples = static_cast<int64_t>(s.time_s.size());
        d.utilization_pct = analysis::sample_stats(s.utilization_pct).mean;
        d.energy_wh = joules / 3600.0;
        d.method = method;
        out.devices.push_back(d);
        for (double u : s.utilization_pct) {
          if (!std::isnan(u)) util.push_back(u);
        }
        if (!std::isnan(joules)) {
          run_energy += joules;
          run_has_energy = true;
          methods.insert(method);
        }
      }
      if (run_has_energy) {
        energy_total += run_energy;
        ++energy_runs;
        if (!r.epochs.empty()) {
          per_epoch_sum += run_energy / static_cast<double>(r.epochs.size());
          ++per_epoch_runs;
        }
      }
      if (r.traces) {
        if (!g.traces) g.traces = TraceSums{};
        TraceSums& t = *g.traces;
        t.ranks += r.traces->ranks;
        t.span_ns += r.traces->span_ns;
        t.idle_ns += r.traces->idle_ns;
        t.computation_ns += r.traces->computation_ns;
        t.communication_ns += r.traces->communication_ns;
        t.memory_ns += r.traces->memory_ns;
        t.other_ns += r.traces->other_ns;
      }
    }
    // Computation sums: device-time runs only when any run has device time (bases do not mix).
    bool device_basis = false;
    for (size_t i : g.runs) {
      const RunData& r = data.runs[i];
      device_basis |= r.computation && r.computation->basis == analysis::FractionBasis::kDeviceSelf;
    }
    for (size_t i : g.runs) {
      const RunData& r = data.runs[i];
      if (!r.computation || (device_basis && r.computation->basis != analysis::FractionBasis::kDeviceSelf)) continue;
      if (!g.computation) {
        g.computation = ComputationSums{};
        g.computation->basis = r.computation->basis;
      }
      g.computation->computation_ns += r.computation->computation_ns;
      g.computation->total_ns += r.computation->total_ns;
      g.computation->profiler_step_ns += r.computation->profiler_step_ns;
      g.computation->ranks += r.computation->ranks;
    }
    if (g.computation) {
      const double denom = static_cast<double>(g.computation->total_ns - g.computation->profiler_step_ns);
      g.computation_fraction = denom > 0 ? static_cast<double>(g.computation->computation_ns) / denom : kNaN;
    }
    g.epoch = analysis::sample_stats(std::move(kept));
    if (!util.empty()) g.utilization_pct = analysis::sample_stats(std::move(util)).mean;
    if (energy_runs > 0) {
      g.energy_wh_total = energy_total / 3600.0;
      g.energy_wh_per_run = energy_total / 3600.0 / static_cast<double>(energy_runs);
      g.energy_method = join_methods(methods);
    }
    if (per_epoch_runs > 0) g.energy_wh_per_epoch = per_epoch_sum / 3600.0 / static_cast<double>(per_epoch_runs);
    any_epochs |= g.epoch.count > 0;
    any_gpu |= g.gpus > 0;
    any_computation |= g.computation.has_value();
    any_traces |= g.traces.has_value();
    out.groups.push_back(std::move(g));
  }

  if (data.runs.empty()) out.warnings.emplace_back("No runs found");
  if (!data.runs.empty() && !any_epochs) out.warnings.emplace_back("No epoch time data found");
  if (!data.runs.empty() && !any_gpu) out.warnings.emplace_back("No GPU data found");
  if (!data.runs.empty() && !any_traces) out.warnings.emplace_back("No profiler traces found");
  bool any_device_work = false;
  for (const ScaleGroup& g : out.groups) any_device_work |= g.traces && g.traces->span_ns > 0;
  if (any_traces && !any_device_work) {
    out.warnings.emplace_back("Profiler traces have no GPU work (CPU-only runs): no GPU time split");
  }
  if (!data.runs.empty() && !any_computation) out.warnings.emplace_back("No computation data found");

  // Per series: scaling, Amdahl, loss attribution.
  std::map<std::string, std::vector<ScaleGroup*>> by_series;
  for (ScaleGroup& g : out.groups) by_series[g.series].push_back(&g);
  std::vector<analysis::StrategyTime> times;
  for (auto& [name, list] : by_series) {
    std::vector<ScaleGroup*> timed;
    for (ScaleGroup* g : list) {
      if (g->epoch.count > 0) timed.push_back(g);
    }
    std::stable_sort(timed.begin(), timed.end(), [](const ScaleGroup* a, const ScaleGroup* b) {
      return std::tie(a->workers, a->nodes) < std::tie(b->workers, b->nodes);
    });
    std::vector<analysis::ScalePoint> points;
    points.reserve(timed.size());
    for (ScaleGroup* g : timed) points.push_back({g->workers, g->epoch.mean});
    const std::vector<analysis::ScalingRow> rows = analysis::relative_scaling(points);
    for (size_t i = 0; i < timed.size(); ++i) timed[i]->scaling = rows[i];
    for (ScaleGroup* g : timed) times.push_back({name, g->workers, g->epoch.mean});
    if (timed.empty()) continue;

    SeriesResult s;
    s.series = name;
    s.amdahl = analysis::fit_amdahl(points);
    if (s.amdahl.ok) {
      for (int k = 0; k < 2; ++k) {
        s.projected_workers[k] = s.amdahl.max_workers * (k == 0 ? 2 : 4);
        s.projected_speedup[k] = analysis::amdahl_speedup(s.amdahl, static_cast<double>(s.projected_workers[k]));
        s.projected_efficiency[k] = s.projected_speedup[k] * static_cast<double>(s.amdahl.base_workers) /
                                    static_cast<double>(s.projected_workers[k]);
      }
    }
    const ScaleGroup* g0 = timed.front();
    const ScaleGroup* g1 = timed.back();
    if (g1->workers > g0->workers) {
      s.has_loss = true;
      s.n0 = g0->workers;
      s.n1 = g1->workers;
      s.t0 = g0->epoch.mean;
      s.t1 = g1->epoch.mean;
      auto span_ok = [](const ScaleGroup* g) { return g->traces && g->traces->span_ns > 0; };
      if (span_ok(g0) && span_ok(g1)) {
        s.loss_basis = "traces";
        s.components = {"communication", "idle"};
        s.share0 = {g0->trace_share(&TraceSums::communication_ns), g0->trace_share(&TraceSums::idle_ns)};
        s.share1 = {g1->trace_share(&TraceSums::communication_ns), g1->trace_share(&TraceSums::idle_ns)};
      } else if (!std::isnan(g0->computation_fraction) && !std::isnan(g1->computation_fraction)) {
        s.loss_basis = "computation_fraction";
        s.components = {"non-computation"};
        s.share0 = {1.0 - g0->computation_fraction};
        s.share1 = {1.0 - g1->computation_fraction};
      } else {
        s.loss_basis = "none";
      }
      s.loss = analysis::attribute_efficiency_loss(s.n0, s.t0, s.share0, s.n1, s.t1, s.share1);
      explain_loss(&s);
    }
    out.series.push_back(std::move(s));
  }
  out.best = analysis::best_strategy_per_scale(times);
  for (const analysis::BestAtScale& b : out.best) {
    if (b.candidates < 2) continue;
    out.best_sentences.push_back(
        fmt::format("At {} worker{} {} is fastest ({} per epoch), {:.1f}% faster than {} ({}).", b.workers,
                    b.workers == 1 ? "" : "s", b.strategy, fmt_s(b.seconds),
                    (1.0 - b.seconds / b.runner_up_seconds) * 100.0, b.runner_up, fmt_s(b.runner_up_seconds)));
  }
  return out;
}

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

}  // namespace

std::vector<ReportSection> scalability_sections(const ScalabilityAnalysis& a) {
  std::vector<ReportSection> out;
  const int skip = a.options.skip_epochs;

  // Epoch time and scaling
  bool any_epochs = false;
  for (const ScaleGroup& g : a.groups) any_epochs |= g.epoch.count > 0;
  if (any_epochs) {
    ReportSection s;
    s.key = "epoch_time";
    s.title = "Epoch Time Report";
    s.notes.push_back(skip > 0 ? fmt::format("The first {} epoch(s) of every run are skipped as warm-up "
                                             "(--skip-epochs {}); repetitions of a configuration are pooled.",
                                             skip, skip)
                               : "No warm-up epochs skipped (--skip-epochs 0); repetitions are pooled.");
    Table t;
    t.title = "Epoch time per strategy and number of workers";
    t.columns = {{"strategy", "Strategy"},  {"workers", "Workers"}, {"nodes", "Nodes"},         {"runs", "Runs"},
                 {"epochs", "Epochs used"}, {"mean_s", "Mean (s)"}, {"median_s", "Median (s)"}, {"std_s", "Std (s)"},
                 {"min_s", "Min (s)"},      {"max_s", "Max (s)"}};
    Table sc;
    sc.title = "Relative speedup and parallel efficiency (baseline: each strategy's smallest worker count)";
    sc.columns = {{"strategy", "Strategy"},
                  {"workers", "Workers"},
                  {"nodes", "Nodes"},
                  {"mean_s", "Mean epoch (s)"},
                  {"speedup", "Speedup (x)"},
                  {"ideal_speedup", "Ideal speedup (x)"},
                  {"efficiency_pct", "Efficiency (%)"}};
    for (const ScaleGroup& g : a.groups) {
      if (g.epoch.count == 0) continue;
      t.add_row({g.series, g.workers, nodes_cell(g.nodes), static_cast<int64_t>(g.runs.size()), g.epoch.count,
                 num(g.epoch.mean, 3), num(g.epoch.median, 3), num(g.epoch.std, 3), num(g.epoch.min, 3),
                 num(g.epoch.max, 3)});
      sc.add_row({g.series, g.workers, nodes_cell(g.nodes), num(g.epoch.mean, 3), num(g.scaling.speedup, 3),
                  num(g.scaling.ideal_speedup, 3), pct(g.scaling.efficiency)});
    }
    s.table_keys = {"epoch_time", "scaling"};
    s.tables = {std::move(t), std::move(sc)};
    out.push_back(std::move(s));

    ReportSection am;
    am.key = "amdahl";
    am.title = "Amdahl Projection";
    am.notes.push_back(
        "PROJECTION, not a measurement: T(n) = a + b/n fitted by least squares to the mean epoch times; serial "
        "fraction = a / (a + b); projected speedup relative to the smallest measured worker count.");
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
    for (const SeriesResult& sr : a.series) {
      if (!sr.amdahl.ok) {
        p.add_row({sr.series, sr.amdahl.points, Cell::null(), Cell::null(), Cell::null(), Cell::null(), Cell::null(),
                   Cell::null(), Cell::null(), Cell::null(), Cell::null(), Cell::null(), "no fit (one worker count)"});
        continue;
      }
      p.add_row({sr.series, sr.amdahl.points, pct(sr.amdahl.serial_fraction), num(sr.amdahl.serial_s, 3),
                 num(sr.amdahl.parallel_s, 3), num(sr.amdahl.rms_residual_s, 3), sr.projected_workers[0],
                 num(sr.projected_speedup[0], 3), pct(sr.projected_efficiency[0]), sr.projected_workers[1],
                 num(sr.projected_speedup[1], 3), pct(sr.projected_efficiency[1]),
                 sr.amdahl.constrained ? "projection (clamped fit)" : "projection"});
    }
    am.table_keys = {"amdahl"};
    am.tables = {std::move(p)};
    out.push_back(std::move(am));
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
    for (const ScaleGroup& g : a.groups) {
      if (g.gpus == 0) continue;
      t.add_row({g.series, g.workers, nodes_cell(g.nodes), g.gpus, num(g.utilization_pct, 2), num(g.energy_wh_total, 4),
                 num(g.energy_wh_per_run, 4), num(g.energy_wh_per_epoch, 4),
                 g.energy_method.empty() ? Cell::null() : Cell(g.energy_method)});
    }
    Table d;
    d.title = "Per GPU";
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

  // itwinai's computation fraction
  bool any_comp = false;
  for (const ScaleGroup& g : a.groups) any_comp |= g.computation.has_value();
  if (any_comp) {
    ReportSection s;
    s.key = "computation";
    s.title = "Computation Data Report";
    s.notes.push_back(
        "itwinai's computation fraction: self device time of ATen/c10/autograd operators over all self device "
        "time minus ProfilerStep*, all ranks pooled (cpu_self_time basis: the same rule on CPU self time, for "
        "traces without device time).");
    Table t;
    t.title = "Computation vs. other";
    t.columns = {{"strategy", "Strategy"},
                 {"num_gpus", "Workers"},
                 {"computation_fraction_pct", "Computation fraction (%)"},
                 {"computation_s", "Computation (s)"},
                 {"total_s", "Total self time (s)"},
                 {"profiler_step_s", "ProfilerStep* (s)"},
                 {"ranks", "Ranks"},
                 {"basis", "Basis"}};
    for (const ScaleGroup& g : a.groups) {
      if (!g.computation) continue;
      const ComputationSums& c = *g.computation;
      t.add_row({g.series, g.workers, pct(g.computation_fraction), Cell(static_cast<double>(c.computation_ns) / 1e9, 6),
                 Cell(static_cast<double>(c.total_ns) / 1e9, 6), Cell(static_cast<double>(c.profiler_step_ns) / 1e9, 6),
                 c.ranks, std::string(analysis::fraction_basis_name(c.basis))});
    }
    s.table_keys = {"computation_fraction"};
    s.tables = {std::move(t)};
    out.push_back(std::move(s));
  }

  // Where scaling is lost
  bool any_loss = false;
  for (const SeriesResult& sr : a.series) any_loss |= sr.has_loss;
  if (any_loss || !a.best.empty()) {
    ReportSection s;
    s.key = "scaling_loss";
    s.title = "Where Scaling Is Lost";
    for (const SeriesResult& sr : a.series) {
      for (const std::string& line : sr.sentences) s.notes.push_back(line);
    }
    for (const std::string& line : a.best_sentences) s.notes.push_back(line);
    Table t;
    t.title = "Efficiency lost between each strategy's smallest and largest scale (percentage points)";
    t.columns = {{"strategy", "Strategy"},
                 {"from_workers", "From workers"},
                 {"to_workers", "To workers"},
                 {"efficiency_pct", "Efficiency (%)"},
                 {"lost_pts", "Lost (pts)"},
                 {"communication_pts", "Communication (pts)"},
                 {"idle_pts", "Idle (pts)"},
                 {"non_computation_pts", "Non-computation (pts)"},
                 {"other_pts", "Everything else (pts)"},
                 {"basis", "Basis"}};
    for (const SeriesResult& sr : a.series) {
      if (!sr.has_loss) continue;
      Cell comm;
      Cell idle;
      Cell noncomp;
      if (sr.loss_basis == "traces") {
        comm = pct(sr.loss.parts[0]);
        idle = pct(sr.loss.parts[1]);
      } else if (sr.loss_basis == "computation_fraction") {
        noncomp = pct(sr.loss.parts[0]);
      }
      t.add_row({sr.series, sr.n0, sr.n1, pct(sr.loss.efficiency), pct(sr.loss.lost), comm, idle, noncomp,
                 sr.loss_basis == "none" ? Cell::null() : pct(sr.loss.rest), sr.loss_basis});
    }
    Table b;
    b.title = "Best strategy per scale (lowest mean epoch time)";
    b.columns = {{"workers", "Workers"},     {"strategy", "Best strategy"},    {"mean_s", "Mean epoch (s)"},
                 {"runner_up", "Runner-up"}, {"runner_up_s", "Runner-up (s)"}, {"candidates", "Strategies"}};
    for (const analysis::BestAtScale& x : a.best) {
      b.add_row({x.workers, x.strategy, num(x.seconds, 3), x.runner_up.empty() ? Cell::null() : Cell(x.runner_up),
                 num(x.runner_up_seconds, 3), x.candidates});
    }
    s.table_keys = {"scaling_loss", "best_strategy"};
    s.tables = {std::move(t), std::move(b)};
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
  for (size_t i = 0; i < a.runs.size(); ++i) {
    const RunData& run = *a.runs[i];
    t.add_row({run.experiment, run.name, run.strategy, run.workers, nodes_cell(run.nodes),
               run.status.empty() ? Cell::null() : Cell(run.status), static_cast<int64_t>(run.epochs.size()),
               a.run_epochs_used[i], static_cast<int64_t>(run.gpus.size()),
               static_cast<int64_t>(run.trace_files.size()), run.layout, run.path});
  }
  r.table_keys = {"runs"};
  r.tables = {std::move(t)};
  out.push_back(std::move(r));
  return out;
}

std::string render_sections_text(const std::vector<ReportSection>& sections, bool color) {
  std::string out;
  RenderOptions ro;
  ro.format = Format::kTable;
  ro.color = color;
  for (const ReportSection& s : sections) {
    if (!out.empty()) out += "\n";
    const std::string heading = fmt::format("######## {} ########", s.title);
    out += color ? fmt::format("\x1b[1;36m{}\x1b[0m\n", heading) : heading + "\n";
    for (const std::string& n : s.notes) out += n + "\n";
    for (const Table& t : s.tables) {
      out += "\n";
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
  std::vector<std::string> explanation;
  for (const SeriesResult& sr : analysis.series) {
    for (const std::string& line : sr.sentences) explanation.push_back(line);
  }
  for (const std::string& line : analysis.best_sentences) explanation.push_back(line);
  out += ",\n" + json_quote("explanation") + ": " + json_string_array(explanation);
  out += ",\n" + json_quote("warnings") + ": " + json_string_array(analysis.warnings);
  out += ",\n" + json_quote("errors") + ": " + json_string_array(analysis.errors);
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

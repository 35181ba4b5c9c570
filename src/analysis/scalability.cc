#include "analysis/scalability.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

namespace scaleprof::analysis {

using tables::GpuSeries;

namespace {

// Energy of one GPU series in joules and the rule used.
std::pair<double, std::string> series_energy_j(const GpuSeries& s) {
  if (!std::isnan(s.probing_interval_s)) {
    return {rectangle_energy_j(s.power_w, s.probing_interval_s), "rectangle"};
  }
  // The driver's counter when every sample has it, else power over time.
  bool counter = !s.energy_j.empty();
  for (double e : s.energy_j) counter &= !std::isnan(e);
  if (counter) return {counter_energy_j(s.energy_j), "counter"};
  bool any_power = false;
  for (double p : s.power_w) any_power |= !std::isnan(p);
  if (!any_power) return {tables::kNaN, ""};
  return {trapezoid_energy_j(s.time_s, s.power_w), "trapezoid"};
}

std::string join_methods(const std::set<std::string>& methods) {
  std::string out;
  for (const std::string& m : methods) out += (out.empty() ? "" : "+") + m;
  return out;
}

// Collectives that can be split into communication and waiting: every call launched in the profiled
// steps matched on every rank of its group (never a guess), and some matched unless the scale has one
// worker (nothing to wait for).
bool collectives_known(const ScaleGroup& g) {
  if (!g.traces || g.traces->step_ns <= 0) return false;
  const TraceSums& t = *g.traces;
  return t.collectives_matched == t.collective_calls && (t.collectives_matched > 0 || g.workers == 1);
}

bool device_work(const ScaleGroup& g) {
  return g.traces && g.traces->span_ns > 0;
}

bool decomposed(const ScaleGroup& g) {
  return g.traces && g.traces->decomposed_runs > 0 && g.traces->decomposed_step_ns > 0;
}

// The basis two scales of a strategy are compared on: the step decomposition where both have it, else GPU time shares
// where both have device work (split by the collectives where both have them known and the larger has some), else the
// collectives' shares of step time where both have them known and the larger has some, else none from the traces
// (attribute_scale_loss then falls back to the computation fraction, unattributed).
LossBasis shares_basis(const ScaleGroup& base, const ScaleGroup& at) {
  if (decomposed(base) && decomposed(at)) return LossBasis::kDecomposition;
  const bool both_known = collectives_known(base) && collectives_known(at) && at.traces->collectives_matched > 0;
  if (device_work(base) && device_work(at)) return both_known ? LossBasis::kTracesCollectives : LossBasis::kTraces;
  if (both_known && !device_work(base) && !device_work(at)) return LossBasis::kCollectives;
  return LossBasis::kNone;
}

ScaleShares scale_shares(const ScaleGroup& g, LossBasis basis) {
  ScaleShares sh;
  sh.workers = g.workers;
  sh.seconds = g.epoch.mean;
  sh.computation_fraction = g.computation_fraction;
  sh.shares_basis = basis;
  sh.outside_steps = g.outside_steps_share;
  sh.samples_per_worker = g.throughput.samples_per_worker;
  if (basis == LossBasis::kNone) return sh;
  const TraceSums& t = *g.traces;
  if (basis == LossBasis::kDecomposition) {
    // Exclusive parts of the decomposed steps: they add up to 1.
    const auto steps = static_cast<double>(t.decomposed_step_ns);
    auto share = [steps](int64_t ns) { return static_cast<double>(ns) / steps; };
    sh.trace_shares = {{kComputationCause, share(t.step_compute_ns)},
                       {kCommunicationCause, share(t.step_communication_ns)},
                       {kWaitingCause, share(t.step_wait_ns)},
                       {"data loading", share(t.step_data_loading_ns)},
                       {"optimizer", share(t.step_optimizer_ns)},
                       {"host overhead", share(t.step_host_overhead_ns)},
                       {"idle", share(t.step_idle_ns)}};
    sh.straggler_rank = g.straggler_rank;
    sh.operators = g.operators;
    if (t.step_alltoall_imbalance_ns > 0)
      sh.communication_details.push_back({kAlltoallImbalanceDetail, share(t.step_alltoall_imbalance_ns)});
    for (const NamedShare& p : g.communication_parts) sh.communication_details.push_back(p);
    if (g.pipeline_stages > 0 || t.step_pipeline_bubble_ns > 0) {
      // The bubble is a cause of its own, taken out of exposed communication (where the engine found it,
      // at most that step's exposed communication): the causes stay exclusive.
      sh.trace_shares[1].share = share(t.step_communication_ns - t.step_pipeline_bubble_ns);
      sh.trace_shares.insert(sh.trace_shares.begin() + 2, {kPipelineBubbleCause, share(t.step_pipeline_bubble_ns)});
      sh.pipeline_stages = g.pipeline_stages;
      sh.pipeline_micro_batches = g.pipeline_micro_batches;
      sh.pipeline_ideal = g.pipeline_micro_batches > 0 ? share(t.step_pipeline_ideal_ns) : tables::kNaN;
    }
    return sh;
  }
  const auto latency = static_cast<double>(t.collective_latency_ns);
  const auto wait = static_cast<double>(t.collective_wait_ns);
  if (basis == LossBasis::kCollectives) {
    const auto step = static_cast<double>(t.step_ns);
    sh.trace_shares = {{"communication", latency / step}, {"waiting for stragglers", wait / step}};
    return sh;
  }
  const double communication = g.trace_share(&TraceSums::communication_ns);
  if (basis == LossBasis::kTraces) {
    sh.trace_shares = {{"communication", communication}, {"idle", g.trace_share(&TraceSums::idle_ns)}};
    return sh;
  }
  // Exposed communication split in the proportion of the matched calls' latency and waits (a scale
  // with no matched call, one worker, has nothing to wait for).
  const double waiting_part = latency + wait > 0 ? wait / (latency + wait) : 0.0;
  sh.trace_shares = {{"communication", communication * (1.0 - waiting_part)},
                     {"waiting for stragglers", communication * waiting_part},
                     {"idle", g.trace_share(&TraceSums::idle_ns)}};
  return sh;
}

// The pipeline bubble is listed at both scales when either has a pipeline (0 at the other, which has none):
// the loss attribution compares the same causes in the same order.
void align_pipeline_bubble(ScaleShares* a, const ScaleShares& b) {
  auto has = [](const ScaleShares& s) {
    return std::any_of(s.trace_shares.begin(), s.trace_shares.end(),
                       [](const NamedShare& n) { return n.name == kPipelineBubbleCause; });
  };
  if (a->shares_basis != LossBasis::kDecomposition || a->trace_shares.size() < 2 || has(*a) || !has(b)) return;
  a->trace_shares.insert(a->trace_shares.begin() + 2, {kPipelineBubbleCause, 0.0});
  a->pipeline_ideal = 0.0;
}

// A scale as the what-if model reads it; the time outside the steps is separated only where both
// scales compared separate it (as the loss attribution does).
WhatIfScale what_if_scale(const ScaleGroup& g, const ScaleGroup& other) {
  WhatIfScale s;
  s.workers = g.workers;
  s.seconds = g.epoch.mean;
  if (!std::isnan(g.outside_steps_share) && !std::isnan(other.outside_steps_share))
    s.in_steps = 1.0 - g.outside_steps_share;
  s.samples_per_worker = g.throughput.samples_per_worker;
  s.runs = g.timelines;
  return s;
}

// The rank the others waited for most, over the group's runs, and the decomposed rank's operators
// pooled over the runs that have a decomposition, as shares of their decomposed steps.
void add_straggler_and_operators(const ScalabilityData& data, ScaleGroup* g) {
  std::map<int64_t, double> imposed;
  std::map<std::string, double> self_ns;
  for (size_t i : g->runs) {
    const RunData& r = data.runs[i];
    for (const tables::RankWait& w : r.rank_waits) imposed[w.rank] += static_cast<double>(w.wait_imposed_ns);
    for (const tables::OperatorTime& o : r.operators) self_ns[o.name] += static_cast<double>(o.self_ns);
  }
  double most = 0;
  for (const auto& [rank, ns] : imposed) {
    if (ns > most) {
      most = ns;
      g->straggler_rank = rank;
    }
  }
  // The pipeline as the first run with one has it, and communication's named parts pooled (names in
  // first-seen order, so the outputs list them as the runs do).
  std::vector<std::pair<std::string, double>> parts;
  for (size_t i : g->runs) {
    const RunData& r = data.runs[i];
    if (g->pipeline_stages == 0 && r.pipeline_stages > 0) {
      g->pipeline_stages = r.pipeline_stages;
      g->pipeline_micro_batches = r.pipeline_micro_batches;
    }
    for (const tables::CommunicationPart& p : r.communication_parts) {
      auto it = std::find_if(parts.begin(), parts.end(), [&](const auto& x) { return x.first == p.name; });
      if (it == parts.end()) it = parts.insert(parts.end(), {p.name, 0.0});
      it->second += static_cast<double>(p.ns);
    }
  }
  if (g->traces->decomposed_step_ns <= 0) return;
  const auto steps = static_cast<double>(g->traces->decomposed_step_ns);
  for (const auto& [name, ns] : self_ns) g->operators.push_back({name, ns / steps});
  for (const auto& [name, ns] : parts) g->communication_parts.push_back({name, ns / steps});
}

}  // namespace

std::string failure_words(const RunData& run) {
  if (!run.not_run.empty()) return "did not run: " + run.not_run;
  std::string out = "status " + run.status;
  if (run.exit_code) out += fmt::format(", exit {}", *run.exit_code);
  if (!run.log.empty()) out += ", log " + run.log;
  return out;
}

int64_t baseline_workers(const ScalabilityAnalysis& analysis, const std::string& series) {
  int64_t base = 0;
  for (const ScaleGroup& g : analysis.groups) {
    if (g.series == series && g.epoch.count > 0 && (base == 0 || g.workers < base)) base = g.workers;
  }
  return base;
}

double ScaleGroup::trace_share(int64_t TraceSums::*part) const {
  if (!traces || traces->span_ns <= 0) return tables::kNaN;
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
    (tables::run_failed(r) ? g.failed_runs : g.runs).push_back(i);
  }
  // Failed runs: left out where the configuration has another run, else the configuration failed
  // (an error: the report is partial, exit code 3).
  for (auto& [key, g] : groups) {
    g.failed = g.runs.empty() && !g.failed_runs.empty();
    out.any_failed_group |= g.failed;
    out.any_failed_run |= !g.failed_runs.empty();
    if (!g.failed) {
      for (size_t i : g.failed_runs) {
        const RunData& r = data.runs[i];
        out.warnings.push_back(diagnostic(
            Severity::kWarning,
            fmt::format(
                "{}: run failed ({}); left out: {} at {} worker(s) has {} run(s) that did not fail, which are used",
                r.path, failure_words(r), g.series, g.workers, g.runs.size())));
      }
    } else {
      std::string runs;
      for (size_t i : g.failed_runs) {
        const RunData& r = data.runs[i];
        runs += fmt::format("{}{} ({})", runs.empty() ? "" : "; ", r.path, failure_words(r));
      }
      out.errors.push_back(
          diagnostic(Severity::kError,
                     fmt::format("{} at {} worker(s): FAILED: every run of it failed: {}; its finished epochs are no "
                                 "measurement of it, so "
                                 "it has no figures and the strategy's baseline is its smallest scale that completed",
                                 g.series, g.workers, runs)));
    }
  }

  bool any_epochs = false;
  bool any_gpu = false;
  bool any_computation = false;
  bool any_traces = false;
  out.run_epochs_used.assign(data.runs.size(), 0);
  for (auto& [key, g] : groups) {
    std::vector<double> kept;
    double kept_sum = 0;     // of the kept epochs
    double outside_sum = 0;  // their time outside the steps, while every kept epoch has its split
    bool outside_known = true;
    std::vector<double> util;
    std::set<std::string> methods;
    double energy_total = 0;
    int64_t energy_runs = 0;
    double per_epoch_sum = 0;
    int64_t per_epoch_runs = 0;
    bool traces_overflow = false;
    for (size_t i : g.runs) {
      const RunData& r = data.runs[i];
      g.epochs_read += static_cast<int64_t>(r.epochs.size());
      const std::vector<tables::EpochTime> used = skip_warmup(r.epochs, options.skip_epochs);
      out.run_epochs_used[i] = static_cast<int64_t>(used.size());
      if (!r.epochs.empty() && used.empty()) {
        out.warnings.push_back(diagnostic(
            Severity::kWarning, fmt::format("{}: all {} epoch(s) skipped as warm-up (--skip-epochs {}); run not used "
                                            "for epoch times",
                                            r.path, r.epochs.size(), options.skip_epochs)));
      }
      for (const auto& e : used) {
        kept.push_back(e.seconds);
        kept_sum += e.seconds;
        outside_sum += e.seconds - e.steps_seconds;
        outside_known = outside_known && !std::isnan(e.steps_seconds);
      }
      for (StragglerCause& c : straggler_causes(r.rank_activity, StragglerRule{}, r.waited_for)) {
        std::string source;
        for (const tables::RankActivity& a : r.rank_activity) {
          if (a.rank == c.rank) source = a.gpu_source;
        }
        out.straggler_causes.push_back({g.series, g.workers, r.name, std::move(source), std::move(c)});
      }
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
        d.utilization_pct = sample_stats(s.utilization_pct).mean;
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
      if (r.peak_device_memory_bytes >= 0) {
        g.peak_device_memory_bytes = std::max(g.peak_device_memory_bytes, r.peak_device_memory_bytes);
        g.min_peak_device_memory_bytes = g.min_peak_device_memory_bytes < 0
                                             ? r.min_peak_device_memory_bytes
                                             : std::min(g.min_peak_device_memory_bytes, r.min_peak_device_memory_bytes);
      }
      if (!std::isnan(r.step_flops)) {
        g.step_flops = (std::isnan(g.step_flops) ? 0.0 : g.step_flops) + r.step_flops;
        g.flop_step_ns += r.flop_step_ns;
        g.flop_ideal_ns += r.flop_ideal_ns;
      }
      if (r.traces && !traces_overflow) {
        if (!g.traces) g.traces = TraceSums{};
        traces_overflow = !tables::add_checked(&*g.traces, *r.traces);
      }
    }
    // A configuration whose runs' sums (each exact) together leave int64 ns: left out, never wrapped.
    // clang < 16 cannot capture structured bindings in a lambda (P1091), so name what it needs.
    const std::string& series = g.series;
    const int64_t workers = g.workers;
    auto overflow_warning = [&out, &series, workers](std::string_view sums, std::string_view unused) {
      out.warnings.push_back(diagnostic(
          Severity::kWarning,
          fmt::format("{} at {} workers: the runs' {} summed exceed 292 years of nanoseconds (int64); {} not used",
                      series, workers, sums, unused)));
    };
    if (traces_overflow) {
      g.traces.reset();
      overflow_warning("trace times", "trace shares");
    }
    // Computation sums: device-time runs only when any run has device time (bases do not mix).
    bool device_basis = false;
    for (size_t i : g.runs) {
      const RunData& r = data.runs[i];
      device_basis |= r.computation && r.computation->basis == tables::FractionBasis::kDeviceSelf;
    }
    bool computation_overflow = false;
    for (size_t i : g.runs) {
      const RunData& r = data.runs[i];
      if (!r.computation || (device_basis && r.computation->basis != tables::FractionBasis::kDeviceSelf)) continue;
      if (!g.computation) {
        g.computation = ComputationSums{};
        g.computation->basis = r.computation->basis;
      }
      if (!tables::add_checked(&*g.computation, *r.computation)) {
        computation_overflow = true;
        break;
      }
    }
    if (computation_overflow) {
      g.computation.reset();
      overflow_warning("operator self times", "computation fraction");
    }
    if (g.computation) {
      g.computation_fraction = g.computation->computation_ratio();
      // itwinai adds 1e-10 s to its denominator; with no computation and no communication this is NaN
      // instead of its 0.
      const double comp_comm =
          static_cast<double>(g.computation->computation_ns) + static_cast<double>(g.computation->communication_ns);
      g.computation_vs_communication =
          comp_comm > 0 ? static_cast<double>(g.computation->computation_ns) / comp_comm : tables::kNaN;
    }
    if (g.traces) add_straggler_and_operators(data, &g);
    for (size_t i : g.runs) {
      if (!data.runs[i].timeline.steps.empty()) g.timelines.push_back(&data.runs[i].timeline);
    }
    if (g.peak_device_memory_bytes >= 0)
      g.peak_device_memory_gb = static_cast<double>(g.peak_device_memory_bytes) / 1e9;
    if (!std::isnan(g.step_flops) && g.flop_step_ns > 0) {
      g.tflops_per_gpu = g.step_flops / g.flop_step_ns / 1e3;
      g.mfu_pct = g.flop_ideal_ns / g.flop_step_ns * 100.0;  // NaN when some peak is unknown
    }
    g.epoch = sample_stats(std::move(kept));
    if (outside_known && kept_sum > 0) g.outside_steps_share = std::max(0.0, outside_sum) / kept_sum;
    if (!util.empty()) g.utilization_pct = sample_stats(std::move(util)).mean;
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

  if (data.runs.empty()) out.warnings.push_back(diagnostic(Severity::kWarning, "No runs found"));
  if (!data.runs.empty() && !any_epochs)
    out.warnings.push_back(diagnostic(Severity::kWarning, "No epoch time data found"));
  if (!data.runs.empty() && !any_gpu) out.warnings.push_back(diagnostic(Severity::kWarning, "No GPU data found"));
  if (!data.runs.empty() && !any_traces)
    out.warnings.push_back(diagnostic(Severity::kWarning, "No profiler traces found"));
  bool any_device_work = false;
  for (const ScaleGroup& g : out.groups) any_device_work |= g.traces && g.traces->span_ns > 0;
  if (any_traces && !any_device_work) {
    out.warnings.push_back(
        diagnostic(Severity::kWarning, "Profiler traces have no GPU work (CPU-only runs): no GPU time split"));
  }
  if (!data.runs.empty() && !any_computation)
    out.warnings.push_back(diagnostic(Severity::kWarning, "No computation data found"));
  if (!data.runs.empty() && !any_computation && options.include_communication) {
    out.warnings.push_back(
        diagnostic(Severity::kWarning, "No communication data found"));  // itwinai's line under --include-communication
  }

  // Samples per second and weak or strong scaling first: the loss attribution uses both.
  analyse_throughput(&out);

  // Per series: scaling, Amdahl, loss attribution.
  std::map<std::string, std::vector<ScaleGroup*>> by_series;
  for (ScaleGroup& g : out.groups) by_series[g.series].push_back(&g);
  std::vector<StrategyTime> times;
  for (auto& [name, list] : by_series) {
    std::vector<ScaleGroup*> timed;
    for (ScaleGroup* g : list) {
      if (g->epoch.count > 0) timed.push_back(g);
    }
    std::stable_sort(timed.begin(), timed.end(), [](const ScaleGroup* a, const ScaleGroup* b) {
      return std::tie(a->workers, a->nodes) < std::tie(b->workers, b->nodes);
    });
    std::vector<ScalePoint> points;
    points.reserve(timed.size());
    for (ScaleGroup* g : timed) points.push_back({g->workers, g->epoch.mean});
    const std::vector<ScalingRow> rows = relative_scaling(points);
    for (size_t i = 0; i < timed.size(); ++i) timed[i]->scaling = rows[i];
    for (ScaleGroup* g : timed) times.push_back({name, g->workers, g->epoch.mean});
    if (timed.empty()) continue;

    SeriesResult s;
    s.series = name;
    s.amdahl = fit_amdahl(points);
    if (s.amdahl.ok) {
      for (int k = 0; k < 2; ++k) {
        s.projected_workers[k] = s.amdahl.max_workers * (k == 0 ? 2 : 4);
        s.projected_speedup[k] = amdahl_speedup(s.amdahl, static_cast<double>(s.projected_workers[k]));
        s.projected_efficiency[k] = s.projected_speedup[k] * static_cast<double>(s.amdahl.base_workers) /
                                    static_cast<double>(s.projected_workers[k]);
      }
    }
    // Loss attribution of every larger scale against the smallest (analysis/scaling_loss.h), on the
    // best basis both scales support; itwinai's computation fraction is kept as an indication.
    const std::string& series_name = name;  // a structured binding: clang 14 cannot capture it
    const bool weak = std::any_of(out.throughput.begin(), out.throughput.end(), [&](const SeriesThroughput& t) {
      return t.series == series_name && t.mode == ScalingMode::kWeak;
    });
    for (size_t i = 1; i < timed.size(); ++i) {
      if (timed[i]->workers <= timed.front()->workers) continue;
      const LossBasis basis = shares_basis(*timed.front(), *timed[i]);
      ScaleShares base = scale_shares(*timed.front(), basis);
      ScaleShares at = scale_shares(*timed[i], basis);
      align_pipeline_bubble(&base, at);
      align_pipeline_bubble(&at, base);
      base.weak_scaling = at.weak_scaling = weak;
      s.losses.push_back(attribute_scale_loss(base, at));
      add_what_if_gains(what_if_scale(*timed.front(), *timed[i]), what_if_scale(*timed[i], *timed.front()),
                        &s.losses.back());
    }
    if (s.amdahl.ok && timed.size() > 1) {
      for (int k = 0; k < 2; ++k) {
        s.model_projection[k] =
            project_epoch(what_if_scale(*timed.front(), *timed.back()), what_if_scale(*timed.back(), *timed.front()),
                          s.projected_workers[k], weak);
      }
    }
    for (const WhatIfSpec& spec : options.what_ifs) {
      for (ScaleGroup* g : timed) {
        WhatIfRow row{name, g->workers, spec, {}};
        row.outcome = apply_what_if(spec, what_if_scale(*timed.front(), *g), what_if_scale(*g, *timed.front()), weak);
        if (row.outcome.ok) out.what_ifs.push_back(std::move(row));
      }
    }
    out.series.push_back(std::move(s));
  }
  out.best = best_strategy_per_scale(times);
  return out;
}

}  // namespace scaleprof::analysis

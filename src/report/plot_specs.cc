// The scalability report's plots as data (report/plot_specs.h): what each plot shows, from the
// analysis alone. No I/O: report/gnuplot_script.cc writes the scripts, scalability_plots.cc runs gnuplot.
#include "report/plot_specs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "report/throughput_report.h"

namespace scaleprof::report {

using tables::kNaN;

namespace {

// from, 2 from, 4 from, ... up to `to`: at most 63 values and no overflow whatever the input, so an
// absurd worker count can never make a plot loop run away.
std::vector<int64_t> doubling_steps(int64_t from, int64_t to) {
  std::vector<int64_t> out;
  for (int64_t w = from; w > 0 && w <= to && out.size() < 63; w *= 2) {
    out.push_back(w);
    if (w > to / 2) break;
  }
  return out;
}

// Strategies keep one colour in every plot: the order of first appearance in the groups.
std::map<std::string, int> series_colors(const ScalabilityAnalysis& a) {
  std::map<std::string, int> out;
  for (const ScaleGroup& g : a.groups) out.try_emplace(g.series, static_cast<int>(out.size()));
  return out;
}

// One bar chart: categories = worker counts having a value, one series per strategy.
PlotSpec bar_spec(const ScalabilityAnalysis& a, const std::map<std::string, int>& colors, const char* stem,
                  const char* title, const char* ylabel, double ScaleGroup::*field) {
  PlotSpec p;
  p.stem = stem;
  p.title = title;
  p.xlabel = "Number of workers";
  p.ylabel = ylabel;
  p.kind = PlotKind::kBars;
  std::set<int64_t> workers;
  std::map<std::string, std::map<int64_t, double>> values;
  for (const ScaleGroup& g : a.groups) {
    const double v = g.*field;
    if (std::isnan(v)) continue;
    workers.insert(g.workers);
    values[g.series][g.workers] = v;  // with several node counts the last one is shown
  }
  for (int64_t w : workers) p.categories.push_back(fmt::format("{}", w));
  for (const auto& [name, by_w] : values) {
    PlotSeries s;
    s.name = name;
    s.color = colors.at(name);
    for (int64_t w : workers) {
      auto it = by_w.find(w);
      s.y.push_back(it == by_w.end() ? kNaN : it->second);
    }
    p.series.push_back(std::move(s));
  }
  p.y_min = 0;
  return p;
}

// A share in [0, 1] per configuration as stacked bars: one group per strategy, one bar per worker count.
PlotSpec stacked_spec(const ScalabilityAnalysis& a, const std::map<std::string, int>& colors, const char* stem,
                      const char* title, const char* ylabel, double ScaleGroup::*field) {
  PlotSpec p;
  p.stem = stem;
  p.title = title;
  p.xlabel = "";  // the group titles (strategies) sit where the label would
  p.ylabel = ylabel;
  p.kind = PlotKind::kStacked;
  p.y_min = 0;
  p.y_max = 1.1;
  std::map<std::string, std::vector<std::pair<int64_t, double>>> by_series;
  for (const ScaleGroup& g : a.groups) {
    if (!std::isnan(g.*field)) by_series[g.series].emplace_back(g.workers, g.*field);
  }
  for (const auto& [name, list] : by_series) {
    PlotSeries s;
    s.name = name;
    s.color = colors.at(name);
    for (const auto& [w, f] : list) {
      s.x.push_back(static_cast<double>(w));
      s.y.push_back(f);
    }
    p.series.push_back(std::move(s));
  }
  return p;
}

// Bus bandwidth vs. message size: per group with matched collectives of known size and bandwidth, one
// line per collective type through the median bandwidth at each size (repetitions pooled). Sizes on a
// log2 axis with binary prefixes (KiB, MiB), as DDP buckets and nccl-tests sizes are powers of two.
void add_bandwidth_spec(const ScalabilityAnalysis& a, std::vector<PlotSpec>* out) {
  PlotSpec p;
  p.stem = "collective_bandwidth";
  p.title = "Bus bandwidth vs. message size of the collectives matched across ranks (median per size)";
  p.xlabel = "Message size";
  p.ylabel = "Bus bandwidth (GB/s)";
  p.log_x = 2;
  p.x_format = "%.0b %BB";
  p.y_min = 0;
  for (const ScaleGroup& g : a.groups) {
    std::map<std::string, std::map<int64_t, std::vector<double>>> by_type;  // type -> bytes -> busbw
    for (size_t i : g.runs) {
      for (const tables::CollectiveSample& c : a.runs[i]->collectives) {
        // A single rank moves nothing over the bus (busbw factor 0): no point to draw.
        if (c.bytes > 0 && c.busbw_gbps > 0) by_type[c.type][c.bytes].push_back(c.busbw_gbps);
      }
    }
    for (auto& [type, sizes] : by_type) {
      PlotSeries s;
      s.name = fmt::format("{}, {} worker{}{}", g.series, g.workers, g.workers == 1 ? "" : "s",
                           by_type.size() > 1 ? ", " + type : "");
      s.color = static_cast<int>(p.series.size());
      for (auto& [bytes, bw] : sizes) {
        std::sort(bw.begin(), bw.end());
        const size_t n = bw.size();
        s.x.push_back(static_cast<double>(bytes));
        s.y.push_back(n % 2 == 1 ? bw[n / 2] : (bw[n / 2 - 1] + bw[n / 2]) / 2);
      }
      p.series.push_back(std::move(s));
    }
  }
  if (!p.series.empty()) out->push_back(std::move(p));
}

// Waiting per rank at each strategy's largest scale with matched collectives (its first run with
// them): two bars per strategy and rank, the rank's own wait and the wait it imposed on the others.
void add_rank_wait_spec(const ScalabilityAnalysis& a, std::vector<PlotSpec>* out) {
  constexpr size_t kMaxRanks = 32;
  std::map<std::string, std::pair<int64_t, const tables::RunData*>> chosen;  // series -> (workers, run)
  for (const ScaleGroup& g : a.groups) {
    for (size_t i : g.runs) {
      const tables::RunData* r = a.runs[i];
      if (r->rank_waits.empty()) continue;
      auto it = chosen.find(g.series);
      if (it == chosen.end() || g.workers > it->second.first) chosen[g.series] = {g.workers, r};
      break;
    }
  }
  if (chosen.empty()) return;
  // The ranks with the most waiting (own + imposed, largest over the strategies), by rank number.
  std::map<int64_t, int64_t> weight;
  for (const auto& [name, wr] : chosen) {
    for (const tables::RankWait& w : wr.second->rank_waits) {
      weight[w.rank] = std::max(weight[w.rank], w.own_wait_ns + w.wait_imposed_ns);
    }
  }
  std::vector<std::pair<int64_t, int64_t>> ranked(weight.begin(), weight.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  const size_t total = ranked.size();
  if (ranked.size() > kMaxRanks) ranked.resize(kMaxRanks);
  std::sort(ranked.begin(), ranked.end());
  PlotSpec p;
  p.stem = "rank_wait";
  p.title = total > kMaxRanks ? fmt::format(
                                    "Waiting at collectives per rank, summed over the profiled steps (the {} of {} "
                                    "ranks with the most waiting)",
                                    kMaxRanks, total)
                              : "Waiting at collectives per rank, summed over the profiled steps";
  p.xlabel = "Rank";
  p.ylabel = "Time (ms)";
  p.kind = PlotKind::kBars;
  p.y_min = 0;
  for (const auto& [rank, w] : ranked) p.categories.push_back(fmt::format("{}", rank));
  for (const auto& [name, wr] : chosen) {
    PlotSeries own;
    PlotSeries imposed;
    const std::string label = fmt::format("{}, {} workers", name, wr.first);
    own.name = label + ": waited for the last rank";
    imposed.name = label + ": others waited for it";
    own.color = static_cast<int>(p.series.size());
    imposed.color = own.color + 1;
    for (const auto& [rank, weight_ns] : ranked) {
      double o = kNaN;
      double m = kNaN;
      for (const tables::RankWait& w : wr.second->rank_waits) {
        if (w.rank != rank) continue;
        o = static_cast<double>(w.own_wait_ns) / 1e6;
        m = static_cast<double>(w.wait_imposed_ns) / 1e6;
      }
      own.y.push_back(o);
      imposed.y.push_back(m);
    }
    p.series.push_back(std::move(own));
    p.series.push_back(std::move(imposed));
  }
  out->push_back(std::move(p));
}

}  // namespace

std::vector<PlotSpec> scalability_plot_specs(const ScalabilityAnalysis& a, PlotNames names) {
  std::vector<PlotSpec> out;
  const auto colors = series_colors(a);
  std::set<int64_t> all_workers;
  std::map<std::string, std::vector<const ScaleGroup*>> timed;
  for (const ScaleGroup& g : a.groups) {
    if (g.epoch.count == 0) continue;
    timed[g.series].push_back(&g);
    all_workers.insert(g.workers);
  }
  if (!timed.empty()) {
    PlotSpec abs;
    abs.stem = "absolute_epoch_time";
    abs.title = "Mean epoch time vs. number of workers (error bars: standard deviation)";
    abs.xlabel = "Number of workers";
    abs.ylabel = "Mean epoch time (s)";
    abs.log_x = 2;
    abs.log_y = 10;
    PlotSpec sp;
    sp.stem = "relative_epoch_time_speedup";
    sp.title = "Relative speedup vs. number of workers (dashed: Amdahl projection, not measured)";
    sp.xlabel = "Number of workers";
    sp.ylabel = "Speedup over the strategy's smallest scale";
    sp.log_x = 2;
    sp.log_y = 2;
    PlotSpec ef;
    ef.stem = "parallel_efficiency";
    ef.title = "Parallel efficiency vs. number of workers";
    ef.xlabel = "Number of workers";
    ef.ylabel = "Parallel efficiency (%)";
    ef.log_x = 2;
    ef.y_min = 0;
    // Configurations that failed are named on the plot, never drawn as points.
    std::string failed;
    for (const ScaleGroup& g : a.groups) {
      if (g.failed)
        failed += fmt::format("{}{} at {} worker{}", failed.empty() ? "" : ", ", g.series, g.workers,
                              g.workers == 1 ? "" : "s");
    }
    if (!failed.empty()) abs.note = sp.note = ef.note = "FAILED, not plotted: " + failed;
    double max_eff = 100;
    int64_t min_w = *all_workers.begin();
    int64_t max_proj = *all_workers.rbegin();
    int projections = 0;
    for (const auto& [name, groups] : timed) {
      PlotSeries t;
      PlotSeries s;
      PlotSeries e;
      t.name = s.name = e.name = name;
      t.color = s.color = e.color = colors.at(name);
      for (const ScaleGroup* g : groups) {
        const auto x = static_cast<double>(g->workers);
        t.x.push_back(x);
        t.y.push_back(g->epoch.mean);
        t.err.push_back(std::isfinite(g->epoch.std) ? g->epoch.std : 0.0);
        s.x.push_back(x);
        s.y.push_back(g->scaling.speedup);
        e.x.push_back(x);
        e.y.push_back(g->scaling.efficiency * 100.0);
        if (std::isfinite(g->scaling.efficiency)) max_eff = std::max(max_eff, g->scaling.efficiency * 100.0);
      }
      abs.series.push_back(std::move(t));
      sp.series.push_back(std::move(s));
      ef.series.push_back(std::move(e));
    }
    for (const SeriesResult& r : a.series) {
      if (!r.amdahl.ok) continue;
      PlotSeries proj;
      proj.name = r.series + " (Amdahl projection)";
      proj.color = colors.at(r.series);
      proj.dashed = true;
      proj.layer = projections++;
      for (int64_t w : doubling_steps(r.amdahl.max_workers, r.projected_workers[1])) {
        proj.x.push_back(static_cast<double>(w));
        proj.y.push_back(analysis::amdahl_speedup(r.amdahl, static_cast<double>(w)));
      }
      max_proj = std::max(max_proj, r.projected_workers[1]);
      sp.series.push_back(std::move(proj));
    }
    PlotSeries ideal;
    ideal.name = "ideal (linear) speedup";
    ideal.reference = true;
    ideal.dashed = true;
    for (int64_t w : doubling_steps(min_w, max_proj)) {
      ideal.x.push_back(static_cast<double>(w));
      ideal.y.push_back(static_cast<double>(w) / static_cast<double>(min_w));
    }
    if (ideal.x.empty() || ideal.x.back() != static_cast<double>(max_proj)) {
      ideal.x.push_back(static_cast<double>(max_proj));
      ideal.y.push_back(static_cast<double>(max_proj) / static_cast<double>(min_w));
    }
    sp.series.push_back(std::move(ideal));
    PlotSeries full;
    full.name = "ideal (100%)";
    full.reference = true;
    full.dashed = true;
    full.x = {static_cast<double>(*all_workers.begin()), static_cast<double>(*all_workers.rbegin())};
    full.y = {100, 100};
    ef.series.push_back(std::move(full));
    ef.y_max = std::ceil(max_eff / 10.0) * 10.0 + 10.0;
    for (int64_t w : all_workers) {
      abs.x_ticks.push_back(static_cast<double>(w));
      sp.x_ticks.push_back(static_cast<double>(w));
      ef.x_ticks.push_back(static_cast<double>(w));
    }
    for (int64_t w : doubling_steps(*all_workers.rbegin(), max_proj)) {
      if (w != *all_workers.rbegin()) sp.x_ticks.push_back(static_cast<double>(w));
    }
    out.push_back(std::move(abs));
    out.push_back(std::move(sp));
    out.push_back(std::move(ef));
  }
  add_throughput_plot(a, colors, &out);
  bool any_util = false;
  bool any_energy = false;
  bool any_comp = false;
  for (const ScaleGroup& g : a.groups) {
    any_util |= !std::isnan(g.utilization_pct);
    any_energy |= !std::isnan(g.energy_wh_per_epoch);
    any_comp |= !std::isnan(g.computation_fraction);
  }
  if (any_util) {
    PlotSpec p = bar_spec(a, colors, "utilization_plot", "Mean GPU utilization by strategy and number of workers",
                          "GPU utilization (%)", &ScaleGroup::utilization_pct);
    p.y_max = 100;
    out.push_back(std::move(p));
  }
  if (any_energy && names == PlotNames::kItwinai) {
    out.push_back(bar_spec(a, colors, "gpu_energy_plot", "GPU energy consumption by strategy and number of workers",
                           "Energy consumption (Wh)", &ScaleGroup::energy_wh_total));
  }
  if (any_energy) {
    out.push_back(bar_spec(a, colors, "energy_per_epoch_plot",
                           "GPU energy to train one epoch by strategy and number of workers", "Energy per epoch (Wh)",
                           &ScaleGroup::energy_wh_per_epoch));
  }
  if (any_comp) {
    PlotSpec p = stacked_spec(a, colors, "computation_vs_other_plot",
                              "Computation (ATen, c10, autograd) vs. other: number of workers, grouped by strategy",
                              "Share of self time", &ScaleGroup::computation_fraction);
    out.push_back(std::move(p));
  }
  if (any_comp && a.options.include_communication) {
    // itwinai's deprecated plot, drawn only on its --include-communication, under its file name.
    PlotSpec p =
        stacked_spec(a, colors, "computation_vs_communication_plot",
                     "Computation vs. communication (itwinai's deprecated NCCL rule): number of workers, "
                     "grouped by strategy",
                     "Share of computation + communication self time", &ScaleGroup::computation_vs_communication);
    p.stacked_rest = "communication";
    if (!p.series.empty()) out.push_back(std::move(p));
  }
  add_bandwidth_spec(a, &out);
  add_rank_wait_spec(a, &out);
  // Issue 23: peak device memory per GPU (the largest over the ranks), where traces have [memory] events.
  bool any_memory = false;
  for (const ScaleGroup& g : a.groups) any_memory |= !std::isnan(g.peak_device_memory_gb);
  if (any_memory) {
    out.push_back(bar_spec(a, colors, "peak_device_memory",
                           "Peak device memory per GPU by strategy and number of workers", "Peak allocated (GB)",
                           &ScaleGroup::peak_device_memory_gb));
  }
  return out;
}

}  // namespace scaleprof::report

#include "report/scalability_plots.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/file_read.h"
#include "core/output_file.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): posix_spawn needs it

namespace scaleprof::report {

namespace fs = std::filesystem;
using analysis::kNaN;

namespace {

// Okabe-Ito: distinguishable with colour-blindness and in greyscale print (with the markers).
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};
constexpr int kPaletteSize = 7;
constexpr int kPointTypes[] = {7, 5, 9, 11, 13, 15, 4};  // filled circle, square, triangles, diamond, pentagon

std::string gp_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "''";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "'";
}

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

std::string gp_num(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : "NaN";
}

// "75.5%" for 0.755; empty for an unknown value.
std::string percent_label(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.1f}%", fraction * 100.0) : std::string();
}

// Projections of different strategies often coincide (same fit), and a line drawn later would hide
// the one below it. Each projection gets its own dash pattern, and the earlier ones are drawn wider,
// so where two coincide both stay visible: the lower one shows at the edges and in the gaps.
constexpr int kProjectionDash[] = {2, 4, 3, 5};  // dashes, dash-dot, dots, dash-dot-dot
constexpr int kProjectionDashes = 4;

int dash_type(const PlotSeries& ps) {
  if (!ps.dashed) return 1;
  if (ps.reference) return 2;
  return kProjectionDash[ps.layer % kProjectionDashes];
}

double line_width(const PlotSeries& ps) {
  if (ps.reference) return 1.5;
  if (!ps.dashed) return 2.5;
  return std::max(1.5, 4.5 - 1.0 * static_cast<double>(ps.layer));
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
      for (const importers::CollectiveSample& c : a.runs[i]->collectives) {
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
  std::map<std::string, std::pair<int64_t, const importers::RunData*>> chosen;  // series -> (workers, run)
  for (const ScaleGroup& g : a.groups) {
    for (size_t i : g.runs) {
      const importers::RunData* r = a.runs[i];
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
    for (const importers::RankWait& w : wr.second->rank_waits) {
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
      for (const importers::RankWait& w : wr.second->rank_waits) {
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
  return out;
}

std::string gnuplot_script(const PlotSpec& spec, const std::string& suffix, const std::string& output) {
  std::string s;
  if (suffix == ".svg") {
    s += "set terminal svg size 960,600 dynamic noenhanced font 'sans,13' background '#ffffff'\n";
  } else if (suffix == ".pdf") {
    s += "set terminal pdfcairo noenhanced size 9.6in,6in font 'sans,11'\n";
  } else {
    s += "set terminal pngcairo noenhanced size 1280,800 font 'sans,13' background '#ffffff'\n";
  }
  s += "set output " + gp_quote(output) + "\n";
  s += "set encoding utf8\nset datafile missing 'NaN'\n";
  s += "set title " + gp_quote(spec.title) + " font ',15'\n";
  s += "set xlabel " + gp_quote(spec.xlabel) + "\nset ylabel " + gp_quote(spec.ylabel) + "\n";
  s += "set grid xtics ytics lc rgb '#cccccc' lw 1 dt 1\nset border 3 lw 1.2\nset tics nomirror out\n";
  s += "set key outside right top vertical box lc rgb '#999999' spacing 1.2\n";
  s += "set offsets graph 0.03, graph 0.03, 0, 0\n";
  for (int i = 0; i < kPaletteSize; ++i) {
    s += fmt::format("set linetype {} lc rgb '{}' lw 2.5 pt {} ps 1.4\n", i + 1, kPalette[i], kPointTypes[i]);
  }
  auto color_of = [](const PlotSeries& ps) {
    return ps.reference ? std::string("#000000") : kPalette[ps.color % kPaletteSize];
  };
  auto pt_of = [](const PlotSeries& ps) { return kPointTypes[ps.color % kPaletteSize]; };
  if (std::isfinite(spec.y_min) || std::isfinite(spec.y_max)) {
    s += fmt::format("set yrange [{}:{}]\n", std::isfinite(spec.y_min) ? gp_num(spec.y_min) : "*",
                     std::isfinite(spec.y_max) ? gp_num(spec.y_max) : "*");
  }
  if (spec.kind == PlotKind::kLines) {
    if (spec.log_x > 0) s += fmt::format("set logscale x {}\n", spec.log_x);
    if (spec.log_y > 0) s += fmt::format("set logscale y {}\nset format y '%g'\n", spec.log_y);
    if (!spec.x_ticks.empty()) {
      s += "set xtics (";
      for (size_t i = 0; i < spec.x_ticks.size(); ++i) s += (i ? ", " : "") + gp_num(spec.x_ticks[i]);
      s += ")\n";
    }
    if (!spec.x_format.empty()) s += "set format x " + gp_quote(spec.x_format) + "\n";
    std::string plot = "plot ";
    for (size_t i = 0; i < spec.series.size(); ++i) {
      const PlotSeries& ps = spec.series[i];
      s += fmt::format("$d{} << EOD\n", i);
      for (size_t k = 0; k < ps.x.size(); ++k) {
        s += gp_num(ps.x[k]) + " " + gp_num(ps.y[k]);
        if (!ps.err.empty()) s += " " + gp_num(ps.err[k]);
        s += "\n";
      }
      s += "EOD\n";
      if (i) plot += ", \\\n     ";
      const std::string style = !ps.err.empty() ? "yerrorlines" : (ps.dashed ? "lines" : "linespoints");
      plot += fmt::format("$d{} using 1:2{} with {} lc rgb '{}' lw {} dt {} pt {} ps 1.4 title {}", i,
                          ps.err.empty() ? "" : ":3", style, color_of(ps), line_width(ps), dash_type(ps), pt_of(ps),
                          gp_quote(ps.name));
    }
    s += plot + "\n";
  } else if (spec.kind == PlotKind::kBars) {
    s += "set style data histogram\nset style histogram clustered gap 1\n";
    s += "set style fill solid 0.85 border rgb '#333333'\nset boxwidth 0.9\nset xtics nomirror\n";
    s += "$bars << EOD\n";
    for (size_t c = 0; c < spec.categories.size(); ++c) {
      s += spec.categories[c];
      for (const PlotSeries& ps : spec.series) s += " " + gp_num(c < ps.y.size() ? ps.y[c] : kNaN);
      s += "\n";
    }
    s += "EOD\nplot ";
    for (size_t i = 0; i < spec.series.size(); ++i) {
      const PlotSeries& ps = spec.series[i];
      s += fmt::format("{}$bars using {}{} lc rgb '{}' title {}", i ? ", \\\n     " : "", i + 2,
                       i == 0 ? ":xtic(1)" : "", color_of(ps), gp_quote(ps.name));
    }
    s += "\n";
  } else {
    // Stacked: one group per strategy, one bar per worker count at explicit x positions (a gap of one
    // bar between groups), so the percentage labels and group titles land on their bars. Computation
    // solid in the strategy colour, the rest hatched above it up to 1.
    s += "set boxwidth 0.75\nset xtics nomirror\nset bmargin 6\nset style textbox opaque noborder\n";
    std::string tics;
    std::string plot = "plot ";
    double x = 0;
    for (size_t i = 0; i < spec.series.size(); ++i) {
      const PlotSeries& ps = spec.series[i];
      const double first = x;
      s += fmt::format("$c{} << EOD\n", i);
      for (size_t k = 0; k < ps.x.size(); ++k, x += 1) {
        s += fmt::format("{} {} \"{}\"\n", gp_num(x), gp_num(ps.y[k]), percent_label(ps.y[k]));
        tics += fmt::format("{}'{}' {}", tics.empty() ? "" : ", ", gp_num(ps.x[k]), gp_num(x));
      }
      s += "EOD\n";
      s +=
          fmt::format("set label {} at first {}, graph -0.11 center\n", gp_quote(ps.name), gp_num((first + x - 1) / 2));
      x += 1;
      plot += fmt::format(
          "{}$c{} using 1:(1) with boxes fs pattern {} border rgb '#333333' lc rgb '#777777' {}, "
          "$c{} using 1:2 with boxes fs solid 0.85 border rgb '#333333' lc rgb '{}' title {}, "
          "$c{} using 1:($2 + 0.05):3 with labels boxed font ',12' notitle",
          i ? ", \\\n     " : "", i, i % 2 == 0 ? 4 : 5,
          i == 0 ? "title " + gp_quote(spec.stacked_rest + " (hatched)") : std::string("notitle"), i, color_of(ps),
          gp_quote(ps.name + " computation"), i);
    }
    s += "set xtics (" + tics + ")\n";
    s += fmt::format("set xrange [-0.75:{}]\n", gp_num(x - 1 - 0.25));
    s += plot + "\n";
  }
  s += "unset output\n";
  return s;
}

std::string find_gnuplot() {
  if (const char* env = std::getenv("SCALEPROF_GNUPLOT"); env != nullptr) {
    std::string p(env);
    return !p.empty() && access(p.c_str(), X_OK) == 0 ? p : std::string();
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= dirs.size()) {
    size_t colon = dirs.find(':', pos);
    if (colon == std::string::npos) colon = dirs.size();
    std::string dir = dirs.substr(pos, colon - pos);
    if (!dir.empty()) {
      std::string candidate = dir + "/gnuplot";
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    pos = colon + 1;
  }
  return "";
}

bool is_plot_suffix(const std::string& suffix) {
  return suffix == ".png" || suffix == ".svg" || suffix == ".pdf";
}

namespace {

// Runs gnuplot on a script file; stderr goes to a file whose content becomes the error message.
Status run_gnuplot(const std::string& gnuplot, const std::string& script) {
  char dir_template[] = "/tmp/scaleprof-gnuplot-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return Error{"cannot create a temporary folder for gnuplot"};
  const fs::path dir(dir_template);
  const std::string script_path = (dir / "plot.gp").string();
  const std::string err_path = (dir / "stderr.txt").string();
  if (Status written = write_output_file(script_path, script); !written) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    return written.error();
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string arg0 = gnuplot;
  std::string arg1 = script_path;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (rc == 0) waitpid(pid, &status, 0);
  std::ifstream err_in(err_path);
  std::stringstream err;
  err << err_in.rdbuf();
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (rc != 0) return Error{fmt::format("cannot run {}: {}", gnuplot, std::strerror(rc))};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string msg = err.str();
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    const size_t cut = msg.rfind('\n');
    if (cut != std::string::npos) msg = msg.substr(cut + 1);
    return Error{fmt::format("gnuplot failed: {}", msg.empty() ? "no message" : msg)};
  }
  return Ok{};
}

}  // namespace

namespace {

// A file gnuplot drew in the private folder ("" when it could not be read): with the one file
// reader (core/file_read.h), capped far above any plot.
std::string read_whole(const std::string& path) {
  auto text = read_named_file(path, size_t{1} << 30);
  auto* read = std::get_if<std::string>(&text);
  return read != nullptr ? std::move(*read) : std::string();
}

// A private folder (mode 0700, random name) that gnuplot draws into; removed when this goes out of
// scope. gnuplot only ever sees this folder, never a path the user gave.
class PrivateFolder {
 public:
  PrivateFolder() {
    char name[] = "/tmp/scaleprof-plots-XXXXXX";
    if (mkdtemp(name) != nullptr) path_ = name;
  }
  PrivateFolder(const PrivateFolder&) = delete;
  PrivateFolder& operator=(const PrivateFolder&) = delete;
  ~PrivateFolder() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Draws every spec into folder/<index><suffix>, one gnuplot run for all.
Status draw_into(const std::vector<PlotSpec>& specs, const std::string& folder, const std::string& suffix,
                 const std::string& gnuplot) {
  std::string script;
  for (size_t i = 0; i < specs.size(); ++i) {
    script += gnuplot_script(specs[i], suffix, fmt::format("{}/{}{}", folder, i, suffix)) + "reset\n";
  }
  return run_gnuplot(gnuplot, script);
}

}  // namespace

Result<std::vector<std::string>> draw_plots(const std::vector<PlotSpec>& specs, const std::string& dir,
                                            const std::string& suffix, const std::string& gnuplot) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{fmt::format("{}: cannot create the plot folder: {}", dir, ec.message())};
  std::vector<std::string> files;
  if (specs.empty()) return files;
  // gnuplot draws into a private folder; each plot is then installed with the one output-file writer,
  // so plot files get the same guarantees as every other output (atomic, no symlink games).
  const PrivateFolder drawing;
  if (drawing.path().empty()) return Error{"cannot create a temporary folder for gnuplot"};
  Status st = draw_into(specs, drawing.path(), suffix, gnuplot);
  if (!st) return st.error();
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string file = fs::absolute(fs::path(dir) / (specs[i].stem + suffix)).string();
    Status written = write_output_file(file, read_whole(fmt::format("{}/{}{}", drawing.path(), i, suffix)));
    if (!written) return written.error();
    files.push_back(file);
  }
  return files;
}

Result<std::vector<std::string>> render_svg_plots(const std::vector<PlotSpec>& specs, const std::string& gnuplot) {
  std::vector<std::string> out;
  if (specs.empty()) return out;
  const PrivateFolder drawing;
  if (drawing.path().empty()) return Error{"cannot create a temporary folder for the SVG plots"};
  Status st = draw_into(specs, drawing.path(), ".svg", gnuplot);
  if (!st) return st.error();
  for (size_t i = 0; i < specs.size(); ++i) {
    std::string svg = read_whole(fmt::format("{}/{}.svg", drawing.path(), i));
    const size_t start = svg.find("<svg");
    out.push_back(start == std::string::npos ? std::string() : svg.substr(start));
  }
  return out;
}

}  // namespace scaleprof::report

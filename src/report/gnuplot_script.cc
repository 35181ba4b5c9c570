// The gnuplot script of one plot: one look for every plot (palette, fonts, grid, markers), every
// text quoted for gnuplot. Pure: the runner (scalability_plots.cc) writes it to a file and runs it.
#include "report/gnuplot_script.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace scaleprof::report {

using tables::kNaN;

namespace {

// Okabe-Ito: distinguishable with colour-blindness and in greyscale print (with the markers).
constexpr const char* kGnuplotPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};
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

}  // namespace

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
  if (!spec.note.empty()) {
    s += "set label " + gp_quote(spec.note) + " at graph 0.01, graph 0.97 left front tc rgb '#b00020'\n";
  }
  for (int i = 0; i < kPaletteSize; ++i) {
    s += fmt::format("set linetype {} lc rgb '{}' lw 2.5 pt {} ps 1.4\n", i + 1, kGnuplotPalette[i], kPointTypes[i]);
  }
  auto color_of = [](const PlotSeries& ps) {
    return ps.reference ? std::string("#000000") : kGnuplotPalette[ps.color % kPaletteSize];
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

}  // namespace scaleprof::report

#include "report/loss_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "report/scalability_html.h"
#include "report/svg_charts.h"

namespace scaleprof::report {

namespace {

// Fixed colours for the causes the report knows (Okabe-Ito, as the plots, then Tol's indigo and
// greys); others take the spares. A cause keeps its colour in every report.
constexpr struct {
  const char* name;
  const char* color;
} kKnownCauses[] = {
    {"outside the steps", "#009E73"},      {"computation", "#56B4E9"},  {"communication", "#D55E00"},
    {"waiting for stragglers", "#CC79A7"}, {"data loading", "#F0E442"}, {"optimizer", "#332288"},
    {"host overhead", "#999999"},          {"idle", "#E69F00"},         {"non-computation", "#0072B2"},
    {"pipeline bubble", "#117733"},        {"unattributed", "#C8C8C8"},
};
constexpr const char* kSpareColors[] = {"#0072B2", "#000000", "#882255", "#44AA99"};

// Fills light enough for dark text on them.
bool light_fill(const std::string& color) {
  return color == "#C8C8C8" || color == "#F0E442" || color == "#56B4E9" || color == "#E69F00" || color == "#999999" ||
         color == "#44AA99";
}

// The legend's entries, placed left to right from `left` and wrapped onto a new row before `right`
// (nine causes do not fit one row of a 1000 px chart): x and row of each, in order.
struct LegendPlace {
  double x = 0;
  int row = 0;
};
std::vector<LegendPlace> place_legend(const std::vector<std::string>& names, double left, double right) {
  std::vector<LegendPlace> out;
  double x = left;
  int row = 0;
  for (const std::string& name : names) {
    // About 7.5 px per character at 13 px, after a 14 px swatch and a 5 px gap; 18 px between entries.
    const double w = 19 + 7.5 * static_cast<double>(name.size());
    if (x > left && x + w > right) {
      x = left;
      ++row;
    }
    out.push_back({x, row});
    x += w + 18;
  }
  return out;
}

// The axis never has more than this many ticks, whatever the data: the chart's size is bounded by
// construction (a fuzzed epoch time of 1.7e17 s once made a 2.4 GB axis of 100-point ticks).
constexpr int kMaxTicks = 12;

std::string num(double v) {
  return fmt::format("{:.1f}", v);
}

}  // namespace

std::string loss_chart_svg(const std::vector<LossChartBar>& bars, int width) {
  // Colours, in order of first appearance.
  std::vector<std::string> order;
  std::map<std::string, std::string> color;
  size_t spare = 0;
  for (const LossChartBar& b : bars) {
    for (const LossChartCause& c : b.causes) {
      if (color.count(c.name) != 0) continue;
      std::string col;
      for (const auto& k : kKnownCauses) {
        if (c.name == k.name) col = k.color;
      }
      if (col.empty()) col = kSpareColors[spare++ % std::size(kSpareColors)];
      color[c.name] = col;
      order.push_back(c.name);
    }
  }
  // Horizontal scale: negatives stack left of zero, positives right.
  double lo = 0;
  double hi = 1;
  for (const LossChartBar& b : bars) {
    double neg = 0;
    double pos = 0;
    for (const LossChartCause& c : b.causes) {
      if (!std::isfinite(c.points)) continue;
      (c.points < 0 ? neg : pos) += c.points;
    }
    lo = std::min(lo, neg);
    hi = std::max(hi, pos);
  }
  // Absurd sums (beyond any real loss, or overflowing to infinity) are drawn cut at the axis' end.
  constexpr double kAxisLimit = 1e12;
  lo = std::max(lo, -kAxisLimit);
  hi = std::min(hi, kAxisLimit);
  const double step = nice_step(hi - lo);
  lo = std::floor(lo / step) * step;
  hi = std::ceil(hi / step) * step;

  // The label column fits the longest label (about 7 px per character at 13 px), within limits.
  size_t longest = 0;
  for (const LossChartBar& b : bars) longest = std::max(longest, b.series.size());
  const int label_w = std::clamp((static_cast<int>(longest) + 42) * 7 + 10, 300, width / 2);
  const int right = 24;
  const std::vector<LegendPlace> legend = place_legend(order, 8, width - right);
  const int legend_h = 8 + 22 * (legend.empty() ? 1 : legend.back().row + 1);
  const int axis_h = 44;
  const int row_h = 30;
  const int bar_h = 20;
  const int top = legend_h + 8;
  const int height = top + static_cast<int>(bars.size()) * row_h + axis_h;
  const double x0 = label_w;
  const double x1 = width - right;
  auto px = [&](double pts) { return std::clamp(x0 + (pts - lo) / (hi - lo) * (x1 - x0), x0, x1); };

  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"loss-chart\" role=\"img\" viewBox=\"0 0 {} {}\" width=\"{}\" "
      "height=\"{}\" font-family=\"system-ui,sans-serif\" font-size=\"13\">\n"
      "<title>Lost parallel efficiency by cause, per strategy and scale</title>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
      width, height, width, height);
  // Legend, wrapped onto as many rows as it needs.
  for (size_t i = 0; i < order.size(); ++i) {
    const int y = 8 + 22 * legend[i].row;
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{}\" width=\"14\" height=\"14\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"{}\">{}</text>\n",
        legend[i].x, y, color[order[i]], legend[i].x + 19, y + 12, html_escape(order[i]));
  }
  // Grid and ticks.
  const int plot_bottom = top + static_cast<int>(bars.size()) * row_h;
  const int ticks = std::min(kMaxTicks, static_cast<int>(std::lround((hi - lo) / step)) + 1);
  for (int i = 0; i < ticks; ++i) {
    const double t = lo + step * i;
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"{4}\"/>"
        "<text x=\"{0:.1f}\" y=\"{5}\" text-anchor=\"middle\" fill=\"#444\">{6:g}</text>\n",
        px(t), top - 4, plot_bottom + 2, t == 0 ? "#333333" : "#dddddd", t == 0 ? 1.5 : 1, plot_bottom + 17, t);
  }
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"end\" fill=\"#333\">points of efficiency lost vs. the smallest "
      "scale (left of 0: gives back)</text>\n",
      x1, plot_bottom + 36);
  // Bars.
  for (size_t i = 0; i < bars.size(); ++i) {
    const LossChartBar& b = bars[i];
    const int y = top + static_cast<int>(i) * row_h + (row_h - bar_h) / 2;
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"end\">{} &#183; {} vs {} workers &#183; {} % efficient</text>\n",
        x0 - 8, y + 15, html_escape(b.series), b.workers, b.base_workers, num(b.efficiency_pct));
    double pos = 0;
    double neg = 0;
    for (const LossChartCause& c : b.causes) {
      if (!std::isfinite(c.points) || c.points == 0) continue;
      double from = 0;
      double to = 0;
      if (c.points > 0) {
        from = pos;
        to = pos += c.points;
      } else {
        to = neg;
        from = neg += c.points;
      }
      const double xa = px(from);
      const double w = px(to) - xa;
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\" "
          "stroke-width=\"1\"><title>{} at {} workers, {}: {} points{}</title></rect>\n",
          xa, y, w, bar_h, color[c.name], html_escape(b.series), b.workers, html_escape(c.name), num(c.points),
          html_escape(c.note));
      if (w >= 36) {
        out +=
            fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\" font-size=\"12\">{}</text>\n",
                        xa + w / 2, y + 14, light_fill(color[c.name]) ? "#222" : "#fff", num(c.points));
      }
    }
  }
  return out + "</svg>\n";
}

}  // namespace scaleprof::report

#include "report/svg_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/html_page.h"

namespace scaleprof::report {

namespace {

// Okabe-Ito, then Tol's: distinguishable for colour-blind readers, in order of first appearance.
constexpr const char* kSvgPalette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
                                       "#F0E442", "#332288", "#999999", "#882255", "#44AA99", "#000000"};

// One colour per series name, in order of first appearance.
class Colors {
 public:
  const std::string& of(const std::string& name) {
    auto [it, fresh] = colors_.try_emplace(name);
    if (fresh) {
      it->second = kSvgPalette[order_.size() % std::size(kSvgPalette)];
      order_.push_back(name);
    }
    return it->second;
  }
  const std::vector<std::string>& order() const { return order_; }

 private:
  std::map<std::string, std::string> colors_;
  std::vector<std::string> order_;
};

std::string svg_open(const std::string& id, const std::string& title, int width, int height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{}\" role=\"img\" viewBox=\"0 0 {} {}\" width=\"{}\" "
      "height=\"{}\" font-family=\"system-ui,sans-serif\" font-size=\"12\">\n<title>{}</title>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
      html_escape(id), width, height, width, height, html_escape(title));
}

// The legend: entries left to right from x = 8, wrapped before `right`; returns its height.
int legend_svg(const std::vector<std::string>& names, Colors& colors, int right, std::string* out) {
  double x = 8;
  int row = 0;
  for (const std::string& name : names) {
    const double w = 19 + 7.0 * static_cast<double>(std::min<size_t>(name.size(), 60));
    if (x > 8 && x + w > right) {
      x = 8;
      ++row;
    }
    *out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"{}\">{}</text>\n",
        x, 8 + 20 * row, colors.of(name), x + 17, 8 + 20 * row + 11, html_name(name));
    x += w + 16;
  }
  return names.empty() ? 0 : 8 + 20 * (row + 1);
}

bool drawable(double v) {
  return std::isfinite(v) && v > 0;
}

// Labels longer than this are cut (the tooltip has the name, as html_name bounds it).
std::string short_label(const std::string& label, size_t max_chars) {
  if (label.size() <= max_chars) return label;
  size_t cut = max_chars - 1;
  while (cut > 0 && (static_cast<unsigned char>(label[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  return label.substr(0, cut) + "\u2026";
}

}  // namespace

double nice_step(double range) {
  if (!(range > 0) || !std::isfinite(range)) return 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(range / 6)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (range / (m * magnitude) <= 6) return m * magnitude;
  }
  return 10 * magnitude;
}

std::string bar_chart_svg(const BarChart& chart, int width) {
  const size_t n = std::min(chart.bars.size(), kMaxChartBars);
  Colors colors;
  std::vector<std::string> names;
  double largest = 0;
  for (size_t i = 0; i < n; ++i) {
    double sum = 0;
    for (const ChartSegment& s : chart.bars[i].segments) {
      if (std::find(names.begin(), names.end(), s.name) == names.end()) names.push_back(s.name);
      if (drawable(s.value)) sum += s.value;
    }
    largest = std::max(largest, sum);
  }
  const double axis_max = chart.axis_max > 0 ? chart.axis_max : (largest > 0 ? largest : 1);
  const double step = nice_step(axis_max);
  const double hi = std::max(step, std::ceil(axis_max / step - 1e-9) * step);
  // A legend says what the colours mean, unless each bar is one segment named as the bar.
  bool self_named = true;
  for (size_t i = 0; i < n; ++i) {
    const ChartBar& bar = chart.bars[i];
    self_named = self_named && bar.segments.size() == 1 && bar.segments[0].name == bar.label;
  }
  std::string body;
  const int legend_h = names.size() > 1 && !self_named ? legend_svg(names, colors, width - 16, &body) : 0;
  const int label_w = 210;
  const int row_h = n > 32 ? 14 : 22;
  const int top = legend_h + 10;
  const int plot_bottom = top + static_cast<int>(n) * row_h;
  const int height = plot_bottom + 42;
  const double x0 = label_w;
  const double x1 = width - 16;
  auto px = [&](double v) { return std::clamp(x0 + v / hi * (x1 - x0), x0, x1); };
  const int ticks = std::min(12, static_cast<int>(std::lround(hi / step)) + 1);
  for (int t = 0; t < ticks; ++t) {
    const double v = step * t;
    body += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#dddddd\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#444\">{4:g}</text>\n",
        px(v), top - 2, plot_bottom, plot_bottom + 14, v);
  }
  body += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"end\" fill=\"#333\">{}</text>\n", x1, plot_bottom + 32,
                      html_escape(chart.axis_label));
  for (size_t i = 0; i < n; ++i) {
    const ChartBar& bar = chart.bars[i];
    const int y = top + static_cast<int>(i) * row_h;
    body += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"end\"><title>{}</title>{}</text>\n", x0 - 6,
                        y + row_h - 5, html_name(bar.label), html_escape(short_label(bar.label, 32)));
    double at = 0;
    for (const ChartSegment& s : bar.segments) {
      if (!drawable(s.value)) continue;
      const double xa = px(at);
      at += s.value;
      body += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}: {}: "
          "{:.4g}</title></rect>\n",
          xa, y + 2, std::max(0.0, px(at) - xa), row_h - 4, colors.of(s.name), html_name(bar.label), html_name(s.name),
          s.value);
    }
    // The bar's value beside it (a bar of 0 is otherwise no bar at all).
    if (n <= 32) {
      body += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"#333\" font-size=\"11\">{:.3g}</text>\n",
                          std::min(px(at) + 4, x1 - 30), y + row_h - 6, at);
    }
  }
  return svg_open(chart.id, chart.title, width, height) + body + "</svg>\n";
}

std::string scatter_chart_svg(const ScatterChart& chart, int width) {
  struct Axis {
    bool log = false;
    double lo = 0, hi = 1;
  };
  auto value = [](bool log, double v) { return log ? std::log10(v) : v; };
  auto usable = [](bool log, double v) { return std::isfinite(v) && (!log || v > 0); };
  Axis ax{chart.log_x}, ay{chart.log_y};
  bool first = true;
  size_t drawn = 0;
  for (const ChartPoint& p : chart.points) {
    if (drawn == kMaxChartPoints) break;
    if (!usable(ax.log, p.x) || !usable(ay.log, p.y)) continue;
    const double x = value(ax.log, p.x), y = value(ay.log, p.y);
    ax.lo = first ? x : std::min(ax.lo, x);
    ax.hi = first ? x : std::max(ax.hi, x);
    ay.lo = first ? y : std::min(ay.lo, y);
    ay.hi = first ? y : std::max(ay.hi, y);
    first = false;
    ++drawn;
  }
  for (Axis* a : {&ax, &ay}) {
    if (!a->log) a->lo = std::min(a->lo, 0.0);
    if (a->log) {
      a->lo = std::floor(a->lo);
      a->hi = std::max(a->lo + 1, std::ceil(a->hi));
    } else if (!(a->hi > a->lo)) {
      a->hi = a->lo + 1;
    }
  }
  Colors colors;
  std::vector<std::string> names;
  for (size_t i = 0, used = 0; i < chart.points.size() && used < drawn; ++i) {
    const ChartPoint& p = chart.points[i];
    if (!usable(ax.log, p.x) || !usable(ay.log, p.y)) continue;
    ++used;
    if (std::find(names.begin(), names.end(), p.series) == names.end()) names.push_back(p.series);
  }
  std::string body;
  const int legend_h = legend_svg(names, colors, width - 16, &body);
  const int top = legend_h + 12;
  const int left = 70, right = width - 20, bottom = top + 320;
  const int height = bottom + 46;
  auto px = [&](double x) { return left + (x - ax.lo) / (ax.hi - ax.lo) * (right - left); };
  auto py = [&](double y) { return bottom - (y - ay.lo) / (ay.hi - ay.lo) * (bottom - top); };
  auto tick_text = [](bool log, double t) {
    return log ? fmt::format("{:g}", std::pow(10.0, t)) : fmt::format("{:g}", t);
  };
  for (int axis = 0; axis < 2; ++axis) {
    const Axis& a = axis == 0 ? ax : ay;
    const double step = a.log ? std::max(1.0, std::ceil((a.hi - a.lo) / 8)) : nice_step(a.hi - a.lo);
    const int ticks = std::min(12, static_cast<int>(std::floor((a.hi - a.lo) / step + 1e-9)) + 1);
    for (int i = 0; i < ticks; ++i) {
      const double t = a.lo + step * i;
      if (axis == 0) {
        body += fmt::format(
            "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#dddddd\"/>"
            "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#444\">{4}</text>\n",
            px(t), top, bottom, bottom + 14, tick_text(a.log, t));
      } else {
        body += fmt::format(
            "<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\" stroke=\"#dddddd\"/>"
            "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\" fill=\"#444\">{5}</text>\n",
            py(t), left, right, left - 4, py(t) + 4, tick_text(a.log, t));
      }
    }
  }
  body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#333\">{}</text>\n", right, bottom + 32,
                      html_escape(chart.x_label));
  body += fmt::format(
      "<text x=\"14\" y=\"{}\" fill=\"#333\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">{}</text>\n",
      (top + bottom) / 2, (top + bottom) / 2, html_escape(chart.y_label));
  for (size_t i = 0, used = 0; i < chart.points.size() && used < drawn; ++i) {
    const ChartPoint& p = chart.points[i];
    if (!usable(ax.log, p.x) || !usable(ay.log, p.y)) continue;
    ++used;
    body += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\" fill-opacity=\"0.7\"/>\n",
                        px(value(ax.log, p.x)), py(value(ay.log, p.y)), colors.of(p.series));
  }
  return svg_open(chart.id, chart.title, width, height) + body + "</svg>\n";
}

std::string heatmap_svg(const Heatmap& map, int width) {
  const size_t rows = std::min(map.row_labels.size(), kMaxHeatmapRows);
  const size_t cols = std::min(map.column_labels.size(), kMaxHeatmapColumns);
  const bool complete = map.values.size() == map.row_labels.size() * map.column_labels.size();
  auto at = [&](size_t r, size_t c) { return complete ? map.values[r * map.column_labels.size() + c] : std::nan(""); };
  double largest = 0;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      if (std::isfinite(at(r, c))) largest = std::max(largest, at(r, c));
    }
  }
  const int label_w = 120, top = 34, right = width - 16;
  const double cell_w = cols == 0 ? 0 : static_cast<double>(right - label_w) / static_cast<double>(cols);
  const int cell_h = rows > 32 ? 8 : 18;
  const int bottom = top + static_cast<int>(rows) * cell_h;
  const int height = bottom + 40;
  std::string body =
      fmt::format("<text x=\"8\" y=\"20\" fill=\"#333\">darker: more ({} at the darkest: {:.4g})</text>\n",
                  html_escape(map.unit), largest);
  const size_t label_every = std::max<size_t>(1, rows / 16);
  for (size_t r = 0; r < rows; ++r) {
    const int y = top + static_cast<int>(r) * cell_h;
    if (r % label_every == 0) {
      body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"{}\">{}</text>\n", label_w - 6,
                          y + cell_h - 1, cell_h > 10 ? 12 : 9, html_escape(short_label(map.row_labels[r], 18)));
    }
    for (size_t c = 0; c < cols; ++c) {
      const double v = at(r, c);
      if (!std::isfinite(v)) continue;
      // White to the Okabe-Ito vermilion (213, 94, 0), by the share of the largest value.
      const double f = largest > 0 ? std::clamp(v / largest, 0.0, 1.0) : 0;
      const auto mix = [f](int to) { return static_cast<int>(std::lround(255 - f * (255 - to))); };
      body += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"rgb({},{},{})\"><title>{}, {}: {:.4g} "
          "{}</title></rect>\n",
          label_w + cell_w * static_cast<double>(c), y, cell_w, cell_h, mix(213), mix(94), mix(0),
          html_name(map.row_labels[r]), html_name(map.column_labels[c]), v, html_escape(map.unit));
    }
  }
  const size_t col_label_every = std::max<size_t>(1, cols / 12);
  for (size_t c = 0; c < cols; c += col_label_every) {
    body += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n",
                        label_w + cell_w * (static_cast<double>(c) + 0.5), bottom + 14,
                        html_escape(short_label(map.column_labels[c], 12)));
  }
  body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>\n",
                      label_w, top, cell_w * static_cast<double>(cols), bottom - top);
  return svg_open(map.id, map.title, width, height) + body + "</svg>\n";
}

}  // namespace scaleprof::report

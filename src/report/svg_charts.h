// The charts of the trace page (trace_html.h) as plain SVG written here: no gnuplot, no script, the
// same on every machine. Each chart's size is bounded by construction, whatever the data: at most
// kMaxChartBars bars, kMaxChartPoints points and kMaxHeatmapRows x kMaxHeatmapColumns cells are drawn
// (the caller bins ranks and steps to fit; what a chart had to leave out it says in its caption), and
// axes have at most a dozen ticks. Every string from the data is escaped; non-finite values are not
// drawn.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace scaleprof::report {

inline constexpr size_t kMaxChartBars = 80;
inline constexpr size_t kMaxChartPoints = 4000;
inline constexpr size_t kMaxHeatmapRows = 64;
inline constexpr size_t kMaxHeatmapColumns = 100;

// A tick step of 1, 2, 2.5 or 5 times a power of ten giving at most about six ticks over `range` (1
// for a range that is not a positive finite number): every chart's axis, the loss chart's too.
double nice_step(double range);

struct ChartSegment {
  std::string name;  // the legend's entry; one colour per name in a chart
  double value = 0;  // >= 0; negative and non-finite values are not drawn
};

struct ChartBar {
  std::string label;  // left of the bar, e.g. "rank 3" or "ranks 0-15"
  std::vector<ChartSegment> segments;
};

// Horizontal bars, stacked when a bar has several segments (legend above), one row per bar.
struct BarChart {
  std::string id;          // the <svg> element's id
  std::string title;       // its <title> (the figure caption is the page's)
  std::string axis_label;  // under the axis, e.g. "% of the profiled time"
  double axis_max = 0;     // the axis' end; 0: the largest bar
  std::vector<ChartBar> bars;
};
std::string bar_chart_svg(const BarChart& chart, int width = 960);

struct ChartPoint {
  double x = 0;
  double y = 0;
  std::string series;  // colour and legend entry
};

// Points on two axes, each linear or logarithmic (a log axis drops values <= 0).
struct ScatterChart {
  std::string id;
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  bool log_y = false;
  std::vector<ChartPoint> points;
};
std::string scatter_chart_svg(const ScatterChart& chart, int width = 960);

// A matrix of values, darker for more; NaN cells are drawn empty. values.size() must be
// row_labels.size() * column_labels.size(), row-major.
struct Heatmap {
  std::string id;
  std::string title;
  std::string unit;  // in the tooltips and the scale, e.g. "ms"
  std::vector<std::string> row_labels;
  std::vector<std::string> column_labels;
  std::vector<double> values;
};
std::string heatmap_svg(const Heatmap& map, int width = 960);

}  // namespace scaleprof::report

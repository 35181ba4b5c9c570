// The chart at the top of the HTML report: lost parallel efficiency by cause, one horizontal bar per
// strategy and scale. It is written here as plain SVG (not by gnuplot) because it is part of the
// page's answer: it must be there, the same on every machine, even where gnuplot is missing.
//
// Causes are a list so that new ones slot in: every cause keeps one colour (known names have fixed
// colours, others take the next free one in order of first appearance). A negative part (a cause that
// shrank faster than the workers grew) is drawn left of the zero line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace scaleprof::report {

struct LossChartCause {
  std::string name;   // "communication", "idle", "everything else", "unattributed", ...
  double points = 0;  // percentage points of efficiency (may be negative)
  // Added to the bar's tooltip: the cause's named parts and the pipeline bubble's ideal, in the exclusive
  // split ("; of it in the exclusive split: all-to-all imbalance 3.2 points"); "" for none.
  std::string note{};
};

struct LossChartBar {
  std::string series;
  int64_t workers = 0;       // the scale of this bar
  int64_t base_workers = 0;  // against which the efficiency is measured
  double efficiency_pct = 0;
  std::vector<LossChartCause> causes;
};

// An <svg> element (no XML prologue), `width` px wide, with a legend; every string escaped.
std::string loss_chart_svg(const std::vector<LossChartBar>& bars, int width = 1000);

}  // namespace scaleprof::report

// The answer the HTML report opens with: the best strategy at each scale, each strategy's efficiency
// at its largest scale, the main cause of its lost efficiency, and the bars of the lost-efficiency
// chart (report/loss_chart.h). Derived from the analysis only; the same words as the explanation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/loss_chart.h"
#include "report/scalability_report.h"

namespace scaleprof::report {

struct MainCause {
  std::string series;
  int64_t workers = 0;       // the strategy's largest scale
  int64_t base_workers = 0;  // its smallest
  double efficiency_pct = tables::kNaN;
  bool weak = false;  // a weak scaling test: the efficiency is T(n0)/T(n)
  double lost_pts = tables::kNaN;
  std::string cause;  // a cause name, "unattributed" or "" when nothing was lost
  double cause_pts = tables::kNaN;
  bool attributed = false;                 // the basis attributes causes (else the whole loss is unattributed)
  double unattributed_pts = tables::kNaN;  // the rest beyond the named causes
  std::string basis;                       // what the attribution rests on, in words
};

// One entry per strategy with two or more scales, in the analysis's order.
std::vector<MainCause> main_causes(const ScalabilityAnalysis& analysis);

// The chart's bars: one per strategy and scale above its smallest.
std::vector<LossChartBar> loss_chart_bars(const ScalabilityAnalysis& analysis);

// The "Key figures" <section> (id "key-figures") with the chart; every string escaped.
std::string key_figures_html(const ScalabilityAnalysis& analysis);

}  // namespace scaleprof::report

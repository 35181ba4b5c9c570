// The plots of the scalability report as data: what each one shows, computed from the analysis alone
// (pure; report/gnuplot_script.h writes their scripts, report/scalability_plots.h draws them). Stable
// file names:
//   absolute_epoch_time        mean epoch time vs. workers, log-log, std as error bars
//   relative_epoch_time_speedup speedup vs. workers with the ideal line and the Amdahl projection
//   parallel_efficiency        efficiency (%) vs. workers with the 100% line
//   utilization_plot           mean GPU utilization, bars per workers and strategy
//   gpu_energy_plot            (itwinai names only) total GPU energy of each group (Wh), itwinai's plot
//   energy_per_epoch_plot      GPU energy to train one epoch (Wh), bars per workers and strategy
//   computation_vs_other_plot  itwinai's computation fraction, stacked with the rest, per strategy
//   collective_bandwidth       bus bandwidth vs. message size of the collectives matched across ranks
//                              (median per size), one line per strategy, workers and collective type
//   rank_wait                  per rank: the time it waited for the last rank at collectives and the
//                              time the others waited for it, at each strategy's largest scale with
//                              matched collectives (at most 32 ranks: those with the most waiting)
//   peak_device_memory         peak bytes allocated per GPU (largest over ranks, [memory] events), bars
//                              per workers and strategy (issue 23)
// A plot whose data is absent is not drawn.
#pragma once

#include <string>
#include <vector>

#include "report/scalability_report.h"

namespace scaleprof::report {

enum class PlotKind { kLines, kBars, kStacked };

struct PlotSeries {
  std::string name;
  std::vector<double> x, y, err;  // err: error bar half-height (lines), empty for none
  bool dashed = false;            // projections and references
  bool reference = false;         // the ideal line: black
  int color = 0;                  // palette index (strategies keep their colour across plots)
  int layer = 0;                  // projections: 0, 1, ... in drawing order (own dash pattern and width)
};

struct PlotSpec {
  std::string stem;  // file name without suffix
  std::string title, xlabel, ylabel;
  PlotKind kind = PlotKind::kLines;
  int log_x = 0, log_y = 0;  // log base, 0 = linear
  double y_min = tables::kNaN, y_max = tables::kNaN;
  std::vector<double> x_ticks;  // lines: tick positions (worker counts)
  std::string x_format;         // lines: gnuplot format of the x tick labels ("" default)
  // Bars: one cluster per category (worker count) with one bar per series; stacked: one group per
  // series (strategy), one bar per x (worker count), each bar = y (computation) + 1 - y (other),
  // labelled with y as a percentage.
  std::vector<std::string> categories;
  std::vector<PlotSeries> series;
  std::string stacked_rest = "other";  // stacked: the key entry of the hatched part, "(hatched)" added
  // A line written on the plot in red, not a data point: the configurations that failed ("" none).
  std::string note;
};

// Which file names: scaleprof's (`scaleprof report`), or itwinai's (`generate-scalability-report`),
// which adds itwinai's `gpu_energy_plot` (total energy per strategy and worker count, as itwinai draws
// it) so scripts and docs written for itwinai's plot folder find their files; the others are shared.
enum class PlotNames { kScaleprof, kItwinai };

std::vector<PlotSpec> scalability_plot_specs(const ScalabilityAnalysis& analysis,
                                             PlotNames names = PlotNames::kScaleprof);

}  // namespace scaleprof::report

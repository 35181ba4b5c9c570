// The gnuplot script of one plot (pure text; the runner in report/scalability_plots.h runs it).
#pragma once

#include <string>

#include "report/plot_specs.h"

namespace scaleprof::report {

// The gnuplot script drawing `spec` to `output` with the terminal for `suffix` (.png, .svg, .pdf).
std::string gnuplot_script(const PlotSpec& spec, const std::string& suffix, const std::string& output);

}  // namespace scaleprof::report

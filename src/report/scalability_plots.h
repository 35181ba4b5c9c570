// Drawing the scalability report's plots with gnuplot (Debian gnuplot-nox), run as a subprocess on a
// generated script (report/gnuplot_script.h) for each plot spec (report/plot_specs.h, which lists
// the plots and their file names).
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "report/gnuplot_script.h"
#include "report/plot_specs.h"

namespace scaleprof::report {

// The gnuplot executable: $SCALEPROF_GNUPLOT if set (empty or missing file: none), else `gnuplot` on
// PATH. Empty when there is none.
std::string find_gnuplot();

bool is_plot_suffix(const std::string& suffix);  // .png, .svg, .pdf

// Draws every spec into dir/<stem><suffix> (the folder is created). Returns the files written.
Result<std::vector<std::string>> draw_plots(const std::vector<PlotSpec>& specs, const std::string& dir,
                                            const std::string& suffix, const std::string& gnuplot);

// Draws every spec as SVG and returns the <svg> elements (XML prologue removed), in spec order.
Result<std::vector<std::string>> render_svg_plots(const std::vector<PlotSpec>& specs, const std::string& gnuplot);

}  // namespace scaleprof::report

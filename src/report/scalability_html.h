// The scalability report as ONE self-contained HTML file: every table, every plot as inline SVG, the
// explanation, the warnings and the runs it used. No script, no external resource: it opens offline.
// Every string that came from data (run names, strategies, paths, kernel names) is HTML-escaped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/html_page.h"  // IWYU pragma: export (html_escape)
#include "report/scalability_report.h"

namespace scaleprof::report {

struct HtmlPlot {
  std::string stem;   // e.g. "absolute_epoch_time"; the figure's id is "plot-<stem>"
  std::string title;  // caption
  std::string svg;    // an <svg> element as gnuplot wrote it
};

// A link to the trace page of one run (pipeline/trace_pages.h), relative to the report's page.
struct TraceLink {
  std::string label;  // "ddp, 4 worker(s): run NAME"
  std::string href;   // the page's relative path as it is on disk; written through url_path (html_page.h)
  int64_t trace_files = 0;
  bool failed = false;  // some of its traces could not be read (the page says which)
};

struct HtmlOptions {
  std::string root;                    // data folder, shown in the header
  std::string plots_note;              // why plots are missing (no gnuplot, ...); empty when they are all there
  std::vector<TraceLink> trace_pages;  // empty: no "Trace pages" section
};

std::string render_scalability_html(const ScalabilityAnalysis& analysis, const std::vector<ReportSection>& sections,
                                    const std::vector<HtmlPlot>& plots, const HtmlOptions& options);

}  // namespace scaleprof::report

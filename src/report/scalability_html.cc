#include "report/scalability_html.h"

#include <fmt/format.h>

#include <cmath>

#include "report/html_page.h"
#include "report/key_figures.h"

namespace scaleprof::report {

namespace {

// gnuplot names its SVG definitions gpPt0, gpDot, ... in every file; inline in one page those ids
// would collide, so each plot gets its own prefix.
std::string prefix_svg_ids(std::string svg, const std::string& prefix) {
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t pos = svg.find(from); pos != std::string::npos; pos = svg.find(from, pos + to.size())) {
      svg.replace(pos, from.size(), to);
    }
  };
  replace_all("id='gp", "id='" + prefix + "gp");
  replace_all("id=\"gp", "id=\"" + prefix + "gp");
  replace_all("'#gp", "'#" + prefix + "gp");
  replace_all("\"#gp", "\"#" + prefix + "gp");
  replace_all("url(#gp", "url(#" + prefix + "gp");
  replace_all("id=\"gnuplot_", "id=\"" + prefix + "gnuplot_");
  return svg;
}

}  // namespace

std::string render_scalability_html(const ScalabilityAnalysis& analysis, const std::vector<ReportSection>& sections,
                                    const std::vector<HtmlPlot>& plots, const HtmlOptions& options) {
  std::string out = html_page_start("scaleprof scalability report");
  out += "<h1>Scalability report</h1>\n";
  out += fmt::format(
      "<p class=\"meta\">scaleprof {} &middot; data: <code>{}</code> &middot; {} run(s) &middot; first {} "
      "epoch(s) of every run skipped as warm-up</p>\n",
      SCALEPROF_VERSION, html_escape(options.root), analysis.runs.size(), analysis.options.skip_epochs);
  // The answer first: key figures and the lost-efficiency chart, then the contents, tables and plots.
  out += key_figures_html(analysis);
  out += "<nav><h2>Contents</h2><ul>\n";
  for (const ReportSection& s : sections) {
    out += fmt::format("<li><a href=\"#section-{}\">{}</a></li>\n", url_path(s.key), html_escape(s.title));
  }
  if (!options.trace_pages.empty()) out += "<li><a href=\"#trace-pages\">Trace pages</a></li>\n";
  out += "<li><a href=\"#plots\">Plots</a></li>\n</ul></nav>\n";

  if (!analysis.warnings.empty()) {
    out += "<section id=\"warnings\">\n<h2>Warnings</h2>\n<div class=\"warn\"><ul>\n";
    for (const Diagnostic& w : analysis.warnings) out += "<li>" + html_escape(w.text()) + "</li>\n";
    out += "</ul></div>\n</section>\n";
  }
  if (!analysis.errors.empty()) {
    out += "<section id=\"errors\">\n<h2>Rejected data</h2>\n<div class=\"err\"><ul>\n";
    for (const Diagnostic& e : analysis.errors) out += "<li>" + html_escape(e.text()) + "</li>\n";
    out += "</ul></div>\n</section>\n";
  }

  for (const ReportSection& s : sections) {
    out += fmt::format("<section id=\"section-{}\">\n<h2>{}</h2>\n", html_escape(s.key), html_escape(s.title));
    // The explanation (the notes of "Where scaling is lost") stands out; other notes are plain.
    const bool explain = s.key == "scaling_loss";
    if (explain && !s.notes.empty()) out += "<div class=\"explain\">\n";
    for (const std::string& n : s.notes) out += "<p>" + html_escape(n) + "</p>\n";
    if (explain && !s.notes.empty()) out += "</div>\n";
    for (size_t i = 0; i < s.tables.size(); ++i) out += html_table(without_json_only(s.tables[i]), s.table_keys[i]);
    out += "</section>\n";
  }

  if (!options.trace_pages.empty()) {
    // Pages beside this one (trace summary --html of each run): where each run's time went, rank by rank.
    out +=
        "<section id=\"trace-pages\">\n<h2>Trace pages</h2>\n<p>Each run's profiler traces analysed rank by rank "
        "(<code>scaleprof trace summary --html</code>): time breakdown, kernels, idle time, overlap, "
        "collectives and stragglers.</p>\n<ul>\n";
    for (const TraceLink& link : options.trace_pages) {
      out += fmt::format("<li><a href=\"{}\">{}</a> ({} trace file(s){})</li>\n", url_path(link.href),
                         html_escape(link.label), link.trace_files, link.failed ? "; some could not be read" : "");
    }
    out += "</ul>\n</section>\n";
  }
  out += "<section id=\"plots\">\n<h2>Plots</h2>\n";
  if (!options.plots_note.empty()) out += "<p class=\"warn\">" + html_escape(options.plots_note) + "</p>\n";
  for (size_t i = 0; i < plots.size(); ++i) {
    const HtmlPlot& p = plots[i];
    out += fmt::format("<figure id=\"plot-{}\">\n", html_escape(p.stem));
    out += prefix_svg_ids(p.svg, fmt::format("p{}", i));
    out += fmt::format("\n<figcaption>{}</figcaption>\n</figure>\n", html_escape(p.title));
  }
  out += "</section>\n</body>\n</html>\n";
  return out;
}

}  // namespace scaleprof::report

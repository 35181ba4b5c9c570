#include "report/scalability_html.h"

#include <fmt/format.h>

#include <cmath>

#include "core/utf8.h"
#include "report/key_figures.h"

namespace scaleprof::report {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const char c = text[pos];
    if (static_cast<unsigned char>(c) >= 0x80) {
      // The page is UTF-8: invalid sequences become U+FFFD, like JSON output.
      const size_t length = utf8_sequence_length(text, pos);
      if (length == 0) {
        out += kReplacementCharacter;
        ++pos;
      } else {
        out.append(text, pos, length);
        pos += length;
      }
      continue;
    }
    ++pos;
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

constexpr const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:1200px;
padding:0 1rem;color:#1a1a1a;line-height:1.45}
h1{font-size:1.7rem;margin-bottom:.2rem}h2{font-size:1.3rem;border-bottom:2px solid #0072B2;padding-bottom:.2rem;
margin-top:2.2rem}h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
.meta{color:#555;font-size:.9rem}
table.data{border-collapse:collapse;font-size:.85rem;margin:.4rem 0 1rem;font-variant-numeric:tabular-nums}
table.data th,table.data td{border:1px solid #ccc;padding:.25rem .5rem}
table.data th{background:#eef3f8;text-align:left}table.data td.num{text-align:right}
table.data td.null{color:#999;text-align:center}
.tablewrap{overflow-x:auto}
figure{margin:1rem 0 2rem}figure svg{width:100%;height:auto;max-width:960px;display:block;border:1px solid #ddd}
figcaption{font-size:.9rem;color:#444;margin-top:.3rem}
.warn{background:#fff7e0;border-left:4px solid #E69F00;padding:.5rem 1rem}
.err{background:#fdecea;border-left:4px solid #D55E00;padding:.5rem 1rem}
.explain{background:#eef7f2;border-left:4px solid #009E73;padding:.5rem 1rem}
nav ul{columns:2;font-size:.9rem}
.cards{display:flex;flex-wrap:wrap;gap:.8rem;margin:.4rem 0 .6rem}
.card{flex:1 1 300px;border:1px solid #ccd;border-top:4px solid #0072B2;border-radius:4px;padding:.3rem .8rem;
font-size:.9rem;background:#fafcff}
.card h3{margin:.3rem 0;font-size:.95rem;color:#0b3d66}.card ul{margin:.2rem 0;padding-left:1.1rem}
.card .big{font-size:1.15rem;font-weight:600}
#key-figures h2{margin-top:.8rem}#loss-chart-figure{margin:.4rem 0 1rem}
#loss-chart-figure svg{border:0;max-width:1000px}
@media print{nav{display:none}figure{break-inside:avoid}}
)";

std::string cell_html(const Cell& c) {
  if (std::holds_alternative<std::string>(c.value)) {
    return "<td>" + html_escape(std::get<std::string>(c.value)) + "</td>";
  }
  if (std::holds_alternative<int64_t>(c.value))
    return fmt::format("<td class=\"num\">{}</td>", std::get<int64_t>(c.value));
  if (std::holds_alternative<double>(c.value)) {
    const double v = std::get<double>(c.value);
    if (!std::isfinite(v)) return "<td class=\"null\">&ndash;</td>";
    return fmt::format("<td class=\"num\">{:.{}f}</td>", v, c.precision);
  }
  return "<td class=\"null\">&ndash;</td>";
}

std::string table_html(const Table& t, const std::string& id) {
  std::string out =
      fmt::format("<h3>{}</h3>\n<div class=\"tablewrap\"><table class=\"data\" id=\"table-{}\">\n<thead><tr>",
                  html_escape(t.title), html_escape(id));
  for (const Column& col : t.columns) {
    out += "<th>" + html_escape(col.title.empty() ? col.key : col.title) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (size_t i = 0; i < t.columns.size(); ++i) out += i < row.size() ? cell_html(row[i]) : "<td></td>";
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

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
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>scaleprof scalability report</title>\n<style>";
  out += kStyle;
  out += "</style>\n</head>\n<body>\n<h1>Scalability report</h1>\n";
  out += fmt::format(
      "<p class=\"meta\">scaleprof {} &middot; data: <code>{}</code> &middot; {} run(s) &middot; first {} "
      "epoch(s) of every run skipped as warm-up</p>\n",
      SCALEPROF_VERSION, html_escape(options.root), analysis.runs.size(), analysis.options.skip_epochs);
  // The answer first: key figures and the lost-efficiency chart, then the contents, tables and plots.
  out += key_figures_html(analysis);
  out += "<nav><h2>Contents</h2><ul>\n";
  for (const ReportSection& s : sections) {
    out += fmt::format("<li><a href=\"#section-{}\">{}</a></li>\n", html_escape(s.key), html_escape(s.title));
  }
  out += "<li><a href=\"#plots\">Plots</a></li>\n</ul></nav>\n";

  if (!analysis.warnings.empty()) {
    out += "<section id=\"warnings\">\n<h2>Warnings</h2>\n<div class=\"warn\"><ul>\n";
    for (const std::string& w : analysis.warnings) out += "<li>" + html_escape(w) + "</li>\n";
    out += "</ul></div>\n</section>\n";
  }
  if (!analysis.errors.empty()) {
    out += "<section id=\"errors\">\n<h2>Rejected data</h2>\n<div class=\"err\"><ul>\n";
    for (const std::string& e : analysis.errors) out += "<li>" + html_escape(e) + "</li>\n";
    out += "</ul></div>\n</section>\n";
  }

  for (const ReportSection& s : sections) {
    out += fmt::format("<section id=\"section-{}\">\n<h2>{}</h2>\n", html_escape(s.key), html_escape(s.title));
    // The explanation (the notes of "Where scaling is lost") stands out; other notes are plain.
    const bool explain = s.key == "scaling_loss";
    if (explain && !s.notes.empty()) out += "<div class=\"explain\">\n";
    for (const std::string& n : s.notes) out += "<p>" + html_escape(n) + "</p>\n";
    if (explain && !s.notes.empty()) out += "</div>\n";
    for (size_t i = 0; i < s.tables.size(); ++i) out += table_html(without_json_only(s.tables[i]), s.table_keys[i]);
    out += "</section>\n";
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

#include "report/html_page.h"

#include <fmt/format.h>

#include <cmath>

#include "core/terminal_text.h"
#include "core/utf8.h"
#include "report/name_shorten.h"

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
        const uint32_t cp = utf8_code_point(text, pos, length);
        if (is_terminal_control(cp)) {
          // Bidi overrides (U+202E shows "exe.txt" for "txt.exe"), invisible format characters and
          // C1 controls: shown as their code, as the terminal shows them (core/terminal_text.h).
          out += fmt::format("\\u{:04x}", cp);
        } else {
          out.append(text, pos, length);
        }
        pos += length;
      }
      continue;
    }
    ++pos;
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\r' && c != '\t') || c == 0x7f) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));  // ESC, NUL, DEL ...
      continue;
    }
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

std::string url_path(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (const char c : path) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '.' || c == '_' || c == '~' || c == '/';
    if (keep) {
      out += c;
    } else {
      out += fmt::format("%{:02X}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

std::string html_name(std::string_view text) {
  // Escaped after shortening: an entity is never cut in half.
  return html_escape(shorten_name(text, kMaxHtmlNameWidth));
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

}  // namespace

std::string html_page_start(std::string_view title, std::string_view extra_style) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  out += html_escape(title);
  out += "</title>\n<style>";
  out += kStyle;
  out += extra_style;
  return out + "</style>\n</head>\n<body>\n";
}

std::string html_cell(const Cell& c) {
  if (std::holds_alternative<std::string>(c.value)) {
    return "<td>" + html_name(std::get<std::string>(c.value)) + "</td>";
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

std::string html_table(const Table& t, const std::string& id, const HtmlTableOptions& options) {
  std::string out =
      fmt::format("<h3>{}</h3>\n<div class=\"tablewrap\"><table class=\"data{}\" id=\"table-{}\">\n<thead><tr>",
                  html_escape(t.title), options.sortable ? " sortable" : "", html_escape(id));
  for (const Column& col : t.columns) {
    out += "<th>" + html_escape(col.title.empty() ? col.key : col.title) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  size_t shown = 0;
  size_t total = 0;
  t.for_each_row([&](const std::vector<Cell>& row) {
    if (++total > options.max_rows) return;
    ++shown;
    out += "<tr>";
    for (size_t i = 0; i < t.columns.size(); ++i) out += i < row.size() ? html_cell(row[i]) : "<td></td>";
    out += "</tr>\n";
  });
  out += "</tbody></table></div>\n";
  if (shown < total) {
    out += fmt::format("<p class=\"meta\">The first {} of {} rows; the CSV and JSON output have them all.</p>\n", shown,
                       total);
  }
  return out;
}

}  // namespace scaleprof::report

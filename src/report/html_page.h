// What every HTML page scaleprof writes shares: escaping, the head with its one stylesheet (no script,
// font or image from outside the file), and tables. The scalability report and the trace page
// (trace_html.h) are built from these, so they look alike and escape alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "report/table.h"

namespace scaleprof::report {

// &, <, >, " and ' escaped; invalid UTF-8 sequences become U+FFFD (the page is UTF-8); what the
// terminal sanitiser escapes (core/terminal_text.h: C0 controls such as ESC, DEL, C1 controls, bidi
// overrides and isolates such as U+202E, invisible format characters) is shown as its code, "\u202e"
// (line feed, carriage return and tab stay); other bytes unchanged.
std::string html_escape(std::string_view text);

// The most code points of one name on a page: a table cell, a chart label or its tooltip. A page's
// rows are bounded, and so, with this, its bytes: 16 ranks of 100 kB kernel names made a 29 MB page.
inline constexpr size_t kMaxHtmlNameWidth = 200;

// `text` shortened to kMaxHtmlNameWidth code points as the terminal shortens names
// (report/name_shorten.h: parameter lists, then template arguments, then the middle), then escaped
// as html_escape. The CSV and JSON outputs keep every name whole.
std::string html_name(std::string_view text);

// The one way a link's target is written into a page (every href): a relative path with every byte
// but A-Z a-z 0-9 - . _ ~ and / percent-encoded, so that a name such as "report-10:30" or
// "javascript:x" stays a relative path (unencoded, the colon made it a URL scheme: a dead link or a
// javascript: URL). Attribute-safe as it is (no &, <, > or quote is left).
std::string url_path(std::string_view path);

// "<!DOCTYPE html>" up to and including "<body>": charset, viewport, the escaped title, the style
// (with `extra_style`, a page's own rules, appended).
std::string html_page_start(std::string_view title, std::string_view extra_style = {});

// One table cell: text as html_name (shortened and escaped: the one place a page's cells are written),
// numbers right-aligned with the cell's precision, null as a dash.
std::string html_cell(const Cell& cell);

struct HtmlTableOptions {
  size_t max_rows = SIZE_MAX;  // rows past it are left out, with a line saying how many there were
  bool sortable = false;       // class "sortable": the page's script sorts it by a click on a header
};

// A table's title (h3) and its rows (`rows`, then `row_source`) as <table class="data"
// id="table-<id>">.
std::string html_table(const Table& table, const std::string& id, const HtmlTableOptions& options = {});

}  // namespace scaleprof::report

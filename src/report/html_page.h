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

// &, <, >, " and ' escaped; invalid UTF-8 sequences become U+FFFD (the page is UTF-8); other bytes
// unchanged.
std::string html_escape(std::string_view text);

// "<!DOCTYPE html>" up to and including "<body>": charset, viewport, the escaped title, the style
// (with `extra_style`, a page's own rules, appended).
std::string html_page_start(std::string_view title, std::string_view extra_style = {});

// One table cell: text escaped, numbers right-aligned with the cell's precision, null as a dash.
std::string html_cell(const Cell& cell);

struct HtmlTableOptions {
  size_t max_rows = SIZE_MAX;  // rows past it are left out, with a line saying how many there were
  bool sortable = false;       // class "sortable": the page's script sorts it by a click on a header
};

// A table's title (h3) and its rows (`rows`, then `row_source`) as <table class="data"
// id="table-<id>">.
std::string html_table(const Table& table, const std::string& id, const HtmlTableOptions& options = {});

}  // namespace scaleprof::report

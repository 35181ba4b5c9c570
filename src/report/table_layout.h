// Fitting a text table to the terminal: which columns are shown, how wide, under which header
// lines, in how many parts. Only the text form uses it (report/table.cc); CSV and JSON keep every
// column and every name.
//
// A table wider than the width wanted is made to fit in steps, each only when the one before did not
// suffice, in the order a reader loses least:
//   1. header titles wider than their column's values are wrapped over up to kMaxHeaderLines lines
//      ("Waiting for stragglers (pts)" over a six-character number is most of a line otherwise);
//   2. name columns are narrowed (shorten_name), to no less than kMinShortenedWidth;
//   3. columns the reader can do without are left out, the least important first (Importance, then
//      the rightmost first), and named in a note under the table;
//   4. when what is left still does not fit, the table is folded: printed in parts one below the
//      other, each repeating the key columns, rather than cut.
// `wide` (--wide) keeps the layout of old: every column in one part, headers on one line; only names
// are narrowed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "report/table.h"

namespace scaleprof::report {

inline constexpr size_t kMaxHeaderLines = 3;

// What the text form measured of one column.
struct ColumnMeasure {
  std::string title;    // the header on one line, terminal-safe
  size_t cells = 0;     // display width of the widest value
  bool numeric = true;  // only numbers (or nothing): right-aligned, never narrowed
  Importance importance = Importance::kEssential;
};

struct TablePart {
  std::vector<size_t> columns;  // indices into the measured columns, in table order
  std::vector<size_t> width;    // display width of each, as printed
  // Header lines of each column, top to bottom; every column has header_lines of them (blank ones
  // first: the titles sit on the rule).
  std::vector<std::vector<std::string>> header;
  size_t header_lines = 1;
};

struct TableLayout {
  std::vector<TablePart> parts;  // one unless the table is folded
  std::vector<size_t> dropped;   // columns left out, in table order
};

// The layout of a table with these columns in `max_width` display columns (0: no limit; everything
// whole). `full_names` keeps names whole (the table may then stay wider than max_width).
TableLayout plan_table_layout(const std::vector<ColumnMeasure>& columns, size_t max_width, bool wide, bool full_names);

// `text` broken at spaces into lines of at most `width` display columns (a word longer than that
// gets a line of its own; width 0 keeps one line).
std::vector<std::string> wrap_words(std::string_view text, size_t width);

}  // namespace scaleprof::report

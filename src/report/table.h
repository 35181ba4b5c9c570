// Table: the one shape every command prints, rendered as aligned text, CSV or JSON.
//
// Analyses return typed structs; report code turns them into Tables; the CLI picks the format. Cells
// are strings, integers, floats (with a display precision) or empty (null in JSON).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/json_string.h"  // IWYU pragma: export (json_quote, used with tables)

namespace scaleprof::report {

enum class Format { kTable, kCsv, kJson };

struct Cell {
  std::variant<std::monostate, std::string, int64_t, double> value;
  int precision = 2;  // digits after the point for doubles in table/CSV output

  Cell() = default;
  Cell(std::string s) : value(std::move(s)) {}                     // NOLINT
  Cell(const char* s) : value(std::string(s)) {}                   // NOLINT
  Cell(std::string_view s) : value(std::string(s)) {}              // NOLINT
  Cell(int64_t v) : value(v) {}                                    // NOLINT
  Cell(int v) : value(static_cast<int64_t>(v)) {}                  // NOLINT
  Cell(uint64_t v) : value(static_cast<int64_t>(v)) {}             // NOLINT
  Cell(double v, int digits = 2) : value(v), precision(digits) {}  // NOLINT
  static Cell null() { return {}; }
};

struct Column {
  std::string key;    // JSON key and CSV header, e.g. "idle_us"
  std::string title;  // table header, e.g. "Idle (us)"; empty means use key
};

struct Table {
  std::string title;  // printed above the table in text form; JSON/CSV ignore it
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;

  void add_row(std::vector<Cell> row) { rows.push_back(std::move(row)); }
};

struct RenderOptions {
  Format format = Format::kTable;
  bool color = false;  // bold headers in text form (only when writing to a terminal)
  // Text form only: the widest line wanted (the terminal's width). When a table is wider, its text
  // columns (names) are narrowed, widest first but to no less than kMinShortenedWidth, and their
  // cells shortened by shorten_name(). 0 keeps every name whole (CSV and JSON always do).
  size_t max_width = 0;
};

inline constexpr size_t kMinShortenedWidth = 40;

// Renders one table. JSON is an array of objects keyed by Column::key.
std::string render(const Table& table, const RenderOptions& options);

// Renders several tables: text form prints them one after another; JSON gives an object keyed by
// `keys` (one per table); CSV separates tables with a blank line and a "# title" line.
std::string render_many(const std::vector<Table>& tables, const std::vector<std::string>& keys,
                        const RenderOptions& options);

bool parse_format(std::string_view text, Format* format);

}  // namespace scaleprof::report

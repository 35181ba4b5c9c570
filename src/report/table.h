// Table: the one shape every command prints, rendered as aligned text, CSV or JSON.
//
// Analyses return typed structs; report code turns them into Tables; the CLI picks the format. Cells
// are strings, integers, floats (with a display precision) or empty (null in JSON).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/json_string.h"  // IWYU pragma: export (json_quote, used with tables)
#include "core/output_file.h"  // TextSink

namespace scaleprof::report {

enum class Format { kTable, kCsv, kJson };

// A value JSON shows as it is: a list or an object the caller wrote (valid JSON), for a row's nested list.
// Its column is JSON only (Column::json_only): text, CSV and HTML leave it out.
struct JsonText {
  std::string json;
};

struct Cell {
  std::variant<std::monostate, std::string, int64_t, double, JsonText> value;
  int precision = 2;  // digits after the point for doubles in table/CSV output

  Cell() = default;
  Cell(std::string s) : value(std::move(s)) {}                     // NOLINT
  Cell(const char* s) : value(std::string(s)) {}                   // NOLINT
  Cell(std::string_view s) : value(std::string(s)) {}              // NOLINT
  Cell(int64_t v) : value(v) {}                                    // NOLINT
  Cell(int v) : value(static_cast<int64_t>(v)) {}                  // NOLINT
  Cell(uint64_t v) : value(static_cast<int64_t>(v)) {}             // NOLINT
  Cell(double v, int digits = 2) : value(v), precision(digits) {}  // NOLINT
  Cell(JsonText v) : value(std::move(v)) {}                        // NOLINT
  static Cell null() { return {}; }
};

// How much a reader of the text form needs a column when the table is wider than the terminal
// (report/table_layout.h): columns of kUseful and kDetail are left out, kDetail first, and named in
// a note under the table; what is left is folded, never cut. CSV, JSON and --wide keep every column.
enum class Importance : uint8_t {
  kKey,        // names the row (rank, strategy, operator): kept, and repeated in every part of a fold
  kEssential,  // what the table is for: kept (the default, so a new column is never silently lost)
  kUseful,     // left out when the table does not fit, after every kDetail column
  kDetail,     // left out first
};

struct Column {
  std::string key;         // JSON key and CSV header, e.g. "idle_us"
  std::string title;       // table header, e.g. "Idle (us)"; empty means use key
  bool json_only = false;  // a nested list (JsonText cells): only JSON has it
  Importance importance = Importance::kEssential;
};

using RowVisitor = std::function<void(const std::vector<Cell>&)>;

struct Table {
  std::string title;  // printed above the table in text form; JSON/CSV ignore it
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  // Rows made on demand, after `rows`: a table with one row per call per rank would otherwise hold
  // every cell of every row at once. Rendering calls it with a visitor for each row; it must give
  // the same rows every call (text form calls it twice: once for the column widths, once to print).
  std::function<void(const RowVisitor&)> row_source;

  void add_row(std::vector<Cell> row) { rows.push_back(std::move(row)); }
  // Visits `rows`, then the rows of `row_source`.
  void for_each_row(const RowVisitor& visit) const;
  // Every row, made and kept (for tests and small tables; rendering never calls it).
  std::vector<std::vector<Cell>> all_rows() const;
  // Gives the columns with these keys `importance`. A key the table lacks is passed over: some
  // columns exist only for some inputs (device times, the steps' phases).
  void set_importance(Importance importance, std::initializer_list<std::string_view> keys);
};

// The table without its JSON-only columns (rows made and kept): what text, CSV and HTML show. A table
// without such columns is returned as it is.
Table without_json_only(const Table& table);
bool has_json_only(const Table& table);

struct RenderOptions {
  Format format = Format::kTable;
  bool color = false;  // bold headers in text form (only when writing to a terminal)
  // Text form only: the widest line wanted (the terminal's width). A wider table is made to fit in
  // the steps of report/table_layout.h: headers wrapped, names narrowed (to no less than
  // kMinShortenedWidth, by shorten_name()), the least important columns left out with a note, the
  // rest folded. 0: no limit, every column and name whole (CSV and JSON always are).
  size_t max_width = 0;
  // --wide: every column in one part, headers on one line, however wide; names are still narrowed.
  bool wide = false;
  // --full-names: names never narrowed; columns are still left out or folded to fit.
  bool full_names = false;
};

inline constexpr size_t kMinShortenedWidth = 40;

// Renders one table. JSON is an array of objects keyed by Column::key.
std::string render(const Table& table, const RenderOptions& options);

// Renders several tables: text form prints them one after another; JSON gives an object keyed by
// `keys` (one per table); CSV separates tables with a blank line and a "# title" line.
std::string render_many(const std::vector<Table>& tables, const std::vector<std::string>& keys,
                        const RenderOptions& options);

// The same two, handing the text to `put` piece by piece (a row at a time) instead of returning it
// whole: with write_output_file's producer form, a large table goes to the file as it is rendered.
void render_to(const Table& table, const RenderOptions& options, const TextSink& put);
void render_many_to(const std::vector<Table>& tables, const std::vector<std::string>& keys,
                    const RenderOptions& options, const TextSink& put);

bool parse_format(std::string_view text, Format* format);

}  // namespace scaleprof::report

#include "report/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/csv_cell.h"
#include "core/terminal_text.h"
#include "report/name_shorten.h"
#include "report/table_layout.h"

namespace scaleprof::report {

namespace {

std::string cell_text(const Cell& c) {
  if (std::holds_alternative<std::string>(c.value)) return std::get<std::string>(c.value);
  if (std::holds_alternative<int64_t>(c.value)) return fmt::format("{}", std::get<int64_t>(c.value));
  if (std::holds_alternative<double>(c.value)) {
    double v = std::get<double>(c.value);
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return fmt::format("{:.{}f}", v, c.precision);
  }
  return "";
}

std::string cell_json(const Cell& c) {
  if (const auto* raw = std::get_if<JsonText>(&c.value)) return raw->json;
  if (std::holds_alternative<std::string>(c.value)) return json_quote(std::get<std::string>(c.value));
  if (std::holds_alternative<int64_t>(c.value)) return fmt::format("{}", std::get<int64_t>(c.value));
  if (std::holds_alternative<double>(c.value)) {
    double v = std::get<double>(c.value);
    if (!std::isfinite(v)) return "null";  // JSON has no NaN/inf
    // Shortest representation that round-trips: tools reading JSON get full precision.
    return fmt::format("{}", v);
  }
  return "null";
}

bool is_numeric(const Cell& c) {
  return std::holds_alternative<int64_t>(c.value) || std::holds_alternative<double>(c.value);
}

// Text padded with spaces to `width` display columns, on the left or the right.
std::string pad(const std::string& text, size_t width, bool right_align) {
  const size_t w = display_width(text);
  if (w >= width) return text;
  return right_align ? std::string(width - w, ' ') + text : text + std::string(width - w, ' ');
}

// A line of text pieces, each padded to its width and two spaces apart, without trailing spaces.
std::string join_padded(const std::vector<std::string>& pieces, const std::vector<size_t>& width,
                        const std::vector<bool>& right_align) {
  std::string line;
  for (size_t k = 0; k < pieces.size(); ++k) {
    if (k) line += "  ";
    line += pad(pieces[k], width[k], right_align[k]);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

// `text` as lines of at most `width` (0: one line), each ending in a line feed, bold when `bold`.
std::string wrapped_lines(const std::string& text, size_t width, bool bold) {
  std::string out;
  for (const std::string& line : wrap_words(text, width)) {
    out += bold ? fmt::format("\x1b[1m{}\x1b[0m\n", line) : line + "\n";
  }
  return out;
}

// Text form: one pass over the rows for the column widths, then one per part of the layout to print
// them (report/table_layout.h), so no row's text is kept (a row source makes the same rows each time).
void render_text(const Table& full, const RenderOptions& options, const TextSink& put) {
  // Only a table with a JSON-only column is copied (trace reports' tables can be large).
  std::optional<Table> shown;
  if (has_json_only(full)) shown = without_json_only(full);
  const Table& t = shown ? *shown : full;
  const bool color = options.color;
  std::vector<ColumnMeasure> measure(t.columns.size());
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const Column& col = t.columns[i];
    measure[i].title = terminal_safe(col.title.empty() ? col.key : col.title);
    measure[i].importance = col.importance;
  }
  const Cell empty;
  auto cell_at = [&empty](const std::vector<Cell>& row, size_t i) -> const Cell& {
    return i < row.size() ? row[i] : empty;
  };
  t.for_each_row([&](const std::vector<Cell>& row) {
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const Cell& c = cell_at(row, i);
      // Text form is for terminals: data strings are made harmless there (csv and json are data).
      measure[i].cells = std::max(measure[i].cells, display_width(terminal_safe(cell_text(c))));
      if (!is_numeric(c) && !std::holds_alternative<std::monostate>(c.value)) measure[i].numeric = false;
    }
  });
  const TableLayout layout = plan_table_layout(measure, options.max_width, options.wide, options.full_names);
  // Titles wrap too, except where the reader asked for the wide layout.
  const size_t title_width = options.wide ? 0 : options.max_width;

  for (size_t p = 0; p < layout.parts.size(); ++p) {
    const TablePart& part = layout.parts[p];
    std::vector<bool> right(part.columns.size());
    for (size_t k = 0; k < part.columns.size(); ++k) right[k] = measure[part.columns[k]].numeric;
    std::string out = p > 0 ? "\n" : "";
    const std::string title = terminal_safe(t.title);
    if (p > 0) {
      out += wrapped_lines(title.empty() ? "(continued)" : title + " (continued)", title_width, color);
    } else if (!title.empty()) {
      out += wrapped_lines(title, title_width, color);
    }
    std::vector<std::string> pieces(part.columns.size());
    for (size_t line = 0; line < part.header_lines; ++line) {
      for (size_t k = 0; k < part.columns.size(); ++k) pieces[k] = part.header[k][line];
      const std::string header = join_padded(pieces, part.width, right);
      out += color ? fmt::format("\x1b[1m{}\x1b[0m\n", header) : header + "\n";
    }
    size_t total = 0;
    for (size_t w : part.width) total += w + 2;
    out += std::string(total >= 2 ? total - 2 : 0, '-') + "\n";
    put(out);
    std::string s;
    t.for_each_row([&](const std::vector<Cell>& row) {
      for (size_t k = 0; k < part.columns.size(); ++k) {
        const size_t c = part.columns[k];
        pieces[k] = terminal_safe(cell_text(cell_at(row, c)));
        if (part.width[k] < measure[c].cells) pieces[k] = shorten_name(pieces[k], part.width[k]);
      }
      s = join_padded(pieces, part.width, right);
      s += "\n";
      put(s);
    });
  }
  if (!layout.dropped.empty()) {
    // Titles with a comma of their own are told apart by semicolons.
    bool comma = false;
    for (size_t c : layout.dropped) comma |= measure[c].title.find(',') != std::string::npos;
    std::string names;
    for (size_t c : layout.dropped) names += (names.empty() ? "" : comma ? "; " : ", ") + measure[c].title;
    put(wrapped_lines(fmt::format("Left out to fit {} columns: {}. --wide shows every column (so do --format csv "
                                  "and json).",
                                  options.max_width, names),
                      options.max_width, false));
  }
}

void render_csv(const Table& full, const TextSink& put) {
  // Only a table with a JSON-only column is copied (trace reports' tables can be large).
  std::optional<Table> shown;
  if (has_json_only(full)) shown = without_json_only(full);
  const Table& t = shown ? *shown : full;
  std::string out;
  for (size_t i = 0; i < t.columns.size(); ++i) out += (i ? "," : "") + csv_cell(t.columns[i].key);
  out += "\n";
  put(out);
  t.for_each_row([&](const std::vector<Cell>& row) {
    out.clear();
    for (size_t i = 0; i < t.columns.size(); ++i) {
      if (i) out += ",";
      if (i < row.size()) {
        const Cell& c = row[i];
        out += std::holds_alternative<double>(c.value) ? cell_json(c) : csv_cell(cell_text(c));
      }
    }
    out += "\n";
    put(out);
  });
}

void render_json(const Table& t, const TextSink& put) {
  put("[");
  bool first = true;
  std::string out;
  t.for_each_row([&](const std::vector<Cell>& row) {
    out = first ? "\n {" : ",\n {";
    first = false;
    for (size_t i = 0; i < t.columns.size(); ++i) {
      if (i) out += ", ";
      out += json_quote(t.columns[i].key) + ": " + (i < row.size() ? cell_json(row[i]) : "null");
    }
    out += "}";
    put(out);
  });
  put(first ? "]" : "\n]");
}

// Collects what a renderer puts into one string.
template <typename Render>
std::string collect(Render render) {
  std::string out;
  render([&out](std::string_view piece) { out += piece; });
  return out;
}

}  // namespace

bool has_json_only(const Table& table) {
  return std::any_of(table.columns.begin(), table.columns.end(), [](const Column& c) { return c.json_only; });
}

Table without_json_only(const Table& table) {
  if (!has_json_only(table)) return table;
  Table out;
  out.title = table.title;
  std::vector<size_t> kept;
  for (size_t i = 0; i < table.columns.size(); ++i) {
    if (table.columns[i].json_only) continue;
    kept.push_back(i);
    out.columns.push_back(table.columns[i]);
  }
  table.for_each_row([&](const std::vector<Cell>& row) {
    std::vector<Cell> r;
    r.reserve(kept.size());
    for (size_t i : kept) r.push_back(i < row.size() ? row[i] : Cell::null());
    out.rows.push_back(std::move(r));
  });
  return out;
}

void Table::for_each_row(const RowVisitor& visit) const {
  for (const auto& row : rows) visit(row);
  if (row_source) row_source(visit);
}

void Table::set_importance(Importance importance, std::initializer_list<std::string_view> keys) {
  for (Column& c : columns) {
    if (std::find(keys.begin(), keys.end(), c.key) != keys.end()) c.importance = importance;
  }
}

std::vector<std::vector<Cell>> Table::all_rows() const {
  std::vector<std::vector<Cell>> out;
  for_each_row([&](const std::vector<Cell>& row) { out.push_back(row); });
  return out;
}

void render_to(const Table& table, const RenderOptions& options, const TextSink& put) {
  switch (options.format) {
    case Format::kCsv:
      render_csv(table, put);
      return;
    case Format::kJson:
      render_json(table, put);
      put("\n");
      return;
    case Format::kTable:
      break;
  }
  render_text(table, options, put);
}

void render_many_to(const std::vector<Table>& tables, const std::vector<std::string>& keys,
                    const RenderOptions& options, const TextSink& put) {
  if (options.format == Format::kJson) {
    put("{");
    for (size_t i = 0; i < tables.size(); ++i) {
      put((i ? ",\n" : "\n") + json_quote(i < keys.size() ? keys[i] : tables[i].title) + ": ");
      render_json(tables[i], put);
    }
    put("\n}\n");
    return;
  }
  for (size_t i = 0; i < tables.size(); ++i) {
    if (i) put("\n");
    if (options.format == Format::kCsv) put("# " + tables[i].title + "\n");
    render_to(tables[i], options, put);
  }
}

std::string render(const Table& table, const RenderOptions& options) {
  return collect([&](const TextSink& put) { render_to(table, options, put); });
}

std::string render_many(const std::vector<Table>& tables, const std::vector<std::string>& keys,
                        const RenderOptions& options) {
  return collect([&](const TextSink& put) { render_many_to(tables, keys, options, put); });
}

bool parse_format(std::string_view text, Format* format) {
  if (text == "table") {
    *format = Format::kTable;
  } else if (text == "csv") {
    *format = Format::kCsv;
  } else if (text == "json") {
    *format = Format::kJson;
  } else {
    return false;
  }
  return true;
}

}  // namespace scaleprof::report

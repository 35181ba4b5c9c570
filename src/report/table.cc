#include "report/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/csv_cell.h"
#include "core/terminal_text.h"

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

std::string render_text(const Table& t, bool color) {
  std::vector<size_t> width(t.columns.size());
  std::vector<bool> numeric(t.columns.size(), true);
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const Column& col = t.columns[i];
    width[i] = (col.title.empty() ? col.key : col.title).size();
  }
  std::vector<std::vector<std::string>> texts;
  texts.reserve(t.rows.size());
  for (const auto& row : t.rows) {
    auto& line = texts.emplace_back();
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const Cell empty;
      const Cell& c = i < row.size() ? row[i] : empty;
      // Text form is for terminals: data strings are made harmless there (csv and json are data).
      line.push_back(terminal_safe(cell_text(c)));
      width[i] = std::max(width[i], line.back().size());
      if (!is_numeric(c) && !std::holds_alternative<std::monostate>(c.value)) numeric[i] = false;
    }
  }
  std::string out;
  if (!t.title.empty()) {
    const std::string title = terminal_safe(t.title);
    out += color ? fmt::format("\x1b[1m{}\x1b[0m\n", title) : title + "\n";
  }
  std::string header;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const std::string title = terminal_safe(t.columns[i].title.empty() ? t.columns[i].key : t.columns[i].title);
    if (i) header += "  ";
    header += numeric[i] ? fmt::format("{:>{}}", title, width[i]) : fmt::format("{:<{}}", title, width[i]);
  }
  while (!header.empty() && header.back() == ' ') header.pop_back();
  out += color ? fmt::format("\x1b[1m{}\x1b[0m\n", header) : header + "\n";
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  out += std::string(total >= 2 ? total - 2 : 0, '-') + "\n";
  for (const auto& line : texts) {
    std::string s;
    for (size_t i = 0; i < line.size(); ++i) {
      if (i) s += "  ";
      s += numeric[i] ? fmt::format("{:>{}}", line[i], width[i]) : fmt::format("{:<{}}", line[i], width[i]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out += s + "\n";
  }
  return out;
}

std::string render_csv(const Table& t) {
  std::string out;
  for (size_t i = 0; i < t.columns.size(); ++i) out += (i ? "," : "") + csv_cell(t.columns[i].key);
  out += "\n";
  for (const auto& row : t.rows) {
    for (size_t i = 0; i < t.columns.size(); ++i) {
      if (i) out += ",";
      if (i < row.size()) {
        const Cell& c = row[i];
        out += std::holds_alternative<double>(c.value) ? cell_json(c) : csv_cell(cell_text(c));
      }
    }
    out += "\n";
  }
  return out;
}

std::string render_json(const Table& t) {
  std::string out = "[";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    out += r ? ",\n {" : "\n {";
    for (size_t i = 0; i < t.columns.size(); ++i) {
      if (i) out += ", ";
      out += json_quote(t.columns[i].key) + ": " + (i < t.rows[r].size() ? cell_json(t.rows[r][i]) : "null");
    }
    out += "}";
  }
  out += t.rows.empty() ? "]" : "\n]";
  return out;
}

}  // namespace

std::string render(const Table& table, const RenderOptions& options) {
  switch (options.format) {
    case Format::kCsv:
      return render_csv(table);
    case Format::kJson:
      return render_json(table) + "\n";
    case Format::kTable:
      break;
  }
  return render_text(table, options.color);
}

std::string render_many(const std::vector<Table>& tables, const std::vector<std::string>& keys,
                        const RenderOptions& options) {
  std::string out;
  if (options.format == Format::kJson) {
    out = "{";
    for (size_t i = 0; i < tables.size(); ++i) {
      out +=
          (i ? ",\n" : "\n") + json_quote(i < keys.size() ? keys[i] : tables[i].title) + ": " + render_json(tables[i]);
    }
    return out + "\n}\n";
  }
  for (size_t i = 0; i < tables.size(); ++i) {
    if (i) out += "\n";
    if (options.format == Format::kCsv) out += "# " + tables[i].title + "\n";
    out += render(tables[i], options);
  }
  return out;
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

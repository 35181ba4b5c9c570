#include "importers/csv.h"

#include <fmt/format.h>

namespace scaleprof::importers {

int CsvFile::column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

CsvFile parse_csv(std::string_view text, const std::string& path, bool appended, std::vector<std::string>* warnings,
                  std::vector<std::string>* errors) {
  CsvFile out;
  out.path = path;
  std::vector<std::string> record;
  std::string field;
  int64_t line = 1;
  int64_t record_line = 1;
  bool in_quotes = false;
  bool first = true;
  auto finish_record = [&] {
    record.push_back(std::move(field));
    field.clear();
    if (first) {
      out.header = std::move(record);
      first = false;
    } else if (!(record.size() == 1 && record[0].empty())) {  // blank lines are not records
      if (record.size() != out.header.size()) {
        errors->push_back(fmt::format("{}:{}: {} fields, the header has {}; line skipped", path, record_line,
                                      record.size(), out.header.size()));
      } else {
        out.rows.push_back(std::move(record));
        out.lines.push_back(record_line);
      }
    }
    record.clear();
  };
  size_t i = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"') {
      in_quotes = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      finish_record();
      ++line;
      record_line = line;
    } else {
      field += c;
    }
  }
  const bool pending = !field.empty() || !record.empty() || in_quotes;
  if (pending) {
    if (appended && !first) {
      warnings->push_back(
          fmt::format("{}:{}: torn last line (the writer stopped mid-record); line skipped", path, record_line));
    } else {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      finish_record();
    }
  }
  for (std::string& h : out.header) {  // a UTF-8 byte order mark or stray spaces are not part of names
    if (h.starts_with("\xEF\xBB\xBF")) h.erase(0, 3);
    while (!h.empty() && h.back() == ' ') h.pop_back();
    while (!h.empty() && h.front() == ' ') h.erase(0, 1);
  }
  return out;
}

}  // namespace scaleprof::importers

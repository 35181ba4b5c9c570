#include "core/csv_reader.h"

#include <utility>

namespace scaleprof {

int CsvText::column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

CsvText read_csv_text(std::string_view text, bool appended) {
  CsvText out;
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
        out.skipped.push_back({record_line, record.size()});
      } else {
        out.rows.push_back(std::move(record));
        out.lines.push_back(record_line);
      }
    }
    record.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
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
    if (appended) {
      out.torn_line = record_line;
    } else {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      finish_record();
    }
  }
  for (std::string& h : out.header) {  // a UTF-8 byte order mark or stray blanks are not part of names
    if (h.starts_with("\xEF\xBB\xBF")) h.erase(0, 3);
    while (!h.empty() && (h.back() == ' ' || h.back() == '\t')) h.pop_back();
    while (!h.empty() && (h.front() == ' ' || h.front() == '\t')) h.erase(0, 1);
  }
  return out;
}

}  // namespace scaleprof

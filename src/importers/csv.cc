#include "importers/csv.h"

#include <fmt/format.h>

#include "core/csv_reader.h"

namespace scaleprof::importers {

int CsvFile::column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

CsvFile parse_csv(std::string_view text, const std::string& path, bool appended, std::vector<std::string>* warnings,
                  std::vector<std::string>* errors) {
  CsvText csv = read_csv_text(text, appended);
  for (const CsvText::WrongWidth& w : csv.skipped) {
    errors->push_back(
        fmt::format("{}:{}: {} fields, the header has {}; line skipped", path, w.line, w.fields, csv.header.size()));
  }
  if (csv.torn_line) {
    warnings->push_back(
        fmt::format("{}:{}: torn last line (the writer stopped mid-record); line skipped", path, *csv.torn_line));
  }
  CsvFile out;
  out.path = path;
  out.header = std::move(csv.header);
  out.rows = std::move(csv.rows);
  out.lines = std::move(csv.lines);
  return out;
}

}  // namespace scaleprof::importers

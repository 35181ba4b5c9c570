#include "importers/csv.h"

#include <fmt/format.h>

#include "core/csv_reader.h"

namespace scaleprof::importers {

CsvFile parse_csv(std::string_view text, const std::string& path, bool appended, std::vector<std::string>* warnings,
                  std::vector<std::string>* errors) {
  CsvFile out{read_csv_text(text, appended), path};
  for (const CsvText::WrongWidth& w : out.skipped) {
    errors->push_back(
        fmt::format("{}:{}: {} fields, the header has {}; line skipped", path, w.line, w.fields, out.header.size()));
  }
  if (out.torn_line) {
    warnings->push_back(
        fmt::format("{}:{}: torn last line (the writer stopped mid-record); line skipped", path, *out.torn_line));
  }
  return out;
}

}  // namespace scaleprof::importers

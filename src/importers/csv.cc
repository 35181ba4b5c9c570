#include "importers/csv.h"

#include <fmt/format.h>

#include "core/csv_reader.h"

namespace scaleprof::importers {

CsvFile parse_csv(std::string_view text, const std::string& path, bool appended, std::vector<Diagnostic>* warnings,
                  std::vector<Diagnostic>* errors) {
  CsvFile out{read_csv_text(text, appended), path};
  for (const CsvText::WrongWidth& w : out.skipped) {
    errors->push_back(
        Diagnostic{Severity::kError, fmt::format("{}:{}", path, w.line),
                   fmt::format("{} fields, the header has {}; line skipped", w.fields, out.header.size())});
  }
  if (out.torn_line) {
    warnings->push_back(Diagnostic{Severity::kWarning, fmt::format("{}:{}", path, *out.torn_line),
                                   "torn last line (the writer stopped mid-record); line skipped"});
  }
  return out;
}

}  // namespace scaleprof::importers

// CSV text as the run-data importers read it (itwinai's files, scaleprof's epochs.csv and gpu.csv).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/csv_reader.h"
#include "core/diagnostic.h"

namespace scaleprof::importers {

// A parsed CSV file (core/csv_reader.h's header, rows and their 1-based lines) and its name.
struct CsvFile : CsvText {
  std::string path;
};

// Parses CSV text with the one CSV reader (core/csv_reader.h: RFC 4180 quoting, quoted fields may
// span lines). With `appended` (files written a line at a time) a last line without '\n' is a torn
// record: dropped with a warning "path:line: torn last line ...". Rows with a different number of
// fields than the header are dropped with an error naming the line.
CsvFile parse_csv(std::string_view text, const std::string& path, bool appended, std::vector<Diagnostic>* warnings,
                  std::vector<Diagnostic>* errors);

}  // namespace scaleprof::importers

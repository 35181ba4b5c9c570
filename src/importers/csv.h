// CSV text as the run-data importers read it (itwinai's files, scaleprof's epochs.csv and gpu.csv).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scaleprof::importers {

// A parsed CSV file: header and rows of text cells with their 1-based line numbers.
struct CsvFile {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int64_t> lines;
  int column(std::string_view name) const;  // -1 when absent
};

// Parses CSV text with the one CSV reader (core/csv_reader.h: RFC 4180 quoting, quoted fields may
// span lines). With `appended` (files written a line at a time) a last line without '\n' is a torn
// record: dropped with a warning "path:line: torn last line ...". Rows with a different number of
// fields than the header are dropped with an error naming the line.
CsvFile parse_csv(std::string_view text, const std::string& path, bool appended, std::vector<std::string>* warnings,
                  std::vector<std::string>* errors);

}  // namespace scaleprof::importers

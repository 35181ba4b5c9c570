// The one CSV reader (RFC 4180): run directories (importers/run_reader.h), itwinai's CSV files and
// MLflow artifacts (importers/csv.h) all split text into cells here. Callers word the problems it
// finds for their users; what a row, a quoted cell, a torn last line is has one answer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scaleprof {

struct CsvText {
  std::vector<std::string> header;             // without a UTF-8 byte order mark or blanks around names
  std::vector<std::vector<std::string>> rows;  // each as wide as the header
  std::vector<int64_t> lines;                  // 1-based line each row starts on, for messages

  struct WrongWidth {
    int64_t line = 0;   // where the record starts
    size_t fields = 0;  // how many it has
  };
  std::vector<WrongWidth> skipped;  // records whose field count differs from the header's, in order
  // With `appended`: the line a last record without its '\n' starts on (dropped, never a row).
  std::optional<int64_t> torn_line;

  int column(std::string_view name) const;  // -1 when absent
};

// Splits `text`: fields separated by commas, records by '\n' (a '\r' before it is dropped); a field
// in double quotes may hold commas, line breaks and doubled quotes (""). The first record is the
// header; blank lines are not records. `appended`: the file is appended to a line at a time by a live
// run (scaleprof's own files), so a last record without '\n' was cut mid-write: it is dropped and
// its line is `torn_line` (the header included: a file whose header is torn has no rows). Without
// `appended` (whole files written by other programs) such a record is read as it is.
CsvText read_csv_text(std::string_view text, bool appended);

}  // namespace scaleprof

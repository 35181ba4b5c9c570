// Readers of the scalability report's inputs. They fill ScalabilityData and format nothing.
//
// Under --root the layouts are detected automatically, folder by folder:
//  * scaleprof run directories (docs/run-directory.md): <root>/<experiment>/<run>/ with run.json
//    and/or rank-NNNNN/ folders (a root that is itself an experiment or a run works too), each read
//    with collect's reader (collect/run_reader.h), so the format has one reader;
//  * itwinai's CSV layout (v0.2.5 - v0.3.3): a folder holding epoch-time/, gpu-energy-data/,
//    computation-data/ (or the older communication-data/), either the root itself or one folder per
//    run id below it.
// Missing pieces are warnings; rejected data (bad numbers, missing columns, contradicting files) are
// errors naming the file and line, and the rest is still read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "report/scalability_data.h"

namespace scaleprof::report {

struct ScalabilityReadOptions {
  std::string root = "scalability-metrics";
  std::string experiment;              // only this experiment (scaleprof layout); empty: all
  std::vector<std::string> run_names;  // only these runs (folder or run.json name; itwinai: run id)
  // itwinai's epoch-time files give nodes, not GPUs; workers = nodes x this (itwinai's plots assume 4).
  int64_t gpus_per_node = 4;
};

// Fails only when the root cannot be listed. A root with no data at all gives an empty run list.
Result<ScalabilityData> read_scalability_data(const ScalabilityReadOptions& options);

// A parsed CSV file: header and rows of text cells with their 1-based line numbers.
struct CsvFile {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int64_t> lines;
  int column(std::string_view name) const;  // -1 when absent
};

// Parses CSV text (RFC 4180 quoting, quoted fields may span lines). With `appended` (scaleprof's
// files, written a line at a time) a last line without '\n' is a torn record: dropped with a warning
// "path:line: torn last line ...". Rows with a different number of fields than the header are dropped
// with an error naming the line.
CsvFile parse_csv(std::string_view text, const std::string& path, bool appended, std::vector<std::string>* warnings,
                  std::vector<std::string>* errors);

}  // namespace scaleprof::report

// What the two readers of read_scalability_data (importers/run_data_reader.h) share while reading one
// root: the options, the tables being filled, how problems are reported (errors: exit code 3;
// warnings), which --run-names selected something, and the check of GPU readings. The readers:
// scaleprof run directories (run_dir_importer.cc) and itwinai's CSV layout (itwinai_csv_importer.cc);
// the walk over the root that calls them is run_data_reader.cc. Private to importers/.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "importers/run_data_reader.h"

namespace scaleprof::importers {

class RunDataSink {
 public:
  explicit RunDataSink(const ScalabilityReadOptions& options) : opt_(options) {}

  const ScalabilityReadOptions& options() const { return opt_; }
  tables::ScalabilityData& data() { return data_; }
  // A problem whose text names its place itself ("file:line: what"), or one with its place apart.
  void error(std::string text) { data_.errors.push_back(diagnostic(Severity::kError, std::move(text))); }
  void warn(std::string text) { data_.warnings.push_back(diagnostic(Severity::kWarning, std::move(text))); }
  void error(std::string where, std::string message) {
    data_.errors.push_back(Diagnostic{Severity::kError, std::move(where), std::move(message)});
  }
  void warn(std::string where, std::string message) {
    data_.warnings.push_back(Diagnostic{Severity::kWarning, std::move(where), std::move(message)});
  }
  void add(Diagnostic d) { (d.severity == Severity::kError ? data_.errors : data_.warnings).push_back(std::move(d)); }

  // Whether a run passes --run-names; every name that selects a run is remembered, so that a name
  // selecting nothing can be reported.
  bool wanted_run(const std::string& folder, const std::string& name);
  bool selected_something(const std::string& name) const { return matched_names_.count(name) != 0; }

  // A GPU reading outside what hardware reports (utilization outside 0..100 %, negative power or
  // energy, power above kMaxGpuPowerW) is ignored, that value only, with a warning naming file and
  // line: averaged in or integrated it would make every figure of its run wrong. After
  // kReadingWarningsPerFile warnings per file, take() adds one line with the count.
  static constexpr int kReadingWarningsPerFile = 5;
  double checked_reading(double value, std::string_view column, const std::string& file, int64_t line);

  // The tables, with one line per file whose ignored readings were not all named.
  tables::ScalabilityData take();

 private:
  const ScalabilityReadOptions& opt_;
  tables::ScalabilityData data_;
  std::map<std::string, int64_t> bad_readings_;  // file -> GPU readings ignored
  std::set<std::string> matched_names_;          // --run-names entries that selected a run
};

// What both readers' code calls its tables and problem reports by: the sink's, under the names the
// code had when the two readers were one class.
class RunDataReader {
 protected:
  explicit RunDataReader(RunDataSink& sink) : sink_(sink), opt_(sink.options()), data_(sink.data()) {}

  void error(std::string message) { sink_.error(std::move(message)); }
  void warn(std::string message) { sink_.warn(std::move(message)); }
  void error(std::string where, std::string message) { sink_.error(std::move(where), std::move(message)); }
  void warn(std::string where, std::string message) { sink_.warn(std::move(where), std::move(message)); }
  double checked_reading(double value, std::string_view column, const std::string& file, int64_t line) {
    return sink_.checked_reading(value, column, file, line);
  }

  RunDataSink& sink_;
  const ScalabilityReadOptions& opt_;
  tables::ScalabilityData& data_;
};

// One scaleprof run directory (a run.json and/or rank-NNNNN folders) into sink's tables.
void read_scaleprof_run(RunDataSink& sink, const std::filesystem::path& dir, const std::string& experiment_folder);

// One folder in itwinai's CSV layout (epoch-time/, gpu-energy-data/, computation-data/, ...) into
// sink's tables; `run_id` is its folder name below the root ("" for the root itself).
void read_itwinai_folder(RunDataSink& sink, const std::filesystem::path& dir, const std::string& run_id);

}  // namespace scaleprof::importers

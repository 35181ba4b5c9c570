#include "importers/run_data_sink.h"

#include <fmt/format.h>

#include "importers/value_checks.h"

namespace scaleprof::importers {

bool RunDataSink::wanted_run(const std::string& folder, const std::string& name) {
  if (opt_.run_names.empty()) return true;
  bool wanted = false;
  for (const std::string& n : opt_.run_names) {
    if (n == folder || n == name) {
      matched_names_.insert(n);
      wanted = true;
    }
  }
  return wanted;
}

double RunDataSink::checked_reading(double value, std::string_view column, const std::string& file, int64_t line) {
  const Quantity quantity = column.starts_with("utilization") ? Quantity::kUtilizationPct
                            : column.starts_with("power")     ? Quantity::kPowerW
                                                              : Quantity::kEnergyJ;
  const std::string why = implausible_value(quantity, column, value);
  if (why.empty()) return value;
  if (++bad_readings_[file] <= kReadingWarningsPerFile)
    data_.warnings.push_back(Diagnostic{Severity::kWarning, fmt::format("{}:{}", file, line), why + "; value ignored"});
  return tables::kNaN;
}

tables::ScalabilityData RunDataSink::take() {
  for (const auto& [file, count] : bad_readings_) {
    if (count > kReadingWarningsPerFile) {
      warn(file, fmt::format("{} more out-of-range GPU reading(s) ignored", count - kReadingWarningsPerFile));
    }
  }
  return std::move(data_);
}

}  // namespace scaleprof::importers

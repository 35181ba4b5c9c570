// The checks every reader of the report applies to recorded values, whatever the layout they come
// from (scaleprof run directories, itwinai's CSV files, MLflow stores of every kind): a value no
// hardware or clock reports is rejected the same way everywhere, so one corrupt number can never
// make a figure of one layout wrong where another layout's reader would have refused it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace scaleprof::importers {

// Upper bound of one GPU's power draw: 100 kW.
inline constexpr double kMaxGpuPowerW = 1e5;
// Upper bound of one epoch's duration: 10^9 s (31.7 years, longer than any job has run). Larger is
// corrupt; the bound also keeps every sum and mean of epoch times a number a table can print.
inline constexpr double kMaxEpochSeconds = 1e9;
// Upper bound of the samples one rank gives for one epoch: 2^53, the largest count below which a double
// (an MLflow metric's type, the tables' type) still holds every whole number, so a larger value read
// back is not the count that was logged. No training comes near it (10^15 samples per rank and epoch).
inline constexpr double kMaxSamples = 9007199254740992.0;

enum class Quantity {
  kUtilizationPct,  // 0 to 100
  kPowerW,          // 0 to kMaxGpuPowerW
  kEnergyJ,         // >= 0 (a cumulative counter)
  kEpochSeconds,    // 0 to kMaxEpochSeconds
  kSamples,         // a whole number, 0 to kMaxSamples
};

// Empty when `value` is one the quantity can take; otherwise why not, starting with `name` and the
// value ("utilization_pct 250 is outside 0 to 100", "samples 2.5 is not a whole number"). NaN is an unknown value and
// passes (readers that need a value check for NaN themselves); infinities never pass.
std::string implausible_value(Quantity quantity, std::string_view name, double value);

}  // namespace scaleprof::importers

#include "importers/value_checks.h"

#include <fmt/format.h>

#include <cmath>

namespace scaleprof::importers {

std::string implausible_value(Quantity quantity, std::string_view name, double value) {
  if (std::isnan(value)) return {};
  switch (quantity) {
    case Quantity::kUtilizationPct:
      if (!(value >= 0 && value <= 100)) return fmt::format("{} {} is outside 0 to 100", name, value);
      return {};
    case Quantity::kPowerW:
      if (value < 0) return fmt::format("{} {} is negative", name, value);
      if (!(value <= kMaxGpuPowerW)) return fmt::format("{} {} is above {} W", name, value, kMaxGpuPowerW);
      return {};
    case Quantity::kEnergyJ:
      if (value < 0) return fmt::format("{} {} is negative", name, value);
      if (!std::isfinite(value)) return fmt::format("{} {} is not a finite number", name, value);
      return {};
    case Quantity::kEpochSeconds:
      if (!(value >= 0 && value <= kMaxEpochSeconds)) {
        return fmt::format("{} {} is outside 0 to {:g} s", name, value, kMaxEpochSeconds);
      }
      return {};
    case Quantity::kSamples:
      if (value < 0) return fmt::format("{} {} is negative", name, value);
      if (!(value <= kMaxSamples)) return fmt::format("{} {} is above 2^53", name, value);
      if (value != std::floor(value)) return fmt::format("{} {} is not a whole number", name, value);
      return {};
  }
  return {};
}

}  // namespace scaleprof::importers

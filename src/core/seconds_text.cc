#include "core/seconds_text.h"

#include <fmt/format.h>

#include <cmath>

namespace scaleprof {

std::string seconds_text(double seconds) {
  if (!std::isfinite(seconds)) return "n/a";
  if (seconds >= 100) return fmt::format("{:.1f} s", seconds);
  if (seconds >= 1) return fmt::format("{:.2f} s", seconds);
  return fmt::format("{:.3f} s", seconds);
}

}  // namespace scaleprof

#include "core/clock_event_reasons.h"

#include <fmt/format.h>

#include <array>
#include <iterator>
#include <utility>

#include "core/number_text.h"

namespace scaleprof {

namespace {

constexpr std::array<std::pair<uint64_t, std::string_view>, 9> kClockReasonNames{{
    {kClockReasonGpuIdle, "gpu_idle"},
    {kClockReasonApplicationsClocks, "applications_clocks"},
    {kClockReasonSwPowerCap, "sw_power_cap"},
    {kClockReasonHwSlowdown, "hw_slowdown"},
    {kClockReasonSyncBoost, "sync_boost"},
    {kClockReasonSwThermal, "sw_thermal_slowdown"},
    {kClockReasonHwThermal, "hw_thermal_slowdown"},
    {kClockReasonHwPowerBrake, "hw_power_brake"},
    {kClockReasonDisplayClocks, "display_clocks"},
}};

}  // namespace

std::string clock_event_reasons_text(uint64_t mask) {
  std::string out;
  append_clock_event_reasons(&out, mask);
  return out;
}

void append_clock_event_reasons(std::string* out, uint64_t mask) {
  if (mask == 0) {
    out->append("none");
    return;
  }
  uint64_t rest = mask;
  bool first = true;
  for (const auto& [bit, name] : kClockReasonNames) {
    if ((mask & bit) == 0) continue;
    if (!first) out->push_back('|');
    out->append(name);
    first = false;
    rest &= ~bit;
  }
  if (rest != 0) {
    if (!first) out->push_back('|');
    fmt::format_to(std::back_inserter(*out), "{:#x}", rest);
  }
}

std::optional<uint64_t> parse_clock_event_reasons(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text == "none") return uint64_t{0};
  uint64_t mask = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t bar = text.find('|', pos);
    const std::string_view part = text.substr(pos, bar == std::string_view::npos ? std::string_view::npos : bar - pos);
    bool known = false;
    for (const auto& [bit, name] : kClockReasonNames) {
      if (part == name) {
        mask |= bit;
        known = true;
        break;
      }
    }
    if (!known) {
      if (part.size() < 3 || part[0] != '0' || (part[1] != 'x' && part[1] != 'X')) return std::nullopt;
      const std::optional<uint64_t> value = parse_hex(part.substr(2));
      if (!value) return std::nullopt;
      mask |= *value;
    }
    if (bar == std::string_view::npos) break;
    pos = bar + 1;
  }
  return mask;
}

}  // namespace scaleprof

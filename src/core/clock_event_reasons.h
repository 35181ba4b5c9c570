// NVML's clock event (formerly "throttle") reasons: a bit mask saying why a GPU's clocks are below
// their maximum. gpu.csv writes the mask as a readable list ("sw_power_cap|hw_slowdown"), "none" for an
// empty mask; readers parse it back. In core because the collector writes it, importers read it and
// the straggler analysis names it in its verdicts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace scaleprof {

// The bits of NVML's nvmlClocksEventReasons (NVML API reference, group NvmlClocksEventReasons).
inline constexpr uint64_t kClockReasonGpuIdle = 0x1;
inline constexpr uint64_t kClockReasonApplicationsClocks = 0x2;
inline constexpr uint64_t kClockReasonSwPowerCap = 0x4;
inline constexpr uint64_t kClockReasonHwSlowdown = 0x8;
inline constexpr uint64_t kClockReasonSyncBoost = 0x10;
inline constexpr uint64_t kClockReasonSwThermal = 0x20;
inline constexpr uint64_t kClockReasonHwThermal = 0x40;
inline constexpr uint64_t kClockReasonHwPowerBrake = 0x80;
inline constexpr uint64_t kClockReasonDisplayClocks = 0x100;

// "none" for 0; else the names of the set bits in bit order joined by '|', bits without a name as
// one hex number ("sw_power_cap|0x4000").
std::string clock_event_reasons_text(uint64_t mask);
// The same appended to *out: the GPU monitor's hot path reuses its buffer.
void append_clock_event_reasons(std::string* out, uint64_t mask);

// The mask of a text clock_event_reasons_text writes (names, "none", hex numbers, joined by '|');
// nullopt for an empty text or a part it does not know.
std::optional<uint64_t> parse_clock_event_reasons(std::string_view text);

// The reasons that lower the clock under load (power caps, thermal and hardware slowdowns): not the
// idle, application-clock, sync-boost or display-clock bits, which say nothing about a slow step.
inline constexpr uint64_t kClockReasonsSlowing = kClockReasonSwPowerCap | kClockReasonHwSlowdown |
                                                 kClockReasonSwThermal | kClockReasonHwThermal |
                                                 kClockReasonHwPowerBrake;

}  // namespace scaleprof

// Exact parsing of JSON number tokens, without a round trip through double.
//
// Kineto writes times as microseconds: integers in traces before PyTorch 2.4, and decimals with three
// fractional digits ("1234.567") from 2.4 on, which a double cannot hold exactly once the value is
// an absolute epoch time. These functions read the token text and produce int64 nanoseconds.
#pragma once

#include <cstdint>
#include <string_view>

namespace scaleprof::trace {

enum class NumberParse : uint8_t { kOk, kInvalid, kOverflow };

// Parses a microsecond value ("12", "12.345", "-3", "1.5e3") into nanoseconds, rounding digits
// beyond the nanosecond half away from zero. Sets *fractional when the token had a fraction.
NumberParse parse_microseconds_as_ns(std::string_view token, int64_t* ns, bool* fractional);

// Parses an integer token; accepts a decimal with zero fraction ("7.0"). Rejects other fractions.
NumberParse parse_int64(std::string_view token, int64_t* value);

}  // namespace scaleprof::trace

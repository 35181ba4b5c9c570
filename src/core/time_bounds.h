// The times every input may carry, so that analyses can subtract any two without overflowing int64
// (issue 7): the trace reader rejects events outside them, and shard files (--partial) are held to
// the same. Any two times in the range differ by less than 2^63 / 8 * 7.
#pragma once

#include <cstdint>

namespace scaleprof {

constexpr int64_t kMinTimeNs = -(int64_t{1} << 59);  // about 18 years before the epoch
constexpr int64_t kMaxTimeNs = int64_t{3} << 61;     // about the year 2189

constexpr bool time_in_bounds(int64_t ns) {
  return ns >= kMinTimeNs && ns <= kMaxTimeNs;
}

}  // namespace scaleprof

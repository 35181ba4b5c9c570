#include "tables/self_time_sums.h"

#include <limits>

#include "core/checked_sum.h"

namespace scaleprof::tables {

bool SelfTimeSums::add_checked(const SelfTimeSums& other) {
  SelfTimeSums s = *this;
  const bool exact = scaleprof::add_checked(&s.computation_ns, other.computation_ns) &&
                     scaleprof::add_checked(&s.total_ns, other.total_ns) &&
                     scaleprof::add_checked(&s.profiler_step_ns, other.profiler_step_ns) &&
                     scaleprof::add_checked(&s.communication_ns, other.communication_ns);
  if (exact) *this = s;
  return exact;
}

double SelfTimeSums::computation_ratio() const {
  const int64_t denominator = total_ns - profiler_step_ns;
  return denominator > 0 ? static_cast<double>(computation_ns) / static_cast<double>(denominator)
                         : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace scaleprof::tables

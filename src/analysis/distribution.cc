#include "analysis/distribution.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scaleprof::analysis {

double quantile_sorted(std::span<const int64_t> sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return static_cast<double>(sorted[lo]) + frac * static_cast<double>(sorted[hi] - sorted[lo]);
}

Distribution describe(std::vector<int64_t> values) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  Distribution d;
  d.count = static_cast<int64_t>(values.size());
  if (values.empty()) {
    d.mean = d.std = d.min = d.p25 = d.p50 = d.p75 = d.p90 = d.p99 = d.max = kNaN;
    return d;
  }
  std::sort(values.begin(), values.end());
  RunningStats rs;
  for (int64_t v : values) rs.add(v);
  d.sum = rs.sum;
  d.mean = rs.mean;
  d.std = values.size() > 1 ? rs.stddev() : kNaN;
  d.min = static_cast<double>(values.front());
  d.max = static_cast<double>(values.back());
  d.p25 = quantile_sorted(values, 0.25);
  d.p50 = quantile_sorted(values, 0.50);
  d.p75 = quantile_sorted(values, 0.75);
  d.p90 = quantile_sorted(values, 0.90);
  d.p99 = quantile_sorted(values, 0.99);
  return d;
}

void RunningStats::add(int64_t x) {
  if (count == 0) {
    min = max = x;
  } else {
    min = std::min(min, x);
    max = std::max(max, x);
  }
  ++count;
  sum += x;
  // Welford's update: stable for the 1e12-ns magnitudes of long traces, where sum of squares is not.
  const double delta = static_cast<double>(x) - mean;
  mean += delta / static_cast<double>(count);
  m2 += delta * (static_cast<double>(x) - mean);
}

void RunningStats::merge(const RunningStats& o) {
  if (o.count == 0) return;
  if (count == 0) {
    *this = o;
    return;
  }
  const double n1 = static_cast<double>(count);
  const double n2 = static_cast<double>(o.count);
  const double delta = o.mean - mean;
  const double n = n1 + n2;
  mean += delta * n2 / n;
  m2 += o.m2 + delta * delta * n1 * n2 / n;
  count += o.count;
  sum += o.sum;
  min = std::min(min, o.min);
  max = std::max(max, o.max);
}

double RunningStats::stddev() const {
  if (count < 2) return 0.0;
  return std::sqrt(std::max(0.0, m2) / static_cast<double>(count - 1));
}

}  // namespace scaleprof::analysis

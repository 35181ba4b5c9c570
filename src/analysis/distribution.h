// Summary statistics of a sample of integer durations, as pandas' describe() computes them.
//
// Quantiles interpolate linearly between closest ranks (numpy's default, which pandas uses), and
// std is the sample standard deviation (n - 1 in the denominator). For an empty sample every
// statistic is NaN and count is 0; for a single value std is NaN, as in pandas.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace scaleprof::analysis {

struct Distribution {
  int64_t count = 0;
  int64_t sum = 0;  // exact
  double mean = 0;
  double std = 0;
  double min = 0;
  double p25 = 0;
  double p50 = 0;
  double p75 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
};

// Sorts `values` (taken by value) and summarises them.
Distribution describe(std::vector<int64_t> values);

// The q-quantile (0 <= q <= 1) of an ascending sample, with linear interpolation.
double quantile_sorted(std::span<const int64_t> sorted, double q);

// Running count / mean / sum of squared deviations, mergeable (Chan et al.), so per-kernel
// statistics can be folded into an "others" row without revisiting the events.
struct RunningStats {
  int64_t count = 0;
  int64_t sum = 0;
  int64_t min = 0;
  int64_t max = 0;
  double mean = 0;
  double m2 = 0;  // sum of squared deviations from the mean

  void add(int64_t x);
  void merge(const RunningStats& other);
  // Sample standard deviation; 0 for fewer than two values (HTA fills its NaN with 0).
  double stddev() const;
};

}  // namespace scaleprof::analysis

// The operator self-time sums itwinai's computation fraction is made of (analysis/computation_fraction.h
// computes them from operator tables), and the basis they were taken under: plain values, kept in the
// run-data tables (tables/run_data.h) and pooled over ranks.
#pragma once

#include <cstdint>

namespace scaleprof::tables {

enum class FractionBasis : uint8_t {
  kDeviceSelf,  // itwinai's definition: self device time
  kCpuSelf,     // fallback when no row has self device time
};

// The four operator self-time sums itwinai's rules are made of, under one basis (self device or self
// CPU time). One rank's sums, the sums pooled over ranks (ComputationFraction) and a run's stored
// sums (ComputationSums, tables/run_data.h) are all this struct, so a sum added here reaches all of them.
struct SelfTimeSums {
  int64_t computation_ns = 0;    // self time of rows matching the ATen/c10/autograd rule
  int64_t total_ns = 0;          // self time of all rows
  int64_t profiler_step_ns = 0;  // self time of ProfilerStep* rows, excluded from the denominator
  // Self time of rows matching itwinai's deprecated communication rule (is_communication_op_name):
  // only its "computation vs communication" report (--include-communication) uses it.
  int64_t communication_ns = 0;

  // `*this += other`, field by field, all or nothing: false (and *this unchanged) when a sum would
  // leave int64, so that sums over many ranks or runs are exact or absent, never wrapped.
  bool add_checked(const SelfTimeSums& other);
  // itwinai's computation fraction, computation / (total - profiler_step), in [0, 1]; NaN when the
  // denominator is not positive.
  double computation_ratio() const;
};

}  // namespace scaleprof::tables

// Scaling analyses of the scalability report: pure computations on numbers the readers produced.
//
// Every formula here is written out in docs/report.md; the short form:
//   epoch statistics   mean, median, sample std (n - 1), count, min, max of the kept epoch times
//   warm-up            the first `skip` epochs of each run (by epoch index) are dropped
//   speedup            S(n) = T(n0) / T(n), n0 = the smallest worker count of the strategy
//   ideal speedup      n / n0
//   efficiency         E(n) = S(n) / (n / n0) = T(n0) n0 / (T(n) n)
//   Amdahl             T(n) = a + b / n fitted by least squares (a, b >= 0); serial fraction
//                      s = a / (a + b), the share of the one-worker time T(1) = a + b that does not
//                      shrink with more workers; projected S(n) = (a + b/n0) / (a + b/n)
//   energy             the driver's counter (last - first) when every sample has it, else the
//                      trapezoid rule over power and the real sample times; itwinai's data uses its
//                      own rectangle rule (power x probing interval)
//   loss attribution   see attribute_efficiency_loss
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "tables/epoch_time.h"

namespace scaleprof::analysis {

struct SampleStats {
  int64_t count = 0;
  double mean = tables::kNaN;
  double median = tables::kNaN;
  double std = tables::kNaN;  // sample standard deviation; NaN for fewer than two values
  double min = tables::kNaN;
  double max = tables::kNaN;
  double sum = 0;
};

// Statistics of `values` (taken by value: they are sorted for the median). NaN values are ignored.
SampleStats sample_stats(std::vector<double> values);

// The epochs left after dropping the first `skip` (lowest epoch indices) of one run, in epoch order.
std::vector<tables::EpochTime> skip_warmup(std::vector<tables::EpochTime> epochs, int skip);

// One configuration of a strategy: its worker count and its (mean) epoch time.
struct ScalePoint {
  int64_t workers = 0;
  double seconds = 0;
};

struct ScalingRow {
  int64_t workers = 0;
  double seconds = 0;
  double speedup = tables::kNaN;        // T(n0) / T(n)
  double ideal_speedup = tables::kNaN;  // n / n0
  double efficiency = tables::kNaN;     // speedup / ideal_speedup
};

// Speedup, ideal speedup and efficiency of each point against the point with the fewest workers
// (the first such point when several share it). Output is ordered by workers (stable).
std::vector<ScalingRow> relative_scaling(std::vector<ScalePoint> points);

struct AmdahlFit {
  bool ok = false;                        // false with fewer than two distinct worker counts
  double serial_s = tables::kNaN;         // a: time that does not shrink with workers, seconds
  double parallel_s = tables::kNaN;       // b: time on one worker that does, seconds
  double serial_fraction = tables::kNaN;  // a / (a + b)
  bool constrained = false;               // the unconstrained fit had a < 0 or b < 0 and was clamped
  double rms_residual_s = tables::kNaN;   // root mean square of T(n) - (a + b/n) over the points
  int64_t points = 0;
  int64_t base_workers = 0;  // n0 the projected speedups are relative to
  int64_t max_workers = 0;   // largest measured worker count
};

// Least-squares fit of T(n) = a + b/n over the points (one point per configuration, equal weights),
// with a >= 0 and b >= 0: if the free fit has a < 0 the fit with a = 0 is taken, if it has b < 0 the
// fit with b = 0. A projection, never a measurement.
AmdahlFit fit_amdahl(std::span<const ScalePoint> points);
// a + b / n.
double amdahl_time(const AmdahlFit& fit, double workers);
// (a + b / n0) / (a + b / n): the fitted speedup at n workers relative to fit.base_workers.
double amdahl_speedup(const AmdahlFit& fit, double workers);

// Energy of one device from timed power samples (seconds, watts), trapezoid rule; samples whose
// power is NaN are left out (the neighbours are joined). Fewer than two samples give 0.
double trapezoid_energy_j(std::span<const double> time_s, std::span<const double> power_w);

// Energy from a cumulative counter: last non-NaN value minus the first. NaN when none.
double counter_energy_j(std::span<const double> energy_j);

// itwinai's rule: each power sample times the probing interval (rectangle rule), joules.
double rectangle_energy_j(std::span<const double> power_w, double probing_interval_s);

// Where the efficiency lost between two scales of one strategy went.
//
// With n0 < n1 workers, epoch times t0, t1, and the shares f0[k], f1[k] of the epoch time spent in
// component k (e.g. exposed communication, idle), under perfect scaling every component would
// shrink by n0/n1. The excess of component k at n1 is
//     x_k = t1 f1[k] - t0 f0[k] n0 / n1           (seconds per epoch)
// and the efficiency it costs is x_k / t1. Since efficiency E = t0 n0 / (t1 n1), the lost
// efficiency 1 - E = (t1 - t0 n0/n1) / t1 splits exactly into the components plus the rest:
//     1 - E = sum_k x_k / t1 + rest.
// All values are fractions (multiply by 100 for percentage points). A component with a NaN share
// at either scale gets NaN and is counted in the rest.
// Weak scaling (`weak`: the same work per worker at every scale) has the same time as its ideal: n0/n1
// becomes 1 throughout, and E = t0 / t1 (weak-scaling efficiency).
struct LossAttribution {
  double efficiency = tables::kNaN;  // E at n1 relative to n0
  double lost = tables::kNaN;        // 1 - E
  std::vector<double> parts;         // x_k / t1 per component
  std::vector<double> excess_s;      // x_k per component
  double rest = tables::kNaN;        // lost - sum of the parts
};

LossAttribution attribute_efficiency_loss(int64_t n0, double t0, std::span<const double> f0, int64_t n1, double t1,
                                          std::span<const double> f1, bool weak = false);

// The best (lowest epoch time) strategy at each worker count.
struct StrategyTime {
  std::string strategy;
  int64_t workers = 0;
  double seconds = 0;
};
struct BestAtScale {
  int64_t workers = 0;
  std::string strategy;
  double seconds = tables::kNaN;
  std::string runner_up;  // second best, empty when alone
  double runner_up_seconds = tables::kNaN;
  int64_t candidates = 0;
};
// Ordered by workers; ties go to the strategy whose name sorts first. NaN times are ignored.
std::vector<BestAtScale> best_strategy_per_scale(std::span<const StrategyTime> times);

}  // namespace scaleprof::analysis

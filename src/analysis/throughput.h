// Throughput of the scalability report: samples per second per configuration, in total and per
// worker, and per strategy whether its scaling test was weak scaling (the same samples per worker at
// every scale) or strong scaling (the same samples per epoch at every scale), from the samples the
// runs recorded (run.epoch(samples=...), run.step(samples=...): tables::EpochTime::samples).
//
// The rules (docs/report.md, "Throughput"):
//   samples per epoch     Σ samples / epochs, over the kept epochs with samples, all ranks summed
//   throughput            Σ samples / Σ epoch time over the same epochs (samples/s), per worker: / n
//   ideal throughput      throughput(n0) · n / n0
//   weak scaling          samples per worker within kScalingModeTolerance of the smallest scale's at
//                         every scale; strong scaling: samples per epoch within it; else neither
//   weak efficiency       T(n0) / T(n); the strong-scaling efficiency stays T(n0) n0 / (T(n) n)
// Data without samples (itwinai's CSVs, MLflow runs) gets none of this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tables/epoch_time.h"

namespace scaleprof::analysis {

struct ScalabilityAnalysis;

// How far samples may differ between scales and still count as "the same", relative to the smallest
// scale's: a DistributedSampler pads the dataset to a multiple of the workers, and a dataset cut into
// whole batches per worker rounds up to one batch per worker, so a strong-scaling test's total differs
// by up to a batch per worker from scale to scale (4,000 samples in batches of 32: 4,032 at 2 workers,
// 0.8 %, 4,096 at 4, 2.4 %); halving or doubling the work is 50 % or 100 %.
inline constexpr double kScalingModeTolerance = 0.05;

enum class ScalingMode {
  kUnknown,  // no samples at some scale, or one worker count only
  kStrong,   // the same samples per epoch at every scale
  kWeak,     // the same samples per worker at every scale
  kNeither,  // samples known everywhere, but neither stays the same
};
// "unknown", "strong", "weak", "neither"
const char* scaling_mode_name(ScalingMode mode);

// One configuration's throughput (ScaleGroup::throughput). NaN where its kept epochs have no samples.
struct GroupThroughput {
  int64_t epochs = 0;                       // kept epochs with samples
  double samples_per_epoch = tables::kNaN;  // all workers
  double samples_per_worker = tables::kNaN;
  double samples_per_s = tables::kNaN;  // all workers
  double samples_per_s_per_worker = tables::kNaN;
  double ideal_samples_per_s = tables::kNaN;  // the series' smallest scale's, times n / n0
  double weak_efficiency = tables::kNaN;      // T(n0) / T(n), only where the series is weak scaling
};

// One strategy's scaling mode, with what the sentences need.
struct SeriesThroughput {
  std::string series;
  ScalingMode mode = ScalingMode::kUnknown;
  std::string why;         // for kUnknown: what is missing ("one worker count", "no samples at 2 workers")
  int64_t n0 = 0, n1 = 0;  // smallest and largest scale with samples
  double per_worker0 = tables::kNaN, per_worker1 = tables::kNaN;  // samples per worker at both
  double per_epoch0 = tables::kNaN, per_epoch1 = tables::kNaN;    // samples per epoch at both
  double throughput0 = tables::kNaN, throughput1 = tables::kNaN;  // samples/s at both
  double t0 = tables::kNaN, t1 = tables::kNaN;                    // mean epoch time at both
};

// Fills ScaleGroup::throughput and ScalabilityAnalysis::throughput from the runs' kept epochs (the
// groups, their scaling rows and the options must be set), and warns about configurations without
// samples when others have them. Does nothing when no run recorded samples.
void analyse_throughput(ScalabilityAnalysis* analysis);

// Whether any configuration has samples: the report shows throughput and scaling modes only then, so
// data without samples keeps the report it had before.
bool has_throughput(const ScalabilityAnalysis& analysis);

}  // namespace scaleprof::analysis

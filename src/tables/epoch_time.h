// One epoch's time, as the run-data tables keep it (tables/run_data.h), and the NaN that marks a
// missing value in them; the scaling analyses (analysis/scaling.h) read both.
#pragma once

#include <cstdint>
#include <limits>

namespace scaleprof::tables {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct EpochTime {
  int64_t epoch = 0;  // the user's epoch index
  double seconds = 0;
  // Of `seconds`, the time inside the training steps (the step records of the rank whose duration the
  // epoch time is); the rest is time outside the steps (evaluation, checkpoints, data-loader start-up,
  // anything between steps). NaN where the epoch has no step records.
  double steps_seconds = kNaN;
  // Samples the ranks processed in the epoch, summed over the ranks (each rank's epochs.csv `samples`,
  // else the sum of its step records' samples); NaN unless every rank of the run gave them.
  double samples = kNaN;
};

}  // namespace scaleprof::tables

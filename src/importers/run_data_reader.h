// Readers of the scalability report's inputs. They fill tables::ScalabilityData and format nothing.
//
// Under --root the layouts are detected automatically, folder by folder:
//  * scaleprof run directories (docs/run-directory.md): <root>/<experiment>/<run>/ with run.json
//    and/or rank-NNNNN/ folders (a root that is itself an experiment or a run works too), each read
//    with the run-directory reader (importers/run_reader.h), so the format has one reader;
//  * itwinai's CSV layout (v0.2.5 - v0.3.3): a folder holding epoch-time/, gpu-energy-data/,
//    computation-data/ (or the older communication-data/), either the root itself or one folder per
//    run id below it.
// itwinai's stored profiler traces (<run>/torch-traces/) are read like scaleprof's. A --run-names
// entry or --experiment that selects nothing is an error naming it.
// Missing pieces are warnings; rejected data (bad numbers, missing columns, contradicting files) are
// errors naming the file and line, and the rest is still read. Numbers are checked, not trusted:
//  * world size, nodes and GPU counts must lie in 1 .. kMaxWorkers (run.json's world_size outside it
//    is an error and the ranks' own count is used; an itwinai line outside it is skipped);
//  * an epoch recorded twice by one rank (a restarted process appending to the same epochs.csv)
//    keeps its first record, with a warning naming file and line of the repeat;
//  * a GPU sample's utilization outside 0..100 %, a negative (or above kMaxGpuPowerW) power, or a
//    negative energy is ignored (that value only) with a warning naming file and line; an epoch
//    time outside 0..kMaxEpochSeconds is an error and the epoch is skipped (importers/value_checks.h,
//    the checks the MLflow reader applies too);
//  * a `samples` count (epochs.csv, steps.csv) that is not an integer, negative or above 2^53 is an
//    error and that rank has no samples from that record (importers/value_checks.h, as the MLflow
//    reader checks epoch_samples); an epoch has samples only when every rank gives them;
//  * an itwinai self CUDA time outside 0..kMaxSelfTimeUs is an error and the line is skipped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "importers/value_checks.h"  // kMaxGpuPowerW, kMaxEpochSeconds: the checks shared by every reader
#include "tables/run_data.h"

namespace scaleprof::importers {

// More workers than any cluster has (2^24): a larger world size, node or GPU count in the data is a
// corrupt value, rejected with an error naming the file, so no loop or product over worker counts
// can run away.
inline constexpr int64_t kMaxWorkers = int64_t{1} << 24;
// Upper bound of one itwinai operator row's self CUDA time: 1e12 us (11.6 days). Larger is corrupt,
// and this keeps the conversion to int64 nanoseconds exact and its sums far from overflow.
inline constexpr double kMaxSelfTimeUs = 1e12;

struct ScalabilityReadOptions {
  std::string root = "scalability-metrics";
  std::string experiment;              // only this experiment (scaleprof layout); empty: all
  std::vector<std::string> run_names;  // only these runs (folder or run.json name; itwinai: run id)
  // itwinai's epoch-time files give nodes, not GPUs: workers = nodes x GPUs per node, taken from the
  // folder's GPU files where they tell (a warning when this option contradicts them), else this; 0:
  // not given, 4 as itwinai's plots assume.
  int64_t gpus_per_node = 0;
  bool scaleprof_runs = true;  // false: only itwinai's layout (`scaleprof runs` lists those this way)
  // Runs of SLURM jobs that `scaleprof slurm --force` superseded (listed in the experiment folder's
  // collect::kSupersededJobsFile) are left out, with one warning naming them, unless this is set.
  bool include_superseded = false;
};

// Fails only when the root cannot be listed. A root with no data at all gives an empty run list.
Result<tables::ScalabilityData> read_scalability_data(const ScalabilityReadOptions& options);

}  // namespace scaleprof::importers

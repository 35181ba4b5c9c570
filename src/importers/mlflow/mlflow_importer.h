// Runs of an MLflow experiment recorded as itwinai (>= 0.3.4) records them, into tables::ScalabilityData:
//
//   train run (top level, run name = itwinai's run_name)
//     worker_0 (main), worker_1, ...            params strategy, global_rank, global_world_size,
//                                               probing_interval; metrics epoch_time_s (main
//                                               worker), gpu_utilization_percent, gpu_power_W;
//                                               artifact torch_profiling_averages/torch_profiling_averages.csv
//   Ray: tune run -> trial runs -> worker runs  (each trial is one training)
//
// Runs sent by `scaleprof mlflow sync` have the same shape, and each worker also logs `epoch_samples`
// (step = epoch): an epoch's samples are their sum over the workers when every worker of the training
// gives them (throughput, weak or strong scaling), as the run-directory reader sums its ranks'.
//
// Discovery follows itwinai's: the top-level runs (or every run named in run_names), their children,
// and the children's children where they exist. One tables::RunData per training and (strategy, world
// size). Trainings of one configuration recorded separately (timing runs apart from profiling or GPU
// runs, as itwinai's docs recommend) meet in the same report group; each such join is a note.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "importers/mlflow/mlflow_store.h"
#include "tables/run_data.h"

namespace scaleprof::importers {

struct MlflowReadOptions {
  std::string tracking_uri = "mllogs/mlflow";  // itwinai's default
  std::string experiment_name = "unnamed-experiment";
  std::vector<std::string> run_names;  // empty: every top-level run
};

// Fails when the store cannot be opened or read, or the experiment does not exist.
Result<tables::ScalabilityData> read_mlflow_data(const MlflowReadOptions& options);
// The same on an open store (tests give any store kind).
Result<tables::ScalabilityData> read_mlflow_runs(MlflowStore& store, const MlflowReadOptions& options);

}  // namespace scaleprof::importers

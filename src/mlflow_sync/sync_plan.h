// What `scaleprof mlflow sync` puts on an MLflow server for one recorded run: a pure function of the
// run directory as collect's reader returns it, so the same run always gives the same plan (the
// stable ids, names, values and timestamps that make a repeated or resumed sync idempotent).
//
// One training run (parent, named like the scaleprof run) with one child per rank named as itwinai
// names its workers (`worker_<rank>`, rank 0 `worker_0 (main)`), so itwinai's report and scaleprof's
// MLflow reader discover them the same way. Names: docs/mlflow.md, "Names".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "importers/run_reader.h"
#include "mlflow_sync/profiling_artifact.h"

namespace scaleprof::mlflow_sync {

// The tag that identifies what scaleprof synced: "<experiment folder>/<run folder>" for the parent (plus
// "/attempt-N" for a SLURM requeue's attempt N > 0, the attempt the reader uses) and
// "<parent id>/rank-NNNNN" for a rank. Searching for it before creating a run is what keeps
// a second sync from making a second copy.
inline constexpr const char* kSyncIdTag = "scaleprof.sync_id";
// Set on the parent last, when every child, metric point and artifact is on the server.
inline constexpr const char* kSyncCompleteTag = "scaleprof.sync_complete";
// Set with it: plan_digest() of what was sent. A run whose complete tag carries another digest (or
// none) is checked against the server again instead of being taken as done.
inline constexpr const char* kSyncDigestTag = "scaleprof.sync_digest";

// The training's epoch time (itwinai's name), logged on the main worker only; each worker's own epoch
// times go under kWorkerEpochTimeMetric. docs/mlflow.md, "What goes where".
inline constexpr const char* kEpochTimeMetric = "epoch_time_s";
inline constexpr const char* kWorkerEpochTimeMetric = "worker_epoch_time_s";

struct MetricValue {
  std::string key;
  double value = 0;
  int64_t timestamp_ms = 0;
  int64_t step = 0;
};

struct ArtifactFile {
  std::string local_path;     // a file of the run directory (read, never written)
  std::string artifact_path;  // where it goes below the run's artifact root, '/'-separated
};

struct RunPlan {
  std::string sync_id;
  std::string name;           // mlflow.runName
  int64_t start_time_ms = 0;  // 0: unknown (the server's clock is used)
  int64_t end_time_ms = 0;    // 0: unknown
  std::string status;         // FINISHED, FAILED or KILLED
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<std::pair<std::string, std::string>> tags;  // without the sync id and parent tags
  std::vector<MetricValue> metrics;
  std::vector<ArtifactFile> artifacts;
  // A rank with traces also gets itwinai's profiling averages, computed from them at upload time.
  std::optional<ProfilingInput> profiling;
};

struct TrainingPlan {
  std::string experiment;  // the scaleprof experiment (the MLflow experiment's default name)
  RunPlan parent;
  std::vector<RunPlan> workers;  // by rank
};

// itwinai's worker run name.
std::string worker_run_name(int64_t rank);

// MLflow's run status for a scaleprof status: completed -> FINISHED, failed -> FAILED, interrupted
// and incomplete -> KILLED.
std::string mlflow_status(const std::string& scaleprof_status);

// The plan of one run. Runs still running are not planned by the caller (their data still grow).
TrainingPlan plan_training(const importers::RunData& run);

// A digest (16 hex digits) of everything the plan puts on the server: ids, names, params, tags, metric
// points bit for bit, artifact paths. The same plan gives the same digest in every build.
std::string plan_digest(const TrainingPlan& plan);

// Metric points of the parent and all workers.
int64_t metric_points(const TrainingPlan& plan);

}  // namespace scaleprof::mlflow_sync

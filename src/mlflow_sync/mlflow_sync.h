// `scaleprof mlflow sync`: pushes recorded run directories to an MLflow server (docs/mlflow.md,
// "Sync"). One parent run per scaleprof run, one child per rank (itwinai's worker_<rank> names),
// params, metric points in runs/log-batch calls, tags, and the run's files as artifacts.
//
// Guarantees (tests/python/test_mlflow_sync.py proves them against a real server):
//  * idempotent: every run is tagged with a stable sync id and searched for before it is created;
//    a run already complete on the server is left alone; params and tags are sent with the same
//    values again (MLflow accepts an identical param), artifacts overwrite themselves;
//  * resumable: after a crash or SIGKILL at any point, the next sync finishes what is missing, and a
//    run that may already hold metric points (it existed before this sync and is not recorded as
//    done) first reads their history, so no point is sent twice;
//  * the recorded files are only read; the progress record (sync_progress.h) is the only file
//    written, and only after the server accepted something;
//  * the first failure stops the sync with a one-line error; what was done stays recorded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace scaleprof::mlflow_sync {

struct SyncOptions {
  std::string root;                    // where runs are recorded
  std::string experiment;              // only this scaleprof experiment; empty: all
  std::vector<std::string> run_names;  // only these runs; empty: all
  std::string tracking_uri;            // http(s)://HOST:PORT
  std::string experiment_name;         // the MLflow experiment; empty: the scaleprof experiment's name
  std::string progress_path;           // empty: default_progress_path(root, tracking_uri)
  bool artifacts = true;               // upload the run's files and traces
  size_t batch_metrics = 1000;         // metric points per runs/log-batch call (MLflow's limit: 1000)
  int64_t kill_after_requests = 0;     // tests only, see MlflowWriter
};

struct RunOutcome {
  std::string experiment;  // the MLflow experiment
  std::string run;         // the scaleprof run name
  std::string action;      // synced, resumed, unchanged, skipped
  std::string detail;      // why skipped
  std::string run_id;      // the parent run on the server
  int64_t workers = 0;
  int64_t metric_points = 0;  // sent by this sync
  int64_t artifacts = 0;      // uploaded by this sync
};

struct SyncSummary {
  std::vector<RunOutcome> runs;
  std::vector<std::string> warnings;
  std::string progress_path;
  int64_t requests = 0;
};

// `progress` receives one line per finished run ("[3/100] exp/run: synced ...") for stderr.
Result<SyncSummary> sync_runs(const SyncOptions& options, const std::function<void(std::string_view)>& progress);

}  // namespace scaleprof::mlflow_sync

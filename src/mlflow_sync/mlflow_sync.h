// `scaleprof mlflow sync`: pushes recorded run directories to an MLflow server (docs/mlflow.md,
// "Sync"). One parent run per scaleprof run, one child per rank (itwinai's worker_<rank> names),
// params, metric points in runs/log-batch calls, tags, and the run's files as artifacts.
//
// Guarantees (tests/python/test_mlflow_sync.py proves them against a real server):
//  * one sync at a time per root and server (sync_lock.h): a second one waits or stops at once;
//  * idempotent: every run is tagged with a stable sync id (unique per run folder) and searched for
//    right before it is created; a run the server holds complete, for this very plan (the digest
//    tag) and with every worker and metric, is left alone; params the server has are not sent again,
//    tags are, artifacts the server has with the same size are not uploaded again;
//  * the server is the truth: a run found on the server, complete or not, gets its metric histories
//    read and only the points it lacks sent (each point exactly once); the progress file is never
//    taken over the server, and one that cannot be read is set aside and rebuilt;
//  * resumable: after a crash or SIGKILL at any point, the next sync finishes what is missing;
//  * the recorded files are only read, never through a symbolic link (collect/run_file.h); the
//    progress record and the lock file beside it are the only files written;
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
  bool wait_for_lock = false;          // another sync of this root and server runs: wait (else stop)
  bool verify = false;                 // read back every run, complete ones too (histories, artifacts)
  int64_t kill_after_requests = 0;     // tests only, see MlflowWriter
};

struct RunOutcome {
  std::string experiment;  // the MLflow experiment
  std::string run;         // the scaleprof run name
  std::string action;      // synced, resumed, repaired, unchanged, skipped
  std::string detail;      // why skipped
  std::string run_id;      // the parent run on the server
  int64_t workers = 0;
  int64_t metric_points = 0;  // sent by this sync
  int64_t artifacts = 0;      // uploaded by this sync
};

struct SyncSummary {
  // Not empty: another sync of this root and server holds the lock (who, as its lock file says);
  // nothing was sent or written.
  std::string busy;
  std::string lock_path;
  std::vector<RunOutcome> runs;
  std::vector<std::string> warnings;
  std::string progress_path;
  int64_t requests = 0;
};

// `progress` receives one line per finished run ("[3/100] exp/run: synced ...") for stderr.
Result<SyncSummary> sync_runs(const SyncOptions& options, const std::function<void(std::string_view)>& progress);

}  // namespace scaleprof::mlflow_sync

// `scaleprof mlflow sync` end to end, for the CLI: the server (--tracking-uri, else
// MLFLOW_TRACKING_URI; only http(s) takes writes), the root (--root, else the run context's default),
// the sync itself (mlflow_sync/mlflow_sync.h) with its progress lines, and the summary table.
#pragma once

#include <string>

#include "core/message_sink.h"
#include "core/result.h"
#include "mlflow_sync/mlflow_sync.h"
#include "report/table.h"

namespace scaleprof::pipeline {

struct MlflowSyncOptions {
  mlflow_sync::SyncOptions sync;  // tracking_uri and root: empty for their defaults
  std::string format = "table";
  bool quiet = false;  // no progress lines or warnings
};

struct MlflowSyncOutcome {
  report::Table table;  // one row per run
  report::Format format = report::Format::kTable;
  std::string root;       // the root synced
  std::string shown_uri;  // the server, credentials removed
  std::string busy;       // not empty: another sync holds the lock (who); nothing was done
  std::string lock_path;  // its lock
};

// Messages ("sync" progress lines, warnings) through `message`. A bad option is kUsage; a server
// that fails, kNetwork; another sync running is no error but `busy`.
Result<MlflowSyncOutcome> sync_to_mlflow(MlflowSyncOptions options, const MessageSink& message);

}  // namespace scaleprof::pipeline

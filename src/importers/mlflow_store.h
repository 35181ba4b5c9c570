// Read access to an MLflow tracking store, whatever its kind: a server (REST API 2.0), a SQLite
// database or a file store directory. The MLflow importer (importers/mlflow_importer.h) walks runs
// through this interface only, so the three kinds give the same report by construction.
//
// Tracking URIs as MLflow and itwinai take them:
//   http://HOST:PORT, https://...      a server (credentials from MLFLOW_TRACKING_TOKEN, or
//                                      MLFLOW_TRACKING_USERNAME / _PASSWORD; MLFLOW_TRACKING_INSECURE_TLS)
//   sqlite:///relative/or//abs.db      a SQLite database, opened read-only
//   file:///abs/dir, a plain path       a file store directory (itwinai's default: mllogs/mlflow)
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace scaleprof::importers {

struct MlflowRun {
  std::string run_id;
  std::string name;       // run name (mlflow.runName)
  std::string parent_id;  // tag mlflow.parentRunId, empty for top-level runs
  std::string status;     // RUNNING, FINISHED, FAILED, KILLED, SCHEDULED
  std::string artifact_uri;
  std::map<std::string, std::string> params;
  std::map<std::string, std::string> tags;
  std::vector<std::string> metric_keys;  // sorted
};

struct MetricPoint {
  int64_t step = 0;
  int64_t timestamp_ms = 0;
  double value = 0;
};

class MlflowStore {
 public:
  virtual ~MlflowStore() = default;
  MlflowStore() = default;
  MlflowStore(const MlflowStore&) = delete;
  MlflowStore& operator=(const MlflowStore&) = delete;

  // The store as messages name it (never with credentials).
  virtual std::string describe() const = 0;
  // `text` holding what the store gave (run names, ids, a server's words) as a message may show it:
  // through the one credential redactor, with the store's own secrets where it has any.
  virtual std::string redact(std::string_view text) const;
  // The id of the active experiment with this name; an empty optional when there is none.
  virtual Result<std::optional<std::string>> experiment_id(const std::string& name) = 0;
  // Every active (not deleted) run of the experiment, nested ones included.
  virtual Result<std::vector<MlflowRun>> runs(const std::string& experiment_id) = 0;
  // The full history of one metric, in the order the store gives it.
  virtual Result<std::vector<MetricPoint>> metric_history(const MlflowRun& run, const std::string& key) = 0;
  // The text of an artifact (path relative to the run's artifact root); empty optional when absent.
  virtual Result<std::optional<std::string>> artifact(const MlflowRun& run, const std::string& path) = 0;
};

enum class TrackingKind { kServer, kSqlite, kFileStore };

struct TrackingUri {
  TrackingKind kind = TrackingKind::kFileStore;
  std::string location;  // server base URL without a trailing '/', or a filesystem path
};

// Classifies a tracking URI the way MLflow does (no scheme: a file store path).
Result<TrackingUri> parse_tracking_uri(const std::string& uri);

// The local folder of a file:// or plain-path artifact URI (percent-decoded); empty optional for
// remote ones (mlflow-artifacts:, s3:, ...).
std::optional<std::string> local_artifact_dir(const std::string& artifact_uri);

// Reads a local artifact below `artifact_uri`; refuses paths that climb out of it ("..").
Result<std::optional<std::string>> read_local_artifact(const std::string& artifact_uri, const std::string& path);

// Opens the store; fails with a one-line message when it cannot be opened at all.
Result<std::unique_ptr<MlflowStore>> open_mlflow_store(const std::string& tracking_uri);

Result<std::unique_ptr<MlflowStore>> open_mlflow_file_store(const std::string& directory);
Result<std::unique_ptr<MlflowStore>> open_mlflow_sqlite_store(const std::string& path);
Result<std::unique_ptr<MlflowStore>> open_mlflow_server_store(const std::string& base_url);
// With other bounds than the defaults (tests: a short stall window, small caps).
struct ServerStoreLimits;  // importers/mlflow_pages.h
Result<std::unique_ptr<MlflowStore>> open_mlflow_server_store(const std::string& base_url,
                                                              const ServerStoreLimits& limits);

}  // namespace scaleprof::importers

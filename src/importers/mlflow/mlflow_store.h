// Read access to an MLflow tracking store, whatever its kind: a server (REST API 2.0), a SQLite
// database or a file store directory. The MLflow importer (importers/mlflow/mlflow_importer.h) walks runs
// through this interface only, so the three kinds give the same report by construction.
//
// Tracking URIs as MLflow and itwinai take them:
//   http://HOST:PORT, https://...      a server (credentials from MLFLOW_TRACKING_TOKEN, or
//                                      MLFLOW_TRACKING_USERNAME / _PASSWORD; MLFLOW_TRACKING_INSECURE_TLS)
//   sqlite:///relative/or//abs.db      a SQLite database, opened read-only
//   file:///abs/dir, a plain path       a file store directory (itwinai's default: mllogs/mlflow)
#pragma once

#include <chrono>
#include <cstddef>
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

// What one reader reads at most, so that no store (a hostile file, a corrupt database, a planted
// tree) can make the report allocate without bound or run forever. A store that exceeds a bound
// skips that item with one line in problems(); it never truncates silently.
struct MlflowReadLimits {
  size_t max_runs = 100000;                          // runs of one experiment (the listing fails beyond it)
  size_t max_keys_per_run = 10000;                   // params, tags or metric keys of one run
  size_t max_points_per_metric = 5000000;            // one metric's history (the metric is skipped beyond it)
  size_t max_value_bytes = 65536;                    // one param or tag value (MLflow's own limit is 8000)
  size_t max_meta_bytes = 1 << 20;                   // one meta.yaml
  size_t max_metric_file_bytes = size_t{256} << 20;  // one file store metric file
  size_t max_artifact_bytes = size_t{64} << 20;      // one artifact read as text
  std::chrono::milliseconds query_deadline{std::chrono::minutes(5)};  // one SQLite query
};

// A reason an artifact cannot be read here, for artifact URIs that are not local folders
// (mlflow-artifacts:, s3:, gs:, http: ...): their scheme, e.g. "mlflow-artifacts". Empty for local
// ones (file:, plain paths).
std::string remote_artifact_scheme(const std::string& artifact_uri);

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
  // An artifact root this store cannot read (remote_artifact_scheme() not empty, on a store without
  // a server) is an error the importer turns into a warning: artifacts are optional.
  virtual Result<std::optional<std::string>> artifact(const MlflowRun& run, const std::string& path) = 0;

  // The scheme of the run's artifact root when this store cannot read it ("mlflow-artifacts", "s3",
  // ...), else empty. A server reads every root it serves.
  virtual std::string unreadable_artifact_scheme(const MlflowRun& run) const {
    (void)run;
    return {};
  }

  // The items the last calls skipped (a run whose meta.yaml is corrupt, a metric line or a database
  // row that is not a number, a value above a limit, a symbolic link), one line each naming the file
  // or table and the place, and cleared. The importer reports them as errors (exit code 3), the way
  // the run-directory reader reports the lines it skips.
  std::vector<std::string> take_problems() {
    std::vector<std::string> out;
    out.swap(problems_);
    return out;
  }

 protected:
  void problem(std::string message) { problems_.push_back(std::move(message)); }

 private:
  std::vector<std::string> problems_;
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

// The one check of an artifact path asked for by name, for every store: relative, and no ".." part
// (the path as given on success). Reading below the artifact folder (core/file_below.h) then follows
// no symbolic link out of it.
Result<std::string> checked_artifact_path(const std::string& path);

// Reads a local artifact below `artifact_uri` (core/file_below.h: no symbolic link below the artifact
// folder is followed, at most `max_bytes`); refuses paths that climb out of it (".."). An artifact
// URI that is not local is an error naming its scheme.
Result<std::optional<std::string>> read_local_artifact(const std::string& artifact_uri, const std::string& path,
                                                       size_t max_bytes = MlflowReadLimits{}.max_artifact_bytes);

// Opens the store; fails with a one-line message when it cannot be opened at all.
Result<std::unique_ptr<MlflowStore>> open_mlflow_store(const std::string& tracking_uri,
                                                       const MlflowReadLimits& limits = {});

Result<std::unique_ptr<MlflowStore>> open_mlflow_file_store(const std::string& directory,
                                                            const MlflowReadLimits& limits = {});
Result<std::unique_ptr<MlflowStore>> open_mlflow_sqlite_store(const std::string& path,
                                                              const MlflowReadLimits& limits = {});
Result<std::unique_ptr<MlflowStore>> open_mlflow_server_store(const std::string& base_url);
// With other bounds than the defaults (tests: a short stall window, small caps).
struct ServerStoreLimits;  // importers/mlflow/mlflow_pages.h
Result<std::unique_ptr<MlflowStore>> open_mlflow_server_store(const std::string& base_url,
                                                              const ServerStoreLimits& limits);

}  // namespace scaleprof::importers

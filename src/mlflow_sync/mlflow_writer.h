// The REST calls `scaleprof mlflow sync` makes to an MLflow server (API 2.0 and the artifact
// proxy), over the HTTP client (core/http_client.h) with MLflow's wording. Every failure is one line naming the server
// and the endpoint: a server that is down, an HTTP error with MLflow's message, or a response that is not what MLflow
// sends. Credentials (MLFLOW_TRACKING_*) never appear in them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "importers/mlflow/mlflow_http.h"
#include "importers/mlflow/mlflow_store.h"
#include "mlflow_sync/sync_payload.h"

namespace scaleprof::mlflow_sync {

class MlflowWriter {
 public:
  // `kill_after_requests` > 0: the process kills itself with SIGKILL once that many requests have
  // been answered (SCALEPROF_TEST_SYNC_KILL_AFTER; the resume tests use it to stop a sync at an
  // exact point, as a crash or `kill -9` would).
  MlflowWriter(const std::string& base_url, int64_t kill_after_requests = 0);

  const std::string& shown_url() const { return http_.shown_url(); }
  int64_t requests() const { return requests_; }

  // The id of the experiment, created when missing.
  Result<std::string> experiment_id(const std::string& name);
  // Every active run of the experiment that carries the sync id tag, by that id. Where the server
  // holds several runs with one id (left by syncs of an older version racing each other), the first
  // found is used and `duplicates` gets one line naming the others.
  Result<std::map<std::string, importers::MlflowRun>> synced_runs(const std::string& experiment_id,
                                                                  std::vector<std::string>* duplicates = nullptr);
  // The active runs tagged with one sync id: asked right before a run is created, so a run another
  // sync created since the experiment was first searched is adopted instead of made twice.
  Result<std::vector<importers::MlflowRun>> runs_with_sync_id(const std::string& experiment_id,
                                                              const std::string& sync_id);
  // The files directly in one artifact folder of a run: path -> size in bytes.
  Result<std::map<std::string, int64_t>> artifact_sizes(const std::string& run_id, const std::string& folder);
  Result<importers::MlflowRun> create_run(const std::string& experiment_id, const RunPlan& run,
                                          const std::vector<std::pair<std::string, std::string>>& tags);
  Status log_batch(const std::string& run_id, const LogBatch& batch);
  Status update_run(const std::string& run_id, const RunPlan& run);
  Result<std::vector<importers::MetricPoint>> metric_history(const std::string& run_id, const std::string& key);
  // PUT to the artifact proxy: <artifact root>/<artifact_path>.
  Status upload_artifact(const std::string& proxied_root, const ArtifactFile& file);
  Status upload_bytes(const std::string& proxied_root, const std::string& artifact_path, std::string_view bytes);

 private:
  std::string artifact_url_path(const std::string& proxied_root, const std::string& artifact_path) const;
  Result<HttpResponse> post(const std::string& endpoint, const std::string& body);
  Result<HttpResponse> get(const std::string& path_and_query);
  void count_request();

  HttpClient http_;
  int64_t kill_after_requests_ = 0;
  int64_t requests_ = 0;
};

}  // namespace scaleprof::mlflow_sync

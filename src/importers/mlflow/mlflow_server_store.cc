// An MLflow tracking server through its REST API 2.0: experiments/get-by-name, runs/search (paged),
// metrics/get-history (paged), artifacts/list (paged) and the artifact download endpoint
// (get-artifact). Pages are followed by the one pagination mechanism (importers/mlflow/mlflow_pages.h);
// every message is redacted by the client (importers/mlflow/mlflow_http.h).
#include <fmt/format.h>

#include "core/json_string.h"
#include "importers/mlflow/mlflow_http.h"
#include "importers/mlflow/mlflow_json.h"
#include "importers/mlflow/mlflow_pages.h"
#include "importers/mlflow/mlflow_store.h"

namespace scaleprof::importers {

namespace {

class ServerStore final : public MlflowStore {
 public:
  ServerStore(const std::string& base_url, const ServerStoreLimits& limits)
      : http_(base_url, credentials_from_environment(), limits.http, mlflow_http_wording()), pages_(limits.pages) {}

  std::string describe() const override { return http_.shown_url(); }
  std::string redact(std::string_view text) const override { return http_.redact(text); }

  Result<std::optional<std::string>> experiment_id(const std::string& name) override {
    auto r = http_.get("/api/2.0/mlflow/experiments/get-by-name?experiment_name=" + http_.escape(name));
    if (!r) return r.error();
    if (r.value().status == 404) return std::optional<std::string>{};
    if (r.value().status != 200)
      return Error{http_failure(http_, "experiments/get-by-name", r.value()), ErrorKind::kNetwork};
    auto id = parse_experiment_id_response(r.value().body);
    if (!id) return http_.failure(id.error().message);
    return std::optional<std::string>{id.value()};
  }

  Result<std::vector<MlflowRun>> runs(const std::string& experiment_id) override {
    auto runs = read_all_runs(pages_, [&](const std::string& token) {
      std::string body = "{\"experiment_ids\":[" + json_quote(experiment_id) +
                         "],\"max_results\":1000,\"run_view_type\":\"ACTIVE_ONLY\"";
      if (!token.empty()) body += ",\"page_token\":" + json_quote(token);
      body += "}";
      return body_of(http_.post_json("/api/2.0/mlflow/runs/search", body), "runs/search");
    });
    if (!runs) return http_.failure(runs.error().message);
    return runs;
  }

  Result<std::vector<MetricPoint>> metric_history(const MlflowRun& run, const std::string& key) override {
    auto points = read_metric_history(pages_, [&](const std::string& token) {
      std::string query = "/api/2.0/mlflow/metrics/get-history?run_id=" + http_.escape(run.run_id) +
                          "&metric_key=" + http_.escape(key) + "&max_results=25000";
      if (!token.empty()) query += "&page_token=" + http_.escape(token);
      return body_of(http_.get(query), "metrics/get-history");
    });
    if (!points) return http_.failure(points.error().message);
    return points;
  }

  Result<std::optional<std::string>> artifact(const MlflowRun& run, const std::string& path) override {
    // List the folder first: a missing artifact is normal (not every worker logs one).
    const size_t slash = path.rfind('/');
    const std::string folder = slash == std::string::npos ? std::string() : path.substr(0, slash);
    auto entries = read_artifact_list(pages_, [&](const std::string& token) {
      std::string query =
          "/api/2.0/mlflow/artifacts/list?run_id=" + http_.escape(run.run_id) + "&path=" + http_.escape(folder);
      if (!token.empty()) query += "&page_token=" + http_.escape(token);
      return body_of(http_.get(query), "artifacts/list");
    });
    if (!entries) return http_.failure(entries.error().message);
    bool found = false;
    for (const ArtifactEntry& e : entries.value()) found |= !e.is_dir && e.path == path;
    if (!found) return std::optional<std::string>{};
    auto r = http_.get("/get-artifact?path=" + http_.escape(path) + "&run_uuid=" + http_.escape(run.run_id));
    if (!r) return r.error();
    if (r.value().status != 200) return Error{http_failure(http_, "get-artifact", r.value()), ErrorKind::kNetwork};
    return std::optional<std::string>{std::move(r.value().body)};
  }

 private:
  // The body of a 200 response; a transport error or another status as the client words it.
  Result<std::string> body_of(Result<HttpResponse> r, std::string_view endpoint) const {
    if (!r) return r.error();
    if (r.value().status != 200) return Error{http_failure(http_, endpoint, r.value()), ErrorKind::kNetwork};
    return std::move(r.value().body);
  }

  HttpClient http_;
  PageLimits pages_;
};

}  // namespace

Result<std::unique_ptr<MlflowStore>> open_mlflow_server_store(const std::string& base_url) {
  return open_mlflow_server_store(base_url, ServerStoreLimits{});
}

Result<std::unique_ptr<MlflowStore>> open_mlflow_server_store(const std::string& base_url,
                                                              const ServerStoreLimits& limits) {
  return std::unique_ptr<MlflowStore>(std::make_unique<ServerStore>(base_url, limits));
}

}  // namespace scaleprof::importers

// An MLflow tracking server through its REST API 2.0: experiments/get-by-name, runs/search (paged),
// metrics/get-history (paged), artifacts/list and the artifact download endpoint (get-artifact).
#include <fmt/format.h>

#include "importers/http_client.h"
#include "importers/mlflow_json.h"
#include "importers/mlflow_store.h"

namespace scaleprof::importers {

namespace {

// Safety bounds: a server that keeps sending page tokens cannot keep the report waiting forever.
constexpr int kMaxPages = 100000;

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

class ServerStore final : public MlflowStore {
 public:
  explicit ServerStore(const std::string& base_url) : http_(base_url, credentials_from_environment()) {}

  std::string describe() const override { return http_.shown_url(); }

  Result<std::optional<std::string>> experiment_id(const std::string& name) override {
    auto r = http_.get("/api/2.0/mlflow/experiments/get-by-name?experiment_name=" + http_.escape(name));
    if (!r) return r.error();
    if (r.value().status == 404) return std::optional<std::string>{};
    if (r.value().status != 200) return Error{http_failure(http_, "experiments/get-by-name", r.value())};
    auto id = parse_experiment_id_response(r.value().body);
    if (!id) return Error{fmt::format("{}: {}", http_.shown_url(), id.error().message)};
    return std::optional<std::string>{id.value()};
  }

  Result<std::vector<MlflowRun>> runs(const std::string& experiment_id) override {
    std::vector<MlflowRun> out;
    std::string token;
    for (int page = 0; page < kMaxPages; ++page) {
      std::string body = "{\"experiment_ids\":[" + json_quote(experiment_id) +
                         "],\"max_results\":1000,\"run_view_type\":\"ACTIVE_ONLY\"";
      if (!token.empty()) body += ",\"page_token\":" + json_quote(token);
      body += "}";
      auto r = http_.post_json("/api/2.0/mlflow/runs/search", body);
      if (!r) return r.error();
      if (r.value().status != 200) return Error{http_failure(http_, "runs/search", r.value())};
      auto parsed = parse_search_runs_response(r.value().body);
      if (!parsed) return Error{fmt::format("{}: {}", http_.shown_url(), parsed.error().message)};
      for (MlflowRun& run : parsed.value().runs) out.push_back(std::move(run));
      token = parsed.value().next_page_token;
      if (token.empty()) return out;
    }
    return Error{fmt::format("{}: runs/search: more than {} pages", http_.shown_url(), kMaxPages)};
  }

  Result<std::vector<MetricPoint>> metric_history(const MlflowRun& run, const std::string& key) override {
    std::vector<MetricPoint> out;
    std::string token;
    for (int page = 0; page < kMaxPages; ++page) {
      std::string query = "/api/2.0/mlflow/metrics/get-history?run_id=" + http_.escape(run.run_id) +
                          "&metric_key=" + http_.escape(key) + "&max_results=25000";
      if (!token.empty()) query += "&page_token=" + http_.escape(token);
      auto r = http_.get(query);
      if (!r) return r.error();
      if (r.value().status != 200) return Error{http_failure(http_, "metrics/get-history", r.value())};
      auto parsed = parse_metric_history_response(r.value().body);
      if (!parsed) return Error{fmt::format("{}: {}", http_.shown_url(), parsed.error().message)};
      out.insert(out.end(), parsed.value().points.begin(), parsed.value().points.end());
      token = parsed.value().next_page_token;
      if (token.empty()) return out;
    }
    return Error{fmt::format("{}: metrics/get-history: more than {} pages", http_.shown_url(), kMaxPages)};
  }

  Result<std::optional<std::string>> artifact(const MlflowRun& run, const std::string& path) override {
    // List the folder first: a missing artifact is normal (not every worker logs one).
    const size_t slash = path.rfind('/');
    const std::string folder = slash == std::string::npos ? std::string() : path.substr(0, slash);
    auto listed = http_.get("/api/2.0/mlflow/artifacts/list?run_id=" + http_.escape(run.run_id) +
                            "&path=" + http_.escape(folder));
    if (!listed) return listed.error();
    if (listed.value().status != 200) return Error{http_failure(http_, "artifacts/list", listed.value())};
    auto entries = parse_artifact_list_response(listed.value().body);
    if (!entries) return Error{fmt::format("{}: {}", http_.shown_url(), entries.error().message)};
    bool found = false;
    for (const ArtifactEntry& e : entries.value()) found |= !e.is_dir && e.path == path;
    if (!found) return std::optional<std::string>{};
    auto r = http_.get("/get-artifact?path=" + http_.escape(path) + "&run_uuid=" + http_.escape(run.run_id));
    if (!r) return r.error();
    if (r.value().status != 200) return Error{http_failure(http_, "get-artifact", r.value())};
    return std::optional<std::string>{std::move(r.value().body)};
  }

 private:
  HttpClient http_;
};

}  // namespace

Result<std::unique_ptr<MlflowStore>> open_mlflow_server_store(const std::string& base_url) {
  return std::unique_ptr<MlflowStore>(std::make_unique<ServerStore>(base_url));
}

}  // namespace scaleprof::importers

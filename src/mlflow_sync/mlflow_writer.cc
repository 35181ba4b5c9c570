#include "mlflow_sync/mlflow_writer.h"

#include <fmt/format.h>

#include <csignal>

#include "collect/run_file.h"
#include "importers/mlflow/mlflow_json.h"
#include "importers/mlflow/mlflow_pages.h"

namespace scaleprof::mlflow_sync {

namespace {

constexpr const char* kApi = "/api/2.0/mlflow/";

}  // namespace

MlflowWriter::MlflowWriter(const std::string& base_url, int64_t kill_after_requests)
    : http_(base_url, importers::credentials_from_environment(), {}, importers::mlflow_http_wording()),
      kill_after_requests_(kill_after_requests) {}

void MlflowWriter::count_request() {
  ++requests_;
  if (kill_after_requests_ > 0 && requests_ >= kill_after_requests_) std::raise(SIGKILL);
}

Result<HttpResponse> MlflowWriter::post(const std::string& endpoint, const std::string& body) {
  auto r = http_.post_json(kApi + endpoint, body);
  count_request();
  if (!r) return r.error();
  if (r.value().status != 200) return Error{importers::http_failure(http_, endpoint, r.value()), ErrorKind::kNetwork};
  return r;
}

Result<HttpResponse> MlflowWriter::get(const std::string& path_and_query) {
  auto r = http_.get(kApi + path_and_query);
  count_request();
  return r;
}

Result<std::string> MlflowWriter::experiment_id(const std::string& name) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto r = get("experiments/get-by-name?experiment_name=" + http_.escape(name));
    if (!r) return r.error();
    if (r.value().status == 200) {
      auto id = importers::parse_experiment_id_response(r.value().body);
      if (!id) return http_.failure(id.error().message);
      return id;
    }
    if (r.value().status != 404)
      return Error{importers::http_failure(http_, "experiments/get-by-name", r.value()), ErrorKind::kNetwork};
    auto created = http_.post_json(std::string(kApi) + "experiments/create", create_experiment_json(name));
    count_request();
    if (!created) return created.error();
    if (created.value().status == 200) {
      auto id = importers::parse_create_experiment_response(created.value().body);
      if (!id) return http_.failure(id.error().message);
      return id;
    }
    // Another sync created it in between (RESOURCE_ALREADY_EXISTS): look it up again.
    if (importers::parse_error_response(created.value().body).rfind("RESOURCE_ALREADY_EXISTS", 0) != 0) {
      return Error{importers::http_failure(http_, "experiments/create", created.value()), ErrorKind::kNetwork};
    }
  }
  return http_.failure(fmt::format("experiment '{}' could be neither found nor created", name));
}

Result<std::map<std::string, importers::MlflowRun>> MlflowWriter::synced_runs(const std::string& experiment_id,
                                                                              std::vector<std::string>* duplicates) {
  // Paged through the importers' one pagination mechanism (loops and caps, importers/mlflow/mlflow_pages.h).
  auto runs = importers::read_all_runs(importers::PageLimits{}, [&](const std::string& token) -> Result<std::string> {
    auto r = post("runs/search", search_synced_runs_json(experiment_id, token));
    if (!r) return r.error();
    return std::move(r.value().body);
  });
  if (!runs) return http_.failure(runs.error().message);
  std::map<std::string, importers::MlflowRun> out;
  for (importers::MlflowRun& run : runs.value()) {
    auto it = run.tags.find(kSyncIdTag);
    if (it == run.tags.end() || it->second.empty()) continue;
    // Two runs with one id (a sync of an older version racing another): keep the first, as every
    // sync does, so they all add to the same one.
    auto [kept, fresh] = out.emplace(it->second, run);
    if (!fresh && duplicates != nullptr) {
      duplicates->push_back(
          fmt::format("{}: runs {} and {} both hold '{}' (left by two syncs at once); {} is used, delete the other one",
                      http_.shown_url(), kept->second.run_id, run.run_id, it->second, kept->second.run_id));
    }
  }
  return out;
}

Result<std::vector<importers::MlflowRun>> MlflowWriter::runs_with_sync_id(const std::string& experiment_id,
                                                                          const std::string& sync_id) {
  const std::string body = search_sync_id_json(experiment_id, sync_id);
  std::vector<importers::MlflowRun> out;
  if (body.empty()) {  // an id the filter cannot quote: the whole search, then pick
    auto all = synced_runs(experiment_id);
    if (!all) return all.error();
    if (auto it = all.value().find(sync_id); it != all.value().end()) out.push_back(it->second);
    return out;
  }
  auto r = post("runs/search", body);
  if (!r) return r.error();
  auto parsed = importers::parse_search_runs_response(r.value().body);
  if (!parsed) return Error{fmt::format("{}: {}", http_.shown_url(), parsed.error().message)};
  for (importers::MlflowRun& run : parsed.value().runs) {
    auto it = run.tags.find(kSyncIdTag);
    if (it != run.tags.end() && it->second == sync_id) out.push_back(std::move(run));
  }
  return out;
}

Result<std::map<std::string, int64_t>> MlflowWriter::artifact_sizes(const std::string& run_id,
                                                                    const std::string& folder) {
  // Paged as every artifacts/list call (importers/mlflow/mlflow_pages.h).
  auto entries =
      importers::read_artifact_list(importers::PageLimits{}, [&](const std::string& token) -> Result<std::string> {
        std::string query = "artifacts/list?run_id=" + http_.escape(run_id) + "&path=" + http_.escape(folder);
        if (!token.empty()) query += "&page_token=" + http_.escape(token);
        auto r = get(query);
        if (!r) return r.error();
        if (r.value().status != 200)
          return Error{importers::http_failure(http_, "artifacts/list", r.value()), ErrorKind::kNetwork};
        return std::move(r.value().body);
      });
  if (!entries) return http_.failure(entries.error().message);
  std::map<std::string, int64_t> out;
  for (const importers::ArtifactEntry& e : entries.value()) {
    if (!e.is_dir) out[e.path] = e.file_size;
  }
  return out;
}

Result<importers::MlflowRun> MlflowWriter::create_run(const std::string& experiment_id, const RunPlan& run,
                                                      const std::vector<std::pair<std::string, std::string>>& tags) {
  auto r = post("runs/create", create_run_json(experiment_id, run, tags));
  if (!r) return r.error();
  auto parsed = importers::parse_run_response(r.value().body, "runs/create");
  if (!parsed) return http_.failure(parsed.error().message);
  return parsed;
}

Status MlflowWriter::log_batch(const std::string& run_id, const LogBatch& batch) {
  auto r = post("runs/log-batch", log_batch_json(run_id, batch));
  if (!r) return r.error();
  return Ok{};
}

Status MlflowWriter::update_run(const std::string& run_id, const RunPlan& run) {
  auto r = post("runs/update", update_run_json(run_id, run));
  if (!r) return r.error();
  return Ok{};
}

Result<std::vector<importers::MetricPoint>> MlflowWriter::metric_history(const std::string& run_id,
                                                                         const std::string& key) {
  auto points =
      importers::read_metric_history(importers::PageLimits{}, [&](const std::string& token) -> Result<std::string> {
        std::string query = "metrics/get-history?run_id=" + http_.escape(run_id) + "&metric_key=" + http_.escape(key) +
                            "&max_results=25000";
        if (!token.empty()) query += "&page_token=" + http_.escape(token);
        auto r = get(query);
        if (!r) return r.error();
        if (r.value().status != 200)
          return Error{importers::http_failure(http_, "metrics/get-history", r.value()), ErrorKind::kNetwork};
        return std::move(r.value().body);
      });
  if (!points) return http_.failure(points.error().message);
  return points;
}

std::string MlflowWriter::artifact_url_path(const std::string& proxied_root, const std::string& artifact_path) const {
  std::string path = "/api/2.0/mlflow-artifacts/artifacts/";
  // Each path segment percent-encoded ('/' kept): trace file names hold host names and dots.
  const std::string full = proxied_root + "/" + artifact_path;
  size_t start = 0;
  while (start <= full.size()) {
    const size_t slash = full.find('/', start);
    const size_t end = slash == std::string::npos ? full.size() : slash;
    path += http_.escape(std::string_view(full).substr(start, end - start));
    if (slash == std::string::npos) break;
    path += '/';
    start = slash + 1;
  }
  return path;
}

Status MlflowWriter::upload_artifact(const std::string& proxied_root, const ArtifactFile& file) {
  // Opened here without following a symbolic link (collect/run_file.h), then streamed from that open
  // file: a link planted at the path, before or during the sync, is never uploaded.
  auto opened = collect::open_run_file(file.local_path);
  if (!opened) return opened.error();
  auto r = http_.put_file(artifact_url_path(proxied_root, file.artifact_path), opened.value().proc_path());
  count_request();
  if (!r) return r.error();
  if (r.value().status != 200)
    return Error{importers::http_failure(http_, "mlflow-artifacts upload", r.value()), ErrorKind::kNetwork};
  return Ok{};
}

Status MlflowWriter::upload_bytes(const std::string& proxied_root, const std::string& artifact_path,
                                  std::string_view bytes) {
  auto r = http_.put_bytes(artifact_url_path(proxied_root, artifact_path), bytes);
  count_request();
  if (!r) return r.error();
  if (r.value().status != 200)
    return Error{importers::http_failure(http_, "mlflow-artifacts upload", r.value()), ErrorKind::kNetwork};
  return Ok{};
}

}  // namespace scaleprof::mlflow_sync

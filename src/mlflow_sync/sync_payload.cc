#include "mlflow_sync/sync_payload.h"

#include <fmt/format.h>

#include <cmath>

#include "core/json_string.h"

namespace scaleprof::mlflow_sync {

namespace {

// A JSON number that reads back as the same double; MLflow's proto JSON takes the strings "NaN",
// "Infinity" and "-Infinity" for the rest.
std::string json_double(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  return fmt::format("{}", v);
}

std::string metric_json(const MetricValue& m) {
  return fmt::format("{{\"key\":{},\"value\":{},\"timestamp\":{},\"step\":{}}}", json_quote(m.key),
                     json_double(m.value), m.timestamp_ms, m.step);
}

std::string key_value_json(const std::pair<std::string, std::string>& kv) {
  return fmt::format("{{\"key\":{},\"value\":{}}}", json_quote(kv.first), json_quote(kv.second));
}

// Bytes of the envelope around the items, with room for the run id.
constexpr size_t kEnvelopeBytes = 200;

}  // namespace

std::vector<LogBatch> split_batches(const std::vector<std::pair<std::string, std::string>>& params,
                                    const std::vector<std::pair<std::string, std::string>>& tags,
                                    const std::vector<MetricValue>& metrics, const BatchLimits& limits) {
  std::vector<LogBatch> out;
  LogBatch current;
  size_t bytes = kEnvelopeBytes;
  auto entities = [&] { return current.params.size() + current.tags.size() + current.metrics.size(); };
  auto flush = [&] {
    if (entities() > 0) out.push_back(std::move(current));
    current = LogBatch{};
    bytes = kEnvelopeBytes;
  };
  // +1: the comma between items.
  auto fits = [&](size_t in_kind, size_t kind_limit, size_t item_bytes) {
    return in_kind < kind_limit && entities() < limits.max_entities && bytes + item_bytes + 1 <= limits.max_bytes;
  };
  for (const auto& p : params) {
    const size_t b = key_value_json(p).size();
    if (!fits(current.params.size(), limits.max_params, b) && entities() > 0) flush();
    current.params.push_back(p);
    bytes += b + 1;
  }
  for (const auto& t : tags) {
    const size_t b = key_value_json(t).size();
    if (!fits(current.tags.size(), limits.max_tags, b) && entities() > 0) flush();
    current.tags.push_back(t);
    bytes += b + 1;
  }
  for (const MetricValue& m : metrics) {
    const size_t b = metric_json(m).size();
    if (!fits(current.metrics.size(), limits.max_metrics, b) && entities() > 0) flush();
    current.metrics.push_back(m);
    bytes += b + 1;
  }
  flush();
  return out;
}

std::string log_batch_json(const std::string& run_id, const LogBatch& batch) {
  std::string out = "{\"run_id\":" + json_quote(run_id);
  auto list = [&out](const char* name, const auto& items, auto&& one) {
    if (items.empty()) return;
    out += fmt::format(",\"{}\":[", name);
    bool first = true;
    for (const auto& item : items) {
      if (!first) out += ',';
      first = false;
      out += one(item);
    }
    out += ']';
  };
  list("metrics", batch.metrics, metric_json);
  list("params", batch.params, key_value_json);
  list("tags", batch.tags, key_value_json);
  return out + "}";
}

std::string create_run_json(const std::string& experiment_id, const RunPlan& run,
                            const std::vector<std::pair<std::string, std::string>>& tags) {
  std::string out = "{\"experiment_id\":" + json_quote(experiment_id) + ",\"run_name\":" + json_quote(run.name);
  if (run.start_time_ms > 0) out += fmt::format(",\"start_time\":{}", run.start_time_ms);
  out += ",\"tags\":[";
  for (size_t i = 0; i < tags.size(); ++i) out += (i > 0 ? "," : "") + key_value_json(tags[i]);
  return out + "]}";
}

std::string update_run_json(const std::string& run_id, const RunPlan& run) {
  std::string out = "{\"run_id\":" + json_quote(run_id) + ",\"status\":" + json_quote(run.status);
  if (run.end_time_ms > 0) out += fmt::format(",\"end_time\":{}", run.end_time_ms);
  return out + "}";
}

std::string create_experiment_json(const std::string& name) {
  return "{\"name\":" + json_quote(name) + "}";
}

std::string search_synced_runs_json(const std::string& experiment_id, const std::string& page_token) {
  std::string out = "{\"experiment_ids\":[" + json_quote(experiment_id) +
                    "],\"filter\":" + json_quote(fmt::format("tags.`{}` LIKE '%'", kSyncIdTag)) +
                    ",\"max_results\":1000,\"run_view_type\":\"ACTIVE_ONLY\"";
  if (!page_token.empty()) out += ",\"page_token\":" + json_quote(page_token);
  return out + "}";
}

std::string search_sync_id_json(const std::string& experiment_id, const std::string& sync_id) {
  if (sync_id.find_first_of("'\\") != std::string::npos) return {};
  return "{\"experiment_ids\":[" + json_quote(experiment_id) +
         "],\"filter\":" + json_quote(fmt::format("tags.`{}` = '{}'", kSyncIdTag, sync_id)) +
         ",\"max_results\":100,\"run_view_type\":\"ACTIVE_ONLY\"}";
}

std::string proxied_artifact_root(const std::string& artifact_uri) {
  constexpr std::string_view kScheme = "mlflow-artifacts:";
  if (artifact_uri.rfind(kScheme, 0) != 0) return {};
  std::string_view rest = std::string_view(artifact_uri).substr(kScheme.size());
  if (rest.rfind("//", 0) == 0) {  // an authority: mlflow-artifacts://host:port/path
    const size_t slash = rest.find('/', 2);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  }
  while (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  return std::string(rest);
}

}  // namespace scaleprof::mlflow_sync

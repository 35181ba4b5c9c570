#include "importers/mlflow/mlflow_json.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/number_text.h"

namespace scaleprof::importers {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// A string field, or "" when absent or not a string.
std::string str(object o, const char* key) {
  std::string_view v;
  if (o[key].get_string().get(v) != simdjson::SUCCESS) return {};
  return std::string(v);
}

// MLflow's JSON numbers are 64-bit integers sent as numbers or (proto3 JSON) as strings.
bool int_field(object o, const char* key, int64_t* out) {
  element e;
  if (o[key].get(e) != simdjson::SUCCESS) {
    *out = 0;
    return true;
  }
  if (e.get_int64().get(*out) == simdjson::SUCCESS) return true;
  uint64_t u = 0;
  if (e.get_uint64().get(u) == simdjson::SUCCESS) {
    *out = static_cast<int64_t>(std::min<uint64_t>(u, std::numeric_limits<int64_t>::max()));
    return true;
  }
  double d = 0;
  if (e.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && std::abs(d) < 9e18) {
    *out = static_cast<int64_t>(d);
    return true;
  }
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS) {
    const std::optional<int64_t> v = parse_int64(s);
    if (v) *out = *v;
    return v.has_value();
  }
  return false;
}

bool value_field(object o, double* out) {
  element e;
  if (o["value"].get(e) != simdjson::SUCCESS) return false;
  if (e.get_double().get(*out) == simdjson::SUCCESS) return true;
  int64_t i = 0;
  if (e.get_int64().get(i) == simdjson::SUCCESS) {
    *out = static_cast<double>(i);
    return true;
  }
  uint64_t u = 0;
  if (e.get_uint64().get(u) == simdjson::SUCCESS) {
    *out = static_cast<double>(u);
    return true;
  }
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) return false;
  if (s == "NaN")
    *out = std::numeric_limits<double>::quiet_NaN();
  else if (s == "Infinity")
    *out = std::numeric_limits<double>::infinity();
  else if (s == "-Infinity")
    *out = -std::numeric_limits<double>::infinity();
  else
    return false;
  return true;
}

Result<object> parse_object(simdjson::dom::parser& parser, std::string_view body, const char* what) {
  element doc;
  if (parser.parse(body.data(), body.size()).get(doc) != simdjson::SUCCESS) {
    return Error{fmt::format("{} response is not valid JSON", what)};
  }
  object o;
  if (doc.get_object().get(o) != simdjson::SUCCESS) return Error{fmt::format("{} response is not a JSON object", what)};
  return o;
}

// [{"key": k, "value": v}, ...] into a map (later entries win, as MLflow's own client does).
bool key_values(object data, const char* field, std::map<std::string, std::string>* out) {
  array items;
  const auto err = data[field].get_array().get(items);
  if (err == simdjson::NO_SUCH_FIELD) return true;
  if (err != simdjson::SUCCESS) return false;
  for (element item : items) {
    object kv;
    if (item.get_object().get(kv) != simdjson::SUCCESS) return false;
    std::string key = str(kv, "key");
    if (key.empty()) return false;
    (*out)[std::move(key)] = str(kv, "value");
  }
  return true;
}

// One run object {"info": {...}, "data": {...}} of runs/search, runs/create or runs/get. A deleted run
// gives an empty optional.
Result<std::optional<MlflowRun>> parse_run_object(element item, std::string_view endpoint) {
  object run;
  object info;
  if (item.get_object().get(run) != simdjson::SUCCESS || run["info"].get_object().get(info) != simdjson::SUCCESS) {
    return Error{fmt::format("{} response: a run has no info object", endpoint)};
  }
  if (str(info, "lifecycle_stage") == "deleted") return std::optional<MlflowRun>{};
  MlflowRun r;
  r.run_id = str(info, "run_id");
  if (r.run_id.empty()) r.run_id = str(info, "run_uuid");
  if (r.run_id.empty()) return Error{fmt::format("{} response: a run has no run_id", endpoint)};
  r.name = str(info, "run_name");
  r.status = str(info, "status");
  r.artifact_uri = str(info, "artifact_uri");
  object data;
  if (run["data"].get_object().get(data) == simdjson::SUCCESS) {
    if (!key_values(data, "params", &r.params) || !key_values(data, "tags", &r.tags)) {
      return Error{fmt::format("{} response: run {} has malformed params or tags", endpoint, r.run_id)};
    }
    array metrics;
    if (data["metrics"].get_array().get(metrics) == simdjson::SUCCESS) {
      for (element m : metrics) {
        object mo;
        if (m.get_object().get(mo) != simdjson::SUCCESS) {
          return Error{fmt::format("{} response: malformed metric", endpoint)};
        }
        std::string key = str(mo, "key");
        if (!key.empty()) r.metric_keys.push_back(std::move(key));
      }
    }
  }
  std::sort(r.metric_keys.begin(), r.metric_keys.end());
  r.metric_keys.erase(std::unique(r.metric_keys.begin(), r.metric_keys.end()), r.metric_keys.end());
  if (auto it = r.tags.find("mlflow.parentRunId"); it != r.tags.end()) r.parent_id = it->second;
  if (auto it = r.tags.find("mlflow.runName"); it != r.tags.end() && r.name.empty()) r.name = it->second;
  return std::optional<MlflowRun>{std::move(r)};
}

}  // namespace

Result<std::string> parse_experiment_id_response(std::string_view body) {
  simdjson::dom::parser parser;
  auto doc = parse_object(parser, body, "experiments/get-by-name");
  if (!doc) return doc.error();
  object exp;
  if (doc.value()["experiment"].get_object().get(exp) != simdjson::SUCCESS) {
    return Error{"experiments/get-by-name response has no experiment"};
  }
  std::string id = str(exp, "experiment_id");
  if (id.empty()) return Error{"experiments/get-by-name response has no experiment_id"};
  return id;
}

Result<std::string> parse_create_experiment_response(std::string_view body) {
  simdjson::dom::parser parser;
  auto doc = parse_object(parser, body, "experiments/create");
  if (!doc) return doc.error();
  std::string id = str(doc.value(), "experiment_id");
  if (id.empty()) return Error{"experiments/create response has no experiment_id"};
  return id;
}

Result<MlflowRun> parse_run_response(std::string_view body, std::string_view endpoint) {
  simdjson::dom::parser parser;
  auto doc = parse_object(parser, body, std::string(endpoint).c_str());
  if (!doc) return doc.error();
  element run;
  if (doc.value()["run"].get(run) != simdjson::SUCCESS) return Error{fmt::format("{} response has no run", endpoint)};
  auto r = parse_run_object(run, endpoint);
  if (!r) return r.error();
  if (!r.value()) return Error{fmt::format("{} response: the run is deleted", endpoint)};
  return std::move(*r.value());
}

Result<RunsPage> parse_search_runs_response(std::string_view body) {
  simdjson::dom::parser parser;
  auto doc = parse_object(parser, body, "runs/search");
  if (!doc) return doc.error();
  RunsPage page;
  page.next_page_token = str(doc.value(), "next_page_token");
  array runs;
  const auto err = doc.value()["runs"].get_array().get(runs);
  if (err == simdjson::NO_SUCH_FIELD) return page;  // no runs at all: MLflow leaves the field out
  if (err != simdjson::SUCCESS) return Error{"runs/search response: runs is not an array"};
  for (element item : runs) {
    auto r = parse_run_object(item, "runs/search");
    if (!r) return r.error();
    if (r.value()) page.runs.push_back(std::move(*r.value()));
  }
  return page;
}

Result<MetricPage> parse_metric_history_response(std::string_view body) {
  simdjson::dom::parser parser;
  auto doc = parse_object(parser, body, "metrics/get-history");
  if (!doc) return doc.error();
  MetricPage page;
  page.next_page_token = str(doc.value(), "next_page_token");
  array metrics;
  const auto err = doc.value()["metrics"].get_array().get(metrics);
  if (err == simdjson::NO_SUCH_FIELD) return page;
  if (err != simdjson::SUCCESS) return Error{"metrics/get-history response: metrics is not an array"};
  for (element m : metrics) {
    object mo;
    MetricPoint p;
    if (m.get_object().get(mo) != simdjson::SUCCESS || !value_field(mo, &p.value) ||
        !int_field(mo, "timestamp", &p.timestamp_ms) || !int_field(mo, "step", &p.step)) {
      return Error{fmt::format("metrics/get-history response: malformed point {}", page.points.size() + 1)};
    }
    page.points.push_back(p);
  }
  return page;
}

Result<ArtifactPage> parse_artifact_list_response(std::string_view body) {
  simdjson::dom::parser parser;
  auto doc = parse_object(parser, body, "artifacts/list");
  if (!doc) return doc.error();
  ArtifactPage out;
  out.next_page_token = str(doc.value(), "next_page_token");
  array files;
  const auto err = doc.value()["files"].get_array().get(files);
  if (err == simdjson::NO_SUCH_FIELD) return out;
  if (err != simdjson::SUCCESS) return Error{"artifacts/list response: files is not an array"};
  for (element f : files) {
    object fo;
    if (f.get_object().get(fo) != simdjson::SUCCESS) return Error{"artifacts/list response: malformed entry"};
    ArtifactEntry e;
    e.path = str(fo, "path");
    bool dir = false;
    if (fo["is_dir"].get_bool().get(dir) == simdjson::SUCCESS) e.is_dir = dir;
    if (!int_field(fo, "file_size", &e.file_size)) return Error{"artifacts/list response: malformed file_size"};
    out.files.push_back(std::move(e));
  }
  return out;
}

std::string parse_error_response(std::string_view body) {
  simdjson::dom::parser parser;
  auto doc = parse_object(parser, body, "error");
  if (!doc) return {};
  const std::string code = str(doc.value(), "error_code");
  std::string message = str(doc.value(), "message");
  if (code.empty() && message.empty()) return {};
  // One line: the server's message may hold a traceback.
  const size_t nl = message.find('\n');
  if (nl != std::string::npos) message = message.substr(0, nl);
  return code.empty() ? message : message.empty() ? code : code + ": " + message;
}

}  // namespace scaleprof::importers

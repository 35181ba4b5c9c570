// The JSON bodies of MLflow's REST API 2.0 responses, parsed with simdjson. Separate from the HTTP
// client so the parsing can be tested and fuzzed without a server.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "importers/mlflow/mlflow_store.h"

namespace scaleprof::importers {

struct RunsPage {
  std::vector<MlflowRun> runs;
  std::string next_page_token;  // empty on the last page
};

struct MetricPage {
  std::vector<MetricPoint> points;
  std::string next_page_token;
};

struct ArtifactEntry {
  std::string path;
  bool is_dir = false;
  int64_t file_size = 0;
};

struct ArtifactPage {
  std::vector<ArtifactEntry> files;
  std::string next_page_token;
};

// experiments/get-by-name: {"experiment": {"experiment_id": "1", ...}}.
Result<std::string> parse_experiment_id_response(std::string_view body);
// experiments/create: {"experiment_id": "1"}.
Result<std::string> parse_create_experiment_response(std::string_view body);
// runs/create and runs/get: {"run": {"info": {...}, "data": {...}}}; a deleted run is an error.
Result<MlflowRun> parse_run_response(std::string_view body, std::string_view endpoint);
// runs/search: {"runs": [{"info": {...}, "data": {"metrics": [...], "params": [...], "tags": [...]}}],
// "next_page_token": "..."}. Runs whose lifecycle_stage is "deleted" are left out.
Result<RunsPage> parse_search_runs_response(std::string_view body);
// metrics/get-history: {"metrics": [{"key", "value", "timestamp", "step"}], "next_page_token"}.
// Values may be numbers or the strings "NaN", "Infinity", "-Infinity".
Result<MetricPage> parse_metric_history_response(std::string_view body);
// artifacts/list: {"root_uri": ..., "files": [{"path", "is_dir", "file_size"}], "next_page_token"}.
Result<ArtifactPage> parse_artifact_list_response(std::string_view body);
// An error body {"error_code": "...", "message": "..."} as one line; empty when it is not one.
std::string parse_error_response(std::string_view body);

}  // namespace scaleprof::importers

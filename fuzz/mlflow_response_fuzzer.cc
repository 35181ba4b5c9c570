// Fuzzes what scaleprof reads from MLflow: the REST API's JSON responses and the file store's
// meta.yaml and metric files, and what `mlflow sync` reads back (runs/create, experiments/create). The first byte picks
// the parser; the rest is its input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "importers/mlflow/mlflow_json.h"
#include "importers/mlflow/mlflow_meta.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  using namespace scaleprof::importers;  // NOLINT(google-build-using-namespace): one file, one namespace
  switch (data[0] % 9) {
    case 0:
      (void)parse_experiment_id_response(text);
      break;
    case 1:
      (void)parse_search_runs_response(text);
      break;
    case 2:
      (void)parse_metric_history_response(text);
      break;
    case 3:
      (void)parse_artifact_list_response(text);
      break;
    case 4:
      (void)parse_error_response(text);
      break;
    case 5:
      (void)parse_mlflow_meta(text, "meta.yaml");
      break;
    case 6:
      (void)parse_mlflow_metric_file(text, "metric");
      break;
    case 7:  // runs/create and runs/get (mlflow sync)
      (void)parse_run_response(text, "runs/create");
      break;
    default:  // experiments/create (mlflow sync)
      (void)parse_create_experiment_response(text);
      break;
  }
  return 0;
}

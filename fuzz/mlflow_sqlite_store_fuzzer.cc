// libFuzzer target for MLflow SQLite databases read through scaleprof's store and importer: the
// input bytes are written as a .db file, opened read-only, checked for MLflow's tables, and the
// experiment "exp" is read and rendered as text, CSV, JSON and HTML (no plots). Whatever the bytes
// (a corrupt page, a view or virtual table in place of a table, NULL or text values, huge values):
// no crash, no hang (every query has a deadline), no runaway allocation.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "importers/mlflow/mlflow_importer.h"
#include "importers/mlflow/mlflow_store.h"
#include "report_fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const scaleprof::fuzzing::ScratchRoot root;
  if (!root.ok()) return 0;
  root.write("mlflow.db", input);
  scaleprof::importers::MlflowReadLimits limits;
  limits.max_runs = 1000;
  limits.max_points_per_metric = 100000;
  limits.query_deadline = std::chrono::milliseconds(1000);
  auto store = scaleprof::importers::open_mlflow_sqlite_store(root.path() + "/mlflow.db", limits);
  if (!store) return 0;
  scaleprof::fuzzing::report_mlflow_store(*store.value(), root.path());
  return 0;
}

// libFuzzer target for MLflow's file store read through scaleprof's store and importer: the input,
// cut at "\n===\n", becomes the experiment's meta.yaml, one run's meta.yaml, its params strategy and
// global_world_size, its metric files epoch_time_s, gpu_utilization_percent and gpu_power_W, its
// profiling artifact, and the name of one more param file (keys with '/' are folders), beside a
// fixed good run; then the report is rendered as text, CSV, JSON and HTML (no plots). Whatever the
// bytes: no crash, no hang, no runaway allocation, and every guarantee of report_fuzz_util.h.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "importers/mlflow/mlflow_importer.h"
#include "importers/mlflow/mlflow_store.h"
#include "report_fuzz_util.h"

namespace {

bool plain_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '/' || name.find("..") != std::string_view::npos) {
    return false;
  }
  for (char c : name) {
    if (c == '\0' || c == '\n') return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const scaleprof::fuzzing::ScratchRoot root;
  if (!root.ok()) return 0;
  root.write("1/good/meta.yaml", "run_id: good\nrun_name: base\nstatus: 3\nlifecycle_stage: active\n");
  root.write("1/good/params/strategy", "ddp");
  root.write("1/good/params/global_world_size", "1");
  root.write("1/good/metrics/epoch_time_s", "1000 10 0\n2000 8 1\n3000 8 2\n");
  const std::vector<std::string_view> parts = scaleprof::fuzzing::split_parts(input, 9);
  root.write("1/meta.yaml", std::string("experiment_id: '1'\nname: exp\n") + std::string(parts[0]));
  root.write("1/fz/meta.yaml", parts[1]);
  root.write("1/fz/params/strategy", parts[2]);
  root.write("1/fz/params/global_world_size", parts[3]);
  root.write("1/fz/metrics/epoch_time_s", parts[4]);
  root.write("1/fz/metrics/gpu_utilization_percent", parts[5]);
  root.write("1/fz/metrics/gpu_power_W", parts[6]);
  root.write("1/fz/artifacts/torch_profiling_averages/torch_profiling_averages.csv", parts[7]);
  std::string_view extra = parts[8];
  while (!extra.empty() && extra.back() == '\n') extra.remove_suffix(1);
  if (plain_name(extra)) root.write("1/fz/params/" + std::string(extra), "x");

  scaleprof::importers::MlflowReadLimits limits;
  limits.max_runs = 100;
  limits.max_points_per_metric = 100000;
  auto store = scaleprof::importers::open_mlflow_file_store(root.path(), limits);
  if (!store) return 0;
  scaleprof::fuzzing::report_mlflow_store(*store.value(), root.path());
  return 0;
}

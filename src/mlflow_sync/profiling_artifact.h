// itwinai's per-worker profiling artifact, torch_profiling_averages/torch_profiling_averages.csv,
// rebuilt from a rank's profiler traces with scaleprof's operator table (analysis/operator_table.h,
// torch's key_averages rules). `mlflow sync` uploads it so that itwinai's report and scaleprof's
// MLflow reader find the computation fraction of synced runs where itwinai's runs have it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace scaleprof::mlflow_sync {

inline constexpr const char* kProfilingArtifactPath = "torch_profiling_averages/torch_profiling_averages.csv";

struct ProfilingInput {
  std::vector<std::string> trace_files;  // one rank's traces
  std::string strategy;
  int64_t world_size = 0;
  int64_t rank = 0;
};

// The CSV text: itwinai's columns (name, node_id, self_cuda_time_total, cuda_time_total,
// cuda_time_total_str, calls, strategy, num_gpus, global_rank; times in microseconds) plus
// self_cpu_time_total and cpu_time_total. Rows of several traces of the rank are summed by row.
// A trace that cannot be read is an error naming it.
Result<std::string> profiling_averages_csv(const ProfilingInput& input);

}  // namespace scaleprof::mlflow_sync

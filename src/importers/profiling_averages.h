// itwinai's per-worker operator table (torch.profiler key_averages as CSV: name, node_id,
// self_cuda_time_total, ..., strategy, num_gpus, global_rank), as its CSV layout stores it in
// computation-data/ and its MLflow layout in the artifact
// torch_profiling_averages/torch_profiling_averages.csv. Summed into the computation fraction inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "importers/csv.h"
#include "tables/run_data.h"

namespace scaleprof::importers {

struct ProfilingRowKey {
  std::string strategy;
  int64_t gpus = 0;
};

// True when the file has the columns itwinai's reader expects; otherwise one error naming the file.
bool has_profiling_columns(const CsvFile& csv, std::vector<Diagnostic>* errors);

// Adds every row to the sums `sums_for(strategy, num_gpus)` returns (self device time in µs as ns;
// ProfilerStep* rows as the profiler's own time; ATen/c10/autograd rows as computation) and counts
// each (strategy, num_gpus, global_rank) once as a rank. Files with a self_cpu_time_total column
// (scaleprof's artifact) give CPU-only runs the trace engine's fallback: while no row of the sums
// has self device time, they hold self CPU time (basis kCpuSelf), so a gloo run read back from
// MLflow has the computation fraction its run directory has. Rows with bad numbers are errors naming the
// line, and skipped (itwinai drops them the same way).
void add_profiling_rows(const CsvFile& csv,
                        const std::function<tables::ComputationSums&(const ProfilingRowKey&)>& sums_for,
                        std::vector<Diagnostic>* errors);

}  // namespace scaleprof::importers

#include "importers/profiling_averages.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <set>
#include <tuple>

#include "analysis/computation_fraction.h"
#include "core/number_text.h"
#include "importers/run_data_reader.h"

namespace scaleprof::importers {

namespace {

// Cells as itwinai's pandas writes them: core/number_text.h's kCellNumber (finite numbers, integers
// as "4" or "4.0").
constexpr const char* kColumns[] = {"name", "self_cuda_time_total", "strategy", "num_gpus", "global_rank"};
constexpr const char* kSelfCpuColumn = "self_cpu_time_total";

}  // namespace

bool has_profiling_columns(const CsvFile& csv, std::vector<Diagnostic>* errors) {
  for (const char* c : kColumns) {
    if (csv.column(c) < 0) {
      errors->push_back(Diagnostic{Severity::kError, csv.path + ":1", fmt::format("no column '{}'; file skipped", c)});
      return false;
    }
  }
  return true;
}

void add_profiling_rows(const CsvFile& csv,
                        const std::function<tables::ComputationSums&(const ProfilingRowKey&)>& sums_for,
                        std::vector<Diagnostic>* errors) {
  int c[5];
  for (int i = 0; i < 5; ++i) c[i] = csv.column(kColumns[i]);
  // scaleprof's artifact (mlflow_sync/profiling_artifact.h) adds self CPU time: the basis of the
  // fraction of CPU-only runs, as the trace engine computes it from their traces.
  const int cpu_column = csv.column(kSelfCpuColumn);
  std::set<std::tuple<std::string, int64_t, int64_t>> ranks_seen;
  for (size_t r = 0; r < csv.rows.size(); ++r) {
    const auto& row = csv.rows[r];
    double self_us = 0;
    double cpu_us = 0;
    int64_t gpus = 0;
    int64_t rank = 0;
    if (!parse_double(row[c[1]], &self_us, kCellNumber) || !std::isfinite(self_us) ||
        !parse_int64(row[c[3]], &gpus, kCellNumber) || gpus <= 0 || !parse_int64(row[c[4]], &rank, kCellNumber) ||
        (cpu_column >= 0 && (!parse_double(row[cpu_column], &cpu_us, kCellNumber) || !std::isfinite(cpu_us)))) {
      errors->push_back(Diagnostic{
          Severity::kError, fmt::format("{}:{}", csv.path, csv.lines[r]),
          "self_cuda_time_total, num_gpus, global_rank or self_cpu_time_total is not a valid number; line skipped"});
      continue;
    }
    const bool cpu_out = !(cpu_us >= 0 && cpu_us <= kMaxSelfTimeUs);
    if (!(self_us >= 0 && self_us <= kMaxSelfTimeUs) || cpu_out || gpus > kMaxWorkers) {
      errors->push_back(
          Diagnostic{Severity::kError, fmt::format("{}:{}", csv.path, csv.lines[r]),
                     fmt::format("{} is out of range ({}); line skipped",
                                 gpus > kMaxWorkers ? fmt::format("num_gpus {}", gpus)
                                 : cpu_out          ? fmt::format("self_cpu_time_total {}", cpu_us)
                                                    : fmt::format("self_cuda_time_total {}", self_us),
                                 gpus > kMaxWorkers ? fmt::format("1 to {}", kMaxWorkers) : "0 to 1e12 us")});
      continue;
    }
    ProfilingRowKey key{std::string(trim_blanks(row[c[2]])), gpus};
    tables::ComputationSums& sums = sums_for(key);
    // The basis, as analysis::pooled_fraction chooses it over a run's ranks: device self time as soon
    // as any row has some (sums in CPU time so far are dropped: every row before had no device time,
    // so the device sums are what they would have been), else self CPU time where the file has it.
    if (self_us > 0 && sums.basis == tables::FractionBasis::kCpuSelf) {
      static_cast<tables::SelfTimeSums&>(sums) = tables::SelfTimeSums{};
      sums.basis = tables::FractionBasis::kDeviceSelf;
    } else if (self_us == 0 && cpu_us > 0 && sums.basis == tables::FractionBasis::kDeviceSelf && sums.total_ns == 0) {
      sums.basis = tables::FractionBasis::kCpuSelf;
    }
    const double used_us = sums.basis == tables::FractionBasis::kDeviceSelf ? self_us : cpu_us;
    // Exact: used_us <= 1e12, so ns <= 1e15 < 2^53. The sums are checked all the same.
    const auto ns = static_cast<int64_t>(std::llround(used_us * 1000.0));
    if (!sums.add_checked(analysis::self_time_sums_of_row(row[c[0]], ns))) {  // all or nothing
      errors->push_back(Diagnostic{Severity::kError, fmt::format("{}:{}", csv.path, csv.lines[r]),
                                   "the sum of self_cuda_time_total overflows; line skipped"});
      continue;
    }
    if (ranks_seen.insert({key.strategy, gpus, rank}).second) ++sums.ranks;
  }
}

}  // namespace scaleprof::importers

#include "analysis/computation_fraction.h"

#include <algorithm>

#include "analysis/profiler_steps.h"
#include "core/checked_sum.h"

namespace scaleprof::analysis {

namespace {

// Python's `\s` for str patterns also matches Unicode spaces; trace names are ASCII in practice.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

int64_t self_time(const OperatorRow& row, tables::FractionBasis basis) {
  return basis == tables::FractionBasis::kDeviceSelf ? row.self_device_ns : row.self_cpu_ns;
}

}  // namespace

std::string_view fraction_basis_name(tables::FractionBasis basis) {
  return basis == tables::FractionBasis::kDeviceSelf ? "device_self_time" : "cpu_self_time";
}

bool is_computation_op_name(std::string_view name) {
  for (std::string_view token : {"aten::", "c10::", "autograd::"}) {
    if (name.find(token) != std::string_view::npos) return true;
  }
  for (size_t pos = name.find("at::"); pos != std::string_view::npos; pos = name.find("at::", pos + 1)) {
    if (pos > 0 && is_space(name[pos - 1])) return true;
  }
  return false;
}

bool is_communication_op_name(std::string_view name) {
  // "nccl:reduce" also covers "nccl:reduce_scatter", as the alternation does under re.search.
  for (std::string_view token : {"nccl:all_reduce", "nccl:broadcast", "nccl:reduce", "nccl:all_gather", "nccl:gather",
                                 "cudaStreamWaitEvent", "cudaStreamSynchronize"}) {
    if (name.find(token) != std::string_view::npos) return true;
  }
  return false;
}

bool is_profiler_step_row(std::string_view name) {
  return name == kAllProfilerStepsName || is_profiler_step_name(name);
}

tables::SelfTimeSums self_time_sums_of_row(std::string_view name, int64_t self_ns) {
  tables::SelfTimeSums one;
  one.total_ns = self_ns;
  if (is_profiler_step_row(name)) one.profiler_step_ns = self_ns;
  if (is_computation_op_name(name)) one.computation_ns = self_ns;
  if (is_communication_op_name(name)) one.communication_ns = self_ns;
  return one;
}

FractionParts fraction_parts(const OperatorTable& table) {
  FractionParts out;
  auto add = [](FractionSums* sums, const OperatorRow& row, int64_t v) {
    if (!sums->exact) return;
    sums->exact = sums->add_checked(self_time_sums_of_row(row.name, v));
  };
  for (const OperatorRow& row : table.rows) {
    if (row.self_device_ns > 0) out.has_device_self = true;
    add(&out.device, row, self_time(row, tables::FractionBasis::kDeviceSelf));
    add(&out.cpu, row, self_time(row, tables::FractionBasis::kCpuSelf));
  }
  return out;
}

ComputationFraction pooled_fraction(std::span<const FractionParts> ranks) {
  ComputationFraction out;
  out.basis = std::any_of(ranks.begin(), ranks.end(), [](const FractionParts& p) { return p.has_device_self; })
                  ? tables::FractionBasis::kDeviceSelf
                  : tables::FractionBasis::kCpuSelf;
  for (const FractionParts& p : ranks) {
    const FractionSums& s = out.basis == tables::FractionBasis::kDeviceSelf ? p.device : p.cpu;
    if (!s.exact || !out.add_checked(s)) {
      out.exact = false;
      return out;
    }
  }
  out.fraction = out.computation_ratio();
  return out;
}

ComputationFraction computation_fraction(const std::vector<const OperatorTable*>& tables) {
  std::vector<FractionParts> parts;
  parts.reserve(tables.size());
  for (const OperatorTable* t : tables) parts.push_back(fraction_parts(*t));
  return pooled_fraction(parts);
}

ComputationFraction computation_fraction(const OperatorTable& table) {
  const FractionParts parts = fraction_parts(table);
  return pooled_fraction(std::span<const FractionParts>(&parts, 1));
}

}  // namespace scaleprof::analysis

#include "analysis/computation_fraction.h"

#include "core/checked_sum.h"

namespace scaleprof::analysis {

namespace {

// Python's `\s` for str patterns also matches Unicode spaces; trace names are ASCII in practice.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

int64_t self_time(const OperatorRow& row, FractionBasis basis) {
  return basis == FractionBasis::kDeviceSelf ? row.self_device_ns : row.self_cpu_ns;
}

}  // namespace

std::string_view fraction_basis_name(FractionBasis basis) {
  return basis == FractionBasis::kDeviceSelf ? "device_self_time" : "cpu_self_time";
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

ComputationFraction computation_fraction(const std::vector<const OperatorTable*>& tables) {
  ComputationFraction out;
  out.basis = FractionBasis::kCpuSelf;
  for (const OperatorTable* t : tables) {
    for (const OperatorRow& row : t->rows) {
      if (row.self_device_ns > 0) out.basis = FractionBasis::kDeviceSelf;
    }
  }
  for (const OperatorTable* t : tables) {
    for (const OperatorRow& row : t->rows) {
      const int64_t v = self_time(row, out.basis);
      bool exact = add_checked(&out.total_ns, v);
      if (row.name == "ProfilerStep*") exact &= add_checked(&out.profiler_step_ns, v);
      if (is_computation_op_name(row.name)) exact &= add_checked(&out.computation_ns, v);
      if (is_communication_op_name(row.name)) exact &= add_checked(&out.communication_ns, v);
      if (!exact) {
        out.exact = false;
        return out;
      }
    }
  }
  const int64_t denominator = out.total_ns - out.profiler_step_ns;
  if (denominator > 0) out.fraction = static_cast<double>(out.computation_ns) / static_cast<double>(denominator);
  return out;
}

ComputationFraction computation_fraction(const OperatorTable& table) {
  return computation_fraction(std::vector<const OperatorTable*>{&table});
}

}  // namespace scaleprof::analysis

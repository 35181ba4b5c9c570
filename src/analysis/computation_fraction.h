// Computation fraction, as itwinai's scalability report defines it ("computation vs other").
//
// itwinai (scalability_report/utils.py `get_computation_vs_other_data`, since PR #389) works on the
// rows of torch's key_averages() of every rank, pooled:
//   total       = sum of self_cuda_time_total over all rows
//   overhead    = sum of self_cuda_time_total of rows named "ProfilerStep*"
//   computation = sum of self_cuda_time_total of rows whose name matches `.*(?:aten|\sat|c10|autograd)::`
//                 (re.search: "aten::", whitespace + "at::" as in kernel names "void at::native::...",
//                 "c10::", "autograd::")
//   fraction    = computation / (total - overhead)
// Here the rows come from compute_operator_table, so "all rows" includes kernel rows and device
// user-annotation rows exactly as in torch's table.
//
// CPU-only traces have no device self time at all, and itwinai's fraction would be 0/0. The fallback
// applies the same rule to Self CPU time (basis kCpuSelf), so a gloo/CPU run still gets a comparable
// "share of self time spent in ATen/c10/autograd operators"; it is labelled so it is never mistaken
// for the device-time figure.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/operator_table.h"
#include "tables/self_time_sums.h"

namespace scaleprof::analysis {

std::string_view fraction_basis_name(tables::FractionBasis basis);  // "device_self_time" / "cpu_self_time"

// The row rule, the one place it is written: the sums of one key_averages() row named `name` with
// `self_ns` of self time (traces' operator tables and itwinai's profiling-averages CSV both use it).
// A free function, not a member of tables::SelfTimeSums: the struct is a plain table type (tables/), the rule
// is an analysis.
tables::SelfTimeSums self_time_sums_of_row(std::string_view name, int64_t self_ns);

// Whether a key_averages() row is the profiler's step row, whose time itwinai leaves out of the
// denominator. itwinai matches the name exactly, `name == "ProfilerStep*"`: torch's key_averages()
// renames every "ProfilerStep#N" to that (torch.autograd.profiler_util._rewrite_name, with_wildcard),
// as compute_operator_table does. A table not aggregated that way (a CSV written by other tools) may
// still hold the "ProfilerStep#N" rows themselves: they are the same rows before the renaming, so they
// count too. Nothing else does: "ProfilerStepX" is an ordinary name (the profiling-averages reader
// used to count every name starting with "ProfilerStep").
bool is_profiler_step_row(std::string_view name);

struct ComputationFraction : tables::SelfTimeSums {
  tables::FractionBasis basis = tables::FractionBasis::kDeviceSelf;
  double fraction = std::numeric_limits<double>::quiet_NaN();  // computation_ratio() of the sums
  // False when a pooled sum would leave int64 ns (many ranks of huge traces): the sums and the
  // fraction are then not to be shown (fraction is NaN), never a wrapped value.
  bool exact = true;
};

// itwinai's name rule: the name contains "aten::", "c10::", "autograd::" or whitespace + "at::".
bool is_computation_op_name(std::string_view name);

// itwinai's deprecated communication rule (utils.py `calculate_comp_and_comm_time`, re.search):
// the name contains "nccl:" followed by all_reduce, broadcast, reduce, all_gather, gather or
// reduce_scatter, or "cudaStreamWaitEvent" / "cudaStreamSynchronize". Gloo and RCCL names do not match:
// itwinai's report assumes NCCL, and so does this rule.
bool is_communication_op_name(std::string_view name);

// One table's sums under one basis; `exact` false when one would leave int64 ns.
struct FractionSums : tables::SelfTimeSums {
  bool exact = true;
};

// What the pooled fraction needs of one rank's table, under both bases (the pooled basis depends on
// every rank): kept when ranks are streamed and their tables freed one by one.
struct FractionParts {
  FractionSums device;
  FractionSums cpu;
  bool has_device_self = false;  // some row has self device time > 0
};

FractionParts fraction_parts(const OperatorTable& table);

// Pooled over several ranks, as itwinai groups all ranks of a run. The basis is the device one if any
// row of any table has self device time, else the CPU fallback.
ComputationFraction pooled_fraction(std::span<const FractionParts> ranks);
ComputationFraction computation_fraction(const std::vector<const OperatorTable*>& tables);
ComputationFraction computation_fraction(const OperatorTable& table);

}  // namespace scaleprof::analysis

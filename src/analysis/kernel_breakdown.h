// Kernel breakdown: (1) which kernel types keep the device busy, alone or overlapping, and
// (2) per-kernel duration statistics within each type.
//
// (1) Type partition. The union of COMPUTATION, COMMUNICATION and MEMORY events is taken per type;
// the time axis is then cut wherever any of the three changes, and each busy segment is labelled
// with the set of types active in it ("COMPUTATION overlapping COMMUNICATION", ...). The labelled
// times partition the device's busy time across those three types, so they sum to the union of
// the three unions, not to the kernels' summed durations. OTHER (sync records) is left out, as in
// HTA. Ranks are summed with merge_type_partitions(), as HTA's table is.
//
// (2) Per-kernel statistics: count, sum, mean, min, max and sample standard deviation of the
// duration of every distinct name, per type (OTHER included). top_kernels() keeps the k names
// with the largest sums and folds the rest into one "others" row whose statistics are those of
// the folded events themselves. HTA instead regroups on the per-kernel sums whenever a type has
// more than k names, which replaces each listed kernel's max/min/mean by its sum and its std by 0,
// and describes "others" by its kernels' sums; scaleprof keeps real statistics. Per-type sums are
// the same in both. HTA's second rule (get_gpu_kernel_breakdown's duration_ratio) is kept as an
// option: with more than k names, a name whose running sum (largest first) exceeds the
// duration_ratio-quantile of the running sums is folded too; 1.0 (the CLI's) folds none by it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/distribution.h"
#include "analysis/kernel_classify.h"
#include "trace/event_table.h"

namespace scaleprof::analysis {

// Bits of a type set in the partition.
inline constexpr uint32_t kComputationBit = 1;
inline constexpr uint32_t kCommunicationBit = 2;
inline constexpr uint32_t kMemoryBit = 4;

struct TypeShare {
  uint32_t types = 0;  // set of k*Bit
  int64_t ns = 0;
};

// "COMPUTATION", "COMPUTATION overlapping COMMUNICATION", ... (HTA's order: computation,
// communication, memory).
std::string type_set_label(uint32_t types);

struct KernelStats {
  std::string name;
  KernelType type = KernelType::kComputation;
  bool others = false;    // an "others" row folding the kernels beyond the top k
  int64_t kernels = 1;    // distinct names folded into this row (1 for a named kernel)
  RunningStats duration;  // ns over the events
};

struct KernelBreakdown {
  std::vector<TypeShare> partition;  // non-empty sets only, largest first
  std::vector<KernelStats> kernels;  // every name, by type, then largest sum first, then name
  int64_t busy_ns() const;           // sum of the partition
};

KernelBreakdown kernel_breakdown(const trace::RankTrace& trace, std::span<const uint32_t> rows);

// Adds the partitions of several ranks per type set; largest first.
std::vector<TypeShare> merge_type_partitions(std::span<const std::vector<TypeShare>> partitions);

// The `k` kernels of `type` with the largest sums (k <= 0: all), then one "others" row folding
// the rest if any remain.
std::vector<KernelStats> top_kernels(std::span<const KernelStats> kernels, KernelType type, int k,
                                     double duration_ratio = 1.0);

}  // namespace scaleprof::analysis

#include "analysis/kernel_breakdown.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/device_events.h"
#include "analysis/intervals.h"

namespace scaleprof::analysis {

namespace {

// Partition types in bit order; OTHER has no bit.
constexpr KernelType kPartitionTypes[] = {KernelType::kComputation, KernelType::kCommunication, KernelType::kMemory};

void sort_shares(std::vector<TypeShare>* shares) {
  std::sort(shares->begin(), shares->end(),
            [](const TypeShare& a, const TypeShare& b) { return a.ns != b.ns ? a.ns > b.ns : a.types < b.types; });
}

}  // namespace

std::string type_set_label(uint32_t types) {
  std::string out;
  for (int bit = 0; bit < 3; ++bit) {
    if ((types & (1u << bit)) == 0) continue;
    if (!out.empty()) out += " overlapping ";
    out += kernel_type_name(kPartitionTypes[bit]);
  }
  return out;
}

int64_t KernelBreakdown::busy_ns() const {
  int64_t total = 0;
  for (const TypeShare& s : partition) total += s.ns;
  return total;
}

KernelBreakdown kernel_breakdown(const trace::RankTrace& trace, std::span<const uint32_t> rows) {
  const DeviceEvents dev = select_device_events(trace, rows);
  const trace::EventTable& ev = trace.events;
  KernelBreakdown out;

  // (1) Partition of busy time by the set of active types.
  std::vector<std::vector<Interval>> per_type(3);
  for (size_t k = 0; k < dev.size(); ++k) {
    const auto t = static_cast<size_t>(dev.type[k]);
    if (t < 3) per_type[t].push_back({ev.ts[dev.rows[k]], ev.end(dev.rows[k])});
  }
  for (auto& set : per_type) set = union_intervals(std::move(set));
  int64_t by_mask[8] = {};
  sweep_coverage(per_type, [&](uint32_t mask, int64_t start, int64_t end) { by_mask[mask] += end - start; });
  for (uint32_t mask = 1; mask < 8; ++mask) {
    if (by_mask[mask] > 0) out.partition.push_back({mask, by_mask[mask]});
  }
  sort_shares(&out.partition);

  // (2) Per (type, name) statistics. Names are keyed by id; a name always has the same type
  // except copies/sets/syncs, which are typed by category, so key on both.
  std::unordered_map<uint64_t, size_t> index;
  for (size_t k = 0; k < dev.size(); ++k) {
    const uint32_t r = dev.rows[k];
    const uint64_t key = (static_cast<uint64_t>(ev.name[r]) << 8) | static_cast<uint64_t>(dev.type[k]);
    auto [it, inserted] = index.try_emplace(key, out.kernels.size());
    if (inserted) {
      KernelStats s;
      s.name = std::string(trace.name(r));
      s.type = dev.type[k];
      out.kernels.push_back(std::move(s));
    }
    out.kernels[it->second].duration.add(ev.dur[r]);
  }
  std::sort(out.kernels.begin(), out.kernels.end(), [](const KernelStats& a, const KernelStats& b) {
    if (a.type != b.type) return a.type < b.type;
    if (a.duration.sum != b.duration.sum) return a.duration.sum > b.duration.sum;
    return a.name < b.name;
  });
  return out;
}

std::vector<TypeShare> merge_type_partitions(std::span<const std::vector<TypeShare>> partitions) {
  std::map<uint32_t, int64_t> sum;
  for (const auto& p : partitions) {
    for (const TypeShare& s : p) sum[s.types] += s.ns;
  }
  std::vector<TypeShare> out;
  out.reserve(sum.size());
  for (const auto& [types, ns] : sum) out.push_back({types, ns});
  sort_shares(&out);
  return out;
}

std::vector<KernelStats> top_kernels(std::span<const KernelStats> kernels, KernelType type, int k,
                                     double duration_ratio) {
  std::vector<KernelStats> of_type;
  for (const KernelStats& s : kernels) {
    if (s.type == type) of_type.push_back(s);
  }
  std::stable_sort(of_type.begin(), of_type.end(),
                   [](const KernelStats& a, const KernelStats& b) { return a.duration.sum > b.duration.sum; });
  if (k <= 0 || of_type.size() <= static_cast<size_t>(k)) return of_type;
  if (duration_ratio < 1.0) {
    // HTA's quantile rule: the running sums never decrease (largest first, sums >= 0), so the names
    // it keeps are a prefix: those whose running sum is at most the quantile.
    std::vector<int64_t> running(of_type.size());
    int64_t total = 0;
    for (size_t i = 0; i < of_type.size(); ++i) running[i] = total += of_type[i].duration.sum;
    const double limit = quantile_sorted(running, std::max(0.0, duration_ratio));
    size_t kept = 0;
    while (kept < static_cast<size_t>(k) && static_cast<double>(running[kept]) <= limit) ++kept;
    k = static_cast<int>(kept);
  }
  KernelStats others;
  others.name = "others";
  others.type = type;
  others.others = true;
  others.kernels = 0;
  for (size_t i = static_cast<size_t>(k); i < of_type.size(); ++i) {
    others.duration.merge(of_type[i].duration);
    others.kernels += of_type[i].kernels;
  }
  of_type.resize(static_cast<size_t>(k));
  of_type.push_back(std::move(others));
  return of_type;
}

}  // namespace scaleprof::analysis

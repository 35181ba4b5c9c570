#include "analysis/cupti_counters.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string_view>
#include <unordered_map>

namespace scaleprof::analysis {

namespace {

using trace::Category;

bool is_kernel_launch(const trace::RankTrace& trace, uint32_t row) {
  return trace.events.cat[row] == Category::kCudaRuntime && trace.name(row).starts_with("cudaLaunchKernel");
}

}  // namespace

RankCuptiCounters cupti_counters_with_operators(const trace::RankTrace& trace, std::span<const uint32_t> rows) {
  const trace::EventTable& ev = trace.events;
  RankCuptiCounters out;
  out.rank = trace.rank;
  std::vector<uint32_t> ranges;
  std::vector<uint32_t> launches;
  for (const uint32_t i : rows) {
    if (ev.phase[i] != trace::Phase::kComplete) continue;
    if (ev.cat[i] == Category::kCudaProfilerRange) {
      ranges.push_back(i);
    } else if (is_kernel_launch(trace, i)) {
      launches.push_back(i);
    }
  }
  out.ranges = static_cast<int64_t>(ranges.size());
  out.launches = static_cast<int64_t>(launches.size());
  if (ranges.empty()) return out;
  if (ranges.size() != launches.size()) {
    out.error = fmt::format("{} cuda_profiler_range events but {} cudaLaunchKernel calls: they cannot be paired",
                            ranges.size(), launches.size());
    return out;
  }
  auto by_start = [&](uint32_t a, uint32_t b) { return ev.ts[a] < ev.ts[b]; };
  std::stable_sort(ranges.begin(), ranges.end(), by_start);
  std::stable_sort(launches.begin(), launches.end(), by_start);

  // The operator stack of every launch: per thread, the cpu_op calls and the launches by start (a
  // longer call first, calls before launches), swept with a stack of the calls still holding.
  std::unordered_map<uint32_t, size_t> launch_index;  // EventTable row -> position in `launches`
  launch_index.reserve(launches.size());
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_track;
  for (size_t k = 0; k < launches.size(); ++k) {
    launch_index.emplace(launches[k], k);
    by_track[ev.track[launches[k]]].push_back(launches[k]);
  }
  for (const uint32_t i : rows) {
    if (ev.cat[i] == Category::kCpuOp && ev.phase[i] == trace::Phase::kComplete) {
      auto found = by_track.find(ev.track[i]);
      if (found != by_track.end()) found->second.push_back(i);
    }
  }
  std::vector<std::vector<std::string>> stacks(launches.size());
  std::vector<uint32_t> open;
  for (auto& [track, events] : by_track) {
    std::stable_sort(events.begin(), events.end(), [&](uint32_t a, uint32_t b) {
      if (ev.ts[a] != ev.ts[b]) return ev.ts[a] < ev.ts[b];
      if (ev.end(a) != ev.end(b)) return ev.end(a) > ev.end(b);
      return ev.cat[a] == Category::kCpuOp && ev.cat[b] != Category::kCpuOp;
    });
    open.clear();
    for (const uint32_t i : events) {
      while (!open.empty() && ev.end(open.back()) < ev.end(i)) open.pop_back();
      if (ev.cat[i] == Category::kCpuOp) {
        open.push_back(i);
        continue;
      }
      std::vector<std::string>& stack = stacks[launch_index.at(i)];
      for (const uint32_t op : open) stack.emplace_back(trace.name(op));
    }
  }

  // The counters of each range event, by its row.
  std::unordered_map<uint32_t, size_t> kernel_of_row;
  kernel_of_row.reserve(ranges.size());
  out.kernels.resize(ranges.size());
  for (size_t k = 0; k < ranges.size(); ++k) {
    const uint32_t i = ranges[k];
    kernel_of_row.emplace(i, k);
    CuptiKernel& kernel = out.kernels[k];
    kernel.name = std::string(trace.name(i));
    kernel.pid = trace.tracks.pid[ev.track[i]];
    kernel.tid = trace.tracks.tid[ev.track[i]];
    kernel.ts_ns = ev.ts[i];
    kernel.dur_ns = ev.dur[i];
    kernel.op_stack = std::move(stacks[k]);
  }
  const trace::CounterArgsTable& args = trace.counter_args;
  std::unordered_map<trace::StringId, size_t> counter_index;
  for (size_t a = 0; a < args.size(); ++a) {
    auto kernel = kernel_of_row.find(args.event[a]);
    if (kernel == kernel_of_row.end()) continue;
    auto [slot, added] = counter_index.try_emplace(args.name[a], out.counter_names.size());
    if (added) out.counter_names.emplace_back(trace.strings.view(args.name[a]));
    std::vector<double>& values = out.kernels[kernel->second].counters;
    if (values.size() <= slot->second) values.resize(slot->second + 1, std::numeric_limits<double>::quiet_NaN());
    values[slot->second] = args.value[a];
  }
  for (CuptiKernel& k : out.kernels)
    k.counters.resize(out.counter_names.size(), std::numeric_limits<double>::quiet_NaN());
  return out;
}

}  // namespace scaleprof::analysis

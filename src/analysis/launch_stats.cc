#include "analysis/launch_stats.h"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "analysis/device_events.h"

namespace scaleprof::analysis {

bool is_launch_api_name(std::string_view name) {
  static constexpr std::array<std::string_view, 15> kNames = {
      "cudaLaunchKernel",
      "cudaLaunchKernelExC",
      "cudaLaunchCooperativeKernel",
      "cuLaunchKernel",
      "cuLaunchKernelEx",
      "cudaMemcpyAsync",
      "cudaMemsetAsync",
      "hipLaunchKernel",
      "hipExtModuleLaunchKernel",
      "hipModuleLaunchKernel",
      "hipExtLaunchKernel",
      "hipMemcpyAsync",
      "hipMemsetAsync",
      "hipMemcpyWithStream",
      "runFunction - job_prep_and_submit_for_execution",  // MTIA
  };
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

std::vector<KernelLaunch> kernel_launches(const trace::RankTrace& trace, std::span<const uint32_t> rows) {
  const trace::EventTable& ev = trace.events;
  // Decide once per distinct name, not per event.
  std::vector<int8_t> launch_name(trace.strings.size(), -1);
  auto is_launch = [&](uint32_t r) {
    int8_t& cached = launch_name[ev.name[r]];
    if (cached < 0) cached = is_launch_api_name(trace.name(r)) ? 1 : 0;
    return cached == 1;
  };

  std::unordered_map<int64_t, uint32_t> launch_by_correlation;
  std::vector<uint32_t> device;
  for (uint32_t r : rows) {
    if (ev.correlation[r] < 0) continue;
    if (is_device_work(ev.cat[r])) {
      device.push_back(r);
    } else if (trace::is_runtime_category(ev.cat[r]) && is_launch(r)) {
      launch_by_correlation.try_emplace(ev.correlation[r], r);
    }
  }

  std::vector<KernelLaunch> out;
  for (uint32_t d : device) {
    auto it = launch_by_correlation.find(ev.correlation[d]);
    if (it == launch_by_correlation.end()) continue;
    const uint32_t h = it->second;
    KernelLaunch l;
    l.correlation = ev.correlation[d];
    l.launch_row = h;
    l.device_row = d;
    l.cpu_duration_ns = ev.dur[h];
    l.gpu_duration_ns = ev.dur[d];
    l.launch_delay_ns = std::max<int64_t>(0, ev.ts[d] - ev.end(h));
    out.push_back(l);
  }
  std::sort(out.begin(), out.end(), [&](const KernelLaunch& a, const KernelLaunch& b) {
    if (ev.ts[a.launch_row] != ev.ts[b.launch_row]) return ev.ts[a.launch_row] < ev.ts[b.launch_row];
    if (a.launch_row != b.launch_row) return a.launch_row < b.launch_row;
    return a.device_row < b.device_row;
  });
  return out;
}

LaunchSummary summarize_launches(std::span<const KernelLaunch> launches) {
  std::vector<int64_t> cpu, gpu, delay;
  cpu.reserve(launches.size());
  gpu.reserve(launches.size());
  delay.reserve(launches.size());
  for (const KernelLaunch& l : launches) {
    cpu.push_back(l.cpu_duration_ns);
    gpu.push_back(l.gpu_duration_ns);
    delay.push_back(l.launch_delay_ns);
  }
  return {describe(std::move(cpu)), describe(std::move(gpu)), describe(std::move(delay))};
}

}  // namespace scaleprof::analysis

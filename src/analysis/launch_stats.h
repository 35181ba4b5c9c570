// Kernel launch statistics: for every launch API call, how long the host spent in it, how long
// the launched work ran, and how long the work waited to start after the call returned.
//
// A launch is a host event whose name is a launch API (is_launch_api_name). It is joined on its
// correlation id with the device work it enqueued (an inner join, as in HTA: a launch without
// device work in the window gives no row; a call that enqueued several gives one row each).
//   launch delay = device start - (launch start + launch duration), clipped at 0 (the device may
//                  start the work before the call returns).
// HTA's list is cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync, cudaMemsetAsync (and
// MTIA's runFunction); scaleprof adds the driver API (cuLaunchKernel, cuLaunchKernelEx, used by
// Triton), cooperative launches and the ROCm launches (docs/differences-from-hta.md).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/distribution.h"
#include "trace/event_table.h"

namespace scaleprof::analysis {

bool is_launch_api_name(std::string_view name);

struct KernelLaunch {
  int64_t correlation = trace::kNone;
  uint32_t launch_row = 0;  // host event (EventTable row)
  uint32_t device_row = 0;  // device event
  int64_t cpu_duration_ns = 0;
  int64_t gpu_duration_ns = 0;
  int64_t launch_delay_ns = 0;
};

// Every launch in the window, ordered by launch start (file order among equal starts).
std::vector<KernelLaunch> kernel_launches(const trace::RankTrace& trace, std::span<const uint32_t> rows);

struct LaunchSummary {
  Distribution cpu_duration;  // ns
  Distribution gpu_duration;
  Distribution launch_delay;
};

LaunchSummary summarize_launches(std::span<const KernelLaunch> launches);

}  // namespace scaleprof::analysis

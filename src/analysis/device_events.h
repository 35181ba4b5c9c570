// Which rows are device work, and the device work of one rank with its kernel types.
//
// Device work is recognised by category, in one place (device_event_kind) that every analysis
// uses: CUDA and ROCm kernels, copies and sets (Kineto writes ROCm's under the same `kernel`,
// `gpu_memcpy`, `gpu_memset` categories, launched by `cuda_runtime` hip* calls), sync records, and
// MTIA device events (`mtia_ccp_events`: kernels, job/packet/PE executions and `dma_request`
// copies, launched by `mtia_runtime` calls). HTA instead takes every event whose `stream` argument is not -1, which
// also takes host ops that carry a stream argument (Inductor's Triton cpu_op, stream 0) as GPU kernels; a category test
// keeps them on the host. gpu_user_annotation spans are not work of their own (they label kernels that are already
// counted), and carry no stream, so neither tool counts them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/kernel_classify.h"
#include "trace/event_table.h"

namespace scaleprof::analysis {

// What a device event is, by its category.
enum class DeviceEventKind : uint8_t {
  kNotDevice,  // host events, and gpu_user_annotation spans (labels over work counted elsewhere)
  kKernel,     // kernel (CUDA, ROCm)
  kMemcpy,     // gpu_memcpy
  kMemset,     // gpu_memset
  kMtia,       // mtia_ccp_events: any MTIA device work (its name tells kernel from dma)
  kSync,       // cuda_sync: a host wait recorded on a stream, not work on it
};

// Inline: the analyses ask it of every one of millions of rows.
inline DeviceEventKind device_event_kind(trace::Category c) {
  using trace::Category;
  switch (c) {
    case Category::kKernel:
      return DeviceEventKind::kKernel;
    case Category::kGpuMemcpy:
      return DeviceEventKind::kMemcpy;
    case Category::kGpuMemset:
      return DeviceEventKind::kMemset;
    case Category::kMtiaCcpEvents:
      return DeviceEventKind::kMtia;
    case Category::kCudaSync:
      return DeviceEventKind::kSync;
    default:
      return DeviceEventKind::kNotDevice;
  }
}

// Kernels, copies, sets, sync records, MTIA device events.
inline bool is_device_work(trace::Category c) {
  return device_event_kind(c) != DeviceEventKind::kNotDevice;
}

// Device work that occupies a stream: device work minus sync records, which mark a host wait on
// the stream rather than work on it (HTA's idle-time analysis excludes them the same way, PR #149).
inline bool is_stream_work(trace::Category c) {
  const DeviceEventKind k = device_event_kind(c);
  return k != DeviceEventKind::kNotDevice && k != DeviceEventKind::kSync;
}

// The device work among `rows` of one rank, sorted by start time (file order among equal starts),
// with the kernel type of each.
struct DeviceEvents {
  std::vector<uint32_t> rows;
  std::vector<KernelType> type;  // parallel to rows

  size_t size() const { return rows.size(); }
};

DeviceEvents select_device_events(const trace::RankTrace& trace, std::span<const uint32_t> rows);

}  // namespace scaleprof::analysis

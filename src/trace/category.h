// Event categories of Kineto traces, current names and the 2021 aliases mapped onto one enum.
#pragma once

#include <cstdint>
#include <string_view>

namespace scaleprof::trace {

enum class Category : uint8_t {
  kUnknown = 0,        // a `cat` this reader does not know; the raw name is kept in cat_name
  kCpuOp,              // cpu_op, Operator (2021)
  kUserAnnotation,     // user_annotation (record_function, ProfilerStep#N)
  kGpuUserAnnotation,  // gpu_user_annotation
  kKernel,             // kernel, Kernel (2021)
  kGpuMemcpy,          // gpu_memcpy, Memcpy (2021)
  kGpuMemset,          // gpu_memset, Memset (2021)
  kCudaRuntime,        // cuda_runtime, Runtime (2021), and the other *_runtime kinds
  kCudaDriver,         // cuda_driver and the other *_driver kinds
  kCudaSync,           // cuda_sync
  kPythonFunction,     // python_function
  kCpuInstantEvent,    // cpu_instant_event ([memory], [OutOfMemory])
  kTrace,              // Trace (the profiler span)
  kOverhead,           // overhead
  kCollectiveComm,     // collective_comm
  kCudaProfilerRange,  // cuda_profiler_range (CUPTI range profiler counters)
  kMtiaCcpEvents,      // mtia_ccp_events (device work on MTIA)
  kNone,               // event without a `cat` key
};

inline constexpr int kCategoryCount = static_cast<int>(Category::kNone) + 1;

// Maps a `cat` string to its category (case-sensitive, as Kineto writes them).
Category category_from_name(std::string_view cat);
// The canonical (current) name of a category.
std::string_view category_name(Category c);

// Work executed on a device: kernels, copies, sets, sync records, device annotations.
inline bool is_device_category(Category c) {
  return c == Category::kKernel || c == Category::kGpuMemcpy || c == Category::kGpuMemset || c == Category::kCudaSync ||
         c == Category::kGpuUserAnnotation || c == Category::kMtiaCcpEvents;
}
// Host-side API calls that enqueue device work (runtime and driver).
inline bool is_runtime_category(Category c) {
  return c == Category::kCudaRuntime || c == Category::kCudaDriver;
}
// Host-side operators and annotations that nest by interval on a thread.
inline bool is_cpu_op_category(Category c) {
  return c == Category::kCpuOp || c == Category::kUserAnnotation;
}

}  // namespace scaleprof::trace

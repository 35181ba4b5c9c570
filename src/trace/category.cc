#include "trace/category.h"

#include <array>
#include <utility>

namespace scaleprof::trace {

namespace {

struct Alias {
  std::string_view name;
  Category category;
};

constexpr std::array kAliases = {
    Alias{"cpu_op", Category::kCpuOp},
    Alias{"Operator", Category::kCpuOp},
    Alias{"user_annotation", Category::kUserAnnotation},
    Alias{"gpu_user_annotation", Category::kGpuUserAnnotation},
    Alias{"kernel", Category::kKernel},
    Alias{"Kernel", Category::kKernel},
    Alias{"gpu_memcpy", Category::kGpuMemcpy},
    Alias{"Memcpy", Category::kGpuMemcpy},
    Alias{"gpu_memset", Category::kGpuMemset},
    Alias{"Memset", Category::kGpuMemset},
    Alias{"cuda_runtime", Category::kCudaRuntime},
    Alias{"Runtime", Category::kCudaRuntime},
    Alias{"xpu_runtime", Category::kCudaRuntime},
    Alias{"mtia_runtime", Category::kCudaRuntime},
    Alias{"privateuse1_runtime", Category::kCudaRuntime},
    Alias{"glow_runtime", Category::kCudaRuntime},
    Alias{"cuda_driver", Category::kCudaDriver},
    Alias{"xpu_driver", Category::kCudaDriver},
    Alias{"privateuse1_driver", Category::kCudaDriver},
    Alias{"cuda_sync", Category::kCudaSync},
    Alias{"python_function", Category::kPythonFunction},
    Alias{"cpu_instant_event", Category::kCpuInstantEvent},
    Alias{"Trace", Category::kTrace},
    Alias{"overhead", Category::kOverhead},
    Alias{"collective_comm", Category::kCollectiveComm},
    Alias{"cuda_profiler_range", Category::kCudaProfilerRange},
    Alias{"mtia_ccp_events", Category::kMtiaCcpEvents},
};

constexpr std::array<std::string_view, kCategoryCount> kNames = {
    "unknown",    "cpu_op",       "user_annotation", "gpu_user_annotation", "kernel",          "gpu_memcpy",
    "gpu_memset", "cuda_runtime", "cuda_driver",     "cuda_sync",           "python_function", "cpu_instant_event",
    "Trace",      "overhead",     "collective_comm", "cuda_profiler_range", "mtia_ccp_events", "",
};

}  // namespace

Category category_from_name(std::string_view cat) {
  for (const Alias& a : kAliases) {
    if (a.name == cat) return a.category;
  }
  return Category::kUnknown;
}

std::string_view category_name(Category c) {
  return kNames[static_cast<size_t>(c)];
}

}  // namespace scaleprof::trace

#include "collect/gpu_library.h"

#include <fmt/format.h>

namespace scaleprof::collect {

Result<std::unique_ptr<GpuLibrary>> load_gpu_library(const Environment& env) {
  std::string tried;
  auto nvml = load_nvml(env.non_empty("SCALEPROF_NVML_LIBRARY").value_or(""));
  if (nvml) return nvml;
  tried = nvml.error().message;
  auto rocm = load_rocm_smi(env.non_empty("SCALEPROF_ROCM_SMI_LIBRARY").value_or(""));
  if (rocm) return rocm;
  tried += "; " + rocm.error().message;
  return Error{fmt::format("no GPU library found ({})", tried)};
}

}  // namespace scaleprof::collect

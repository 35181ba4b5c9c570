#include "collect/gpu_library.h"

#include <fmt/format.h>

#include "core/number_text.h"

namespace scaleprof::collect {

Result<std::optional<int64_t>> numeric_device_index(const std::string& id, int64_t count, const std::string& library) {
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) return std::optional<int64_t>();
  const std::optional<int64_t> index = parse_int64(id);
  if (!index || *index >= count) {
    return Error{fmt::format("GPU {} is not among the {} GPUs {} sees", id, count, library), ErrorKind::kNotFound};
  }
  return index;
}

Result<std::unique_ptr<GpuLibrary>> load_gpu_library(const Environment& env) {
  std::string tried;
  auto nvml = load_nvml(env.non_empty("SCALEPROF_NVML_LIBRARY").value_or(""));
  if (nvml) return nvml;
  tried = nvml.error().message;
  auto rocm = load_rocm_smi(env.non_empty("SCALEPROF_ROCM_SMI_LIBRARY").value_or(""));
  if (rocm) return rocm;
  tried += "; " + rocm.error().message;
  return Error{fmt::format("no GPU library found ({})", tried), ErrorKind::kNotFound};
}

}  // namespace scaleprof::collect

// The GPU driver libraries, loaded at run time with dlopen so scaleprof builds and runs on machines
// without them: NVML (libnvidia-ml.so.1) for NVIDIA, ROCm SMI (librocm_smi64.so) for AMD. Symbols are
// resolved by name with dlsym against our own declarations of the documented C API.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collect/environment.h"
#include "core/result.h"

namespace scaleprof::collect {

// One reading of one device; what the driver cannot give is nullopt.
struct GpuReading {
  std::optional<double> utilization_pct;
  std::optional<double> power_w;
  std::optional<int64_t> memory_used_bytes;
  std::optional<double> energy_counter_j;  // the driver's cumulative energy, absolute
  std::optional<int64_t> sm_clock_mhz;
  std::optional<uint64_t> throttle_reasons;  // NVML's clock event reasons mask (core/clock_event_reasons.h)
};

class GpuLibrary {
 public:
  virtual ~GpuLibrary() = default;
  virtual std::string name() const = 0;  // "NVML (path)" or "ROCm SMI (path)"
  virtual int64_t device_count() const = 0;
  // The driver index of a *_VISIBLE_DEVICES entry: an index, or a UUID ("GPU-...").
  virtual Result<int64_t> device_index(const std::string& id) const = 0;
  // Reads one device. Not thread safe against itself: one monitor thread per library object.
  virtual GpuReading read(int64_t device) = 0;
};

// A numeric *_VISIBLE_DEVICES entry ("0", "12") as a device index below `count`; nullopt when the
// entry is not all digits (a UUID, to be looked up by the library). Digits that do not fit or reach
// past `count` ("99999999999999999999") are an error naming the entry and `library`.
Result<std::optional<int64_t>> numeric_device_index(const std::string& id, int64_t count, const std::string& library);

Result<std::unique_ptr<GpuLibrary>> load_nvml(const std::string& path);
Result<std::unique_ptr<GpuLibrary>> load_rocm_smi(const std::string& path);

// The first library that loads: SCALEPROF_NVML_LIBRARY (or libnvidia-ml.so.1), then
// SCALEPROF_ROCM_SMI_LIBRARY (or librocm_smi64.so). When none does, the error reads
// "no GPU library found (tried ...: reason; ...)".
Result<std::unique_ptr<GpuLibrary>> load_gpu_library(const Environment& env);

}  // namespace scaleprof::collect

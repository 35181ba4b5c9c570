// NVIDIA through NVML, loaded at run time. The declarations below are our own, written from NVML's
// public API reference (return codes, struct layouts, units): milliwatts, millijoules, bytes, percent.
#include <fmt/format.h>

#include <vector>

#include "collect/gpu_library.h"
#include "core/shared_library.h"

namespace scaleprof::collect {

namespace {

namespace nvml {

using Return = int;  // nvmlReturn_t
constexpr Return kSuccess = 0;
using Device = struct DeviceOpaque*;  // nvmlDevice_t
struct Utilization {                  // nvmlUtilization_t
  unsigned int gpu;
  unsigned int memory;
};
struct Memory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using CountFn = Return (*)(unsigned int*);
using HandleByIndexFn = Return (*)(unsigned int, Device*);
using HandleByUuidFn = Return (*)(const char*, Device*);
using IndexFn = Return (*)(Device, unsigned int*);
using UtilizationFn = Return (*)(Device, Utilization*);
using PowerFn = Return (*)(Device, unsigned int*);
using MemoryFn = Return (*)(Device, Memory*);
using EnergyFn = Return (*)(Device, unsigned long long*);
using ClockInfoFn = Return (*)(Device, int, unsigned int*);  // nvmlClockType_t is a C enum
using ClockReasonsFn = Return (*)(Device, unsigned long long*);
constexpr int kClockSm = 1;  // NVML_CLOCK_SM
using ErrorStringFn = const char* (*)(Return);

}  // namespace nvml

class NvmlLibrary final : public GpuLibrary {
 public:
  explicit NvmlLibrary(SharedLibrary lib) : lib_(std::move(lib)) {}
  ~NvmlLibrary() override {
    if (initialized_) shutdown_();
  }
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  Status init() {
    auto init = lib_.function<nvml::InitFn>("nvmlInit_v2");
    shutdown_ = lib_.function<nvml::ShutdownFn>("nvmlShutdown");
    auto count = lib_.function<nvml::CountFn>("nvmlDeviceGetCount_v2");
    auto by_index = lib_.function<nvml::HandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2");
    by_uuid_ = lib_.function<nvml::HandleByUuidFn>("nvmlDeviceGetHandleByUUID");
    index_of_ = lib_.function<nvml::IndexFn>("nvmlDeviceGetIndex");
    utilization_ = lib_.function<nvml::UtilizationFn>("nvmlDeviceGetUtilizationRates");
    power_ = lib_.function<nvml::PowerFn>("nvmlDeviceGetPowerUsage");
    memory_ = lib_.function<nvml::MemoryFn>("nvmlDeviceGetMemoryInfo");
    energy_ = lib_.function<nvml::EnergyFn>("nvmlDeviceGetTotalEnergyConsumption");
    error_string_ = lib_.function<nvml::ErrorStringFn>("nvmlErrorString");
    clock_info_ = lib_.function<nvml::ClockInfoFn>("nvmlDeviceGetClockInfo");
    // Renamed in NVML 12.2 (R535); drivers before it have only the "throttle" name, later ones keep it
    // as a deprecated alias, and either may be absent.
    clock_reasons_ = lib_.function<nvml::ClockReasonsFn>("nvmlDeviceGetCurrentClocksEventReasons");
    if (clock_reasons_ == nullptr) {
      clock_reasons_ = lib_.function<nvml::ClockReasonsFn>("nvmlDeviceGetCurrentClocksThrottleReasons");
    }
    if (init == nullptr || shutdown_ == nullptr || count == nullptr || by_index == nullptr) {
      return Error{
          fmt::format("{}: not an NVML library (nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2 or "
                      "nvmlDeviceGetHandleByIndex_v2 missing)",
                      lib_.path())};
    }
    if (nvml::Return r = init(); r != nvml::kSuccess) {
      return Error{fmt::format("{}: nvmlInit_v2 failed: {}", lib_.path(), describe(r))};
    }
    initialized_ = true;
    unsigned int n = 0;
    if (nvml::Return r = count(&n); r != nvml::kSuccess) {
      return Error{fmt::format("{}: nvmlDeviceGetCount_v2 failed: {}", lib_.path(), describe(r))};
    }
    devices_.resize(n);
    has_energy_.assign(n, energy_ != nullptr);
    has_clock_.assign(n, clock_info_ != nullptr);
    has_reasons_.assign(n, clock_reasons_ != nullptr);
    for (unsigned int i = 0; i < n; ++i) {
      if (nvml::Return r = by_index(i, &devices_[i]); r != nvml::kSuccess) {
        return Error{fmt::format("{}: no handle for GPU {}: {}", lib_.path(), i, describe(r))};
      }
    }
    return Ok{};
  }

  std::string name() const override { return fmt::format("NVML ({})", lib_.path()); }
  int64_t device_count() const override { return static_cast<int64_t>(devices_.size()); }

  Result<int64_t> device_index(const std::string& id) const override {
    auto numeric = numeric_device_index(id, device_count(), "NVML");
    if (!numeric) return numeric.error();
    if (numeric.value()) return *numeric.value();
    nvml::Device handle = nullptr;
    unsigned int index = 0;
    if (by_uuid_ == nullptr || index_of_ == nullptr || by_uuid_(id.c_str(), &handle) != nvml::kSuccess ||
        index_of_(handle, &index) != nvml::kSuccess) {
      return Error{fmt::format("GPU '{}' is not a GPU index or UUID NVML knows", id), ErrorKind::kNotFound};
    }
    return static_cast<int64_t>(index);
  }

  GpuReading read(int64_t device) override {
    GpuReading out;
    if (device < 0 || device >= device_count()) return out;
    nvml::Device d = devices_[device];
    nvml::Utilization util{};
    if (utilization_ != nullptr && utilization_(d, &util) == nvml::kSuccess) out.utilization_pct = util.gpu;
    unsigned int milliwatts = 0;
    if (power_ != nullptr && power_(d, &milliwatts) == nvml::kSuccess) out.power_w = milliwatts * 1e-3;
    nvml::Memory mem{};
    if (memory_ != nullptr && memory_(d, &mem) == nvml::kSuccess) out.memory_used_bytes = mem.used;
    if (has_energy_[device]) {
      unsigned long long millijoules = 0;
      if (energy_(d, &millijoules) == nvml::kSuccess) {
        out.energy_counter_j = static_cast<double>(millijoules) * 1e-3;
      } else {
        // Older GPUs (before Volta) answer NOT_SUPPORTED: stop asking, integrate power instead.
        has_energy_[device] = false;
      }
    }
    // A device that answers NOT_SUPPORTED (or anything else) once is not asked again: sampling stays
    // cheap, and the column stays empty for it.
    if (has_clock_[device]) {
      unsigned int mhz = 0;
      if (clock_info_(d, nvml::kClockSm, &mhz) == nvml::kSuccess) {
        out.sm_clock_mhz = mhz;
      } else {
        has_clock_[device] = false;
      }
    }
    if (has_reasons_[device]) {
      unsigned long long mask = 0;
      if (clock_reasons_(d, &mask) == nvml::kSuccess) {
        out.throttle_reasons = mask;
      } else {
        has_reasons_[device] = false;
      }
    }
    return out;
  }

 private:
  std::string describe(nvml::Return r) const {
    const char* text = error_string_ != nullptr ? error_string_(r) : nullptr;
    return text != nullptr ? fmt::format("{} (code {})", text, r) : fmt::format("code {}", r);
  }

  SharedLibrary lib_;
  bool initialized_ = false;
  nvml::ShutdownFn shutdown_ = nullptr;
  nvml::HandleByUuidFn by_uuid_ = nullptr;
  nvml::IndexFn index_of_ = nullptr;
  nvml::UtilizationFn utilization_ = nullptr;
  nvml::PowerFn power_ = nullptr;
  nvml::MemoryFn memory_ = nullptr;
  nvml::EnergyFn energy_ = nullptr;
  nvml::ErrorStringFn error_string_ = nullptr;
  nvml::ClockInfoFn clock_info_ = nullptr;
  nvml::ClockReasonsFn clock_reasons_ = nullptr;
  std::vector<nvml::Device> devices_;
  std::vector<bool> has_energy_;
  std::vector<bool> has_clock_;
  std::vector<bool> has_reasons_;
};

}  // namespace

Result<std::unique_ptr<GpuLibrary>> load_nvml(const std::string& path) {
  auto lib = SharedLibrary::open(path.empty() ? "libnvidia-ml.so.1" : path);
  if (!lib) return lib.error();
  auto nvml_lib = std::make_unique<NvmlLibrary>(std::move(lib.value()));
  if (Status s = nvml_lib->init(); !s) return s.error();
  return std::unique_ptr<GpuLibrary>(std::move(nvml_lib));
}

}  // namespace scaleprof::collect

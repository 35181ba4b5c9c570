// AMD through ROCm SMI (librocm_smi64.so), loaded at run time. Declarations are our own, from the
// ROCm SMI reference: power in microwatts, energy counter ticks times a resolution in microjoules.
#include <fmt/format.h>

#include <cstdio>

#include "collect/gpu_library.h"
#include "core/shared_library.h"

namespace scaleprof::collect {

namespace {

namespace rsmi {

using Status = int;  // rsmi_status_t
constexpr Status kSuccess = 0;
constexpr int kMemTypeVram = 0;  // RSMI_MEM_TYPE_VRAM

using InitFn = Status (*)(uint64_t);
using ShutdownFn = Status (*)();
using CountFn = Status (*)(uint32_t*);
using BusyFn = Status (*)(uint32_t, uint32_t*);
using PowerAveFn = Status (*)(uint32_t, uint32_t, uint64_t*);
using SocketPowerFn = Status (*)(uint32_t, uint64_t*);
using MemoryFn = Status (*)(uint32_t, int, uint64_t*);
using EnergyFn = Status (*)(uint32_t, uint64_t*, float*, uint64_t*);
using UniqueIdFn = Status (*)(uint32_t, uint64_t*);

}  // namespace rsmi

class RocmSmiLibrary final : public GpuLibrary {
 public:
  explicit RocmSmiLibrary(SharedLibrary lib) : lib_(std::move(lib)) {}
  ~RocmSmiLibrary() override {
    if (initialized_) shutdown_();
  }
  RocmSmiLibrary(const RocmSmiLibrary&) = delete;
  RocmSmiLibrary& operator=(const RocmSmiLibrary&) = delete;

  Status init() {
    auto init = lib_.function<rsmi::InitFn>("rsmi_init");
    shutdown_ = lib_.function<rsmi::ShutdownFn>("rsmi_shut_down");
    auto count = lib_.function<rsmi::CountFn>("rsmi_num_monitor_devices");
    busy_ = lib_.function<rsmi::BusyFn>("rsmi_dev_busy_percent_get");
    power_ave_ = lib_.function<rsmi::PowerAveFn>("rsmi_dev_power_ave_get");
    socket_power_ = lib_.function<rsmi::SocketPowerFn>("rsmi_dev_current_socket_power_get");
    memory_ = lib_.function<rsmi::MemoryFn>("rsmi_dev_memory_usage_get");
    energy_ = lib_.function<rsmi::EnergyFn>("rsmi_dev_energy_count_get");
    unique_id_ = lib_.function<rsmi::UniqueIdFn>("rsmi_dev_unique_id_get");
    if (init == nullptr || shutdown_ == nullptr || count == nullptr) {
      return Error{
          fmt::format("{}: not a ROCm SMI library (rsmi_init, rsmi_shut_down or rsmi_num_monitor_devices "
                      "missing)",
                      lib_.path())};
    }
    if (rsmi::Status s = init(0); s != rsmi::kSuccess) {
      return Error{fmt::format("{}: rsmi_init failed (status {})", lib_.path(), s)};
    }
    initialized_ = true;
    uint32_t n = 0;
    if (rsmi::Status s = count(&n); s != rsmi::kSuccess) {
      return Error{fmt::format("{}: rsmi_num_monitor_devices failed (status {})", lib_.path(), s)};
    }
    count_ = n;
    has_energy_.assign(n, energy_ != nullptr);
    return Ok{};
  }

  std::string name() const override { return fmt::format("ROCm SMI ({})", lib_.path()); }
  int64_t device_count() const override { return count_; }

  Result<int64_t> device_index(const std::string& id) const override {
    auto numeric = numeric_device_index(id, count_, "ROCm SMI");
    if (!numeric) return numeric.error();
    if (numeric.value()) return *numeric.value();
    // ROCR_VISIBLE_DEVICES takes "GPU-<unique id in hex>".
    for (int64_t i = 0; unique_id_ != nullptr && i < count_; ++i) {
      uint64_t uid = 0;
      if (unique_id_(static_cast<uint32_t>(i), &uid) != rsmi::kSuccess) continue;
      if (id == fmt::format("GPU-{:x}", uid) || id == fmt::format("GPU-{:016x}", uid)) return i;
    }
    return Error{fmt::format("GPU '{}' is not a GPU index or unique id ROCm SMI knows", id), ErrorKind::kNotFound};
  }

  GpuReading read(int64_t device) override {
    GpuReading out;
    if (device < 0 || device >= count_) return out;
    const auto dv = static_cast<uint32_t>(device);
    uint32_t busy = 0;
    if (busy_ != nullptr && busy_(dv, &busy) == rsmi::kSuccess) out.utilization_pct = busy;
    uint64_t microwatts = 0;
    if (socket_power_ != nullptr && socket_power_(dv, &microwatts) == rsmi::kSuccess) {
      out.power_w = static_cast<double>(microwatts) * 1e-6;
    } else if (power_ave_ != nullptr && power_ave_(dv, 0, &microwatts) == rsmi::kSuccess) {
      out.power_w = static_cast<double>(microwatts) * 1e-6;
    }
    uint64_t used = 0;
    if (memory_ != nullptr && memory_(dv, rsmi::kMemTypeVram, &used) == rsmi::kSuccess) {
      out.memory_used_bytes = static_cast<int64_t>(used);
    }
    if (has_energy_[device]) {
      uint64_t ticks = 0, timestamp = 0;
      float resolution_uj = 0;
      if (energy_(dv, &ticks, &resolution_uj, &timestamp) == rsmi::kSuccess && resolution_uj > 0) {
        out.energy_counter_j = static_cast<double>(ticks) * resolution_uj * 1e-6;
      } else {
        has_energy_[device] = false;
      }
    }
    return out;
  }

 private:
  SharedLibrary lib_;
  bool initialized_ = false;
  int64_t count_ = 0;
  rsmi::ShutdownFn shutdown_ = nullptr;
  rsmi::BusyFn busy_ = nullptr;
  rsmi::PowerAveFn power_ave_ = nullptr;
  rsmi::SocketPowerFn socket_power_ = nullptr;
  rsmi::MemoryFn memory_ = nullptr;
  rsmi::EnergyFn energy_ = nullptr;
  rsmi::UniqueIdFn unique_id_ = nullptr;
  std::vector<bool> has_energy_;
};

}  // namespace

Result<std::unique_ptr<GpuLibrary>> load_rocm_smi(const std::string& path) {
  auto lib = SharedLibrary::open(path.empty() ? "librocm_smi64.so" : path);
  if (!lib) return lib.error();
  auto rocm = std::make_unique<RocmSmiLibrary>(std::move(lib.value()));
  if (Status s = rocm->init(); !s) return s.error();
  return std::unique_ptr<GpuLibrary>(std::move(rocm));
}

}  // namespace scaleprof::collect

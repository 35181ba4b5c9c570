// A stand-in for librocm_smi64.so with scripted values, so the tests exercise scaleprof's AMD path
// (dlopen, dlsym, units) without an AMD GPU. Same C symbols and signatures as ROCm SMI's documented
// API (declared here by us). Script: the file named by SCALEPROF_FAKE_ROCM_SCRIPT, key=value lines:
//   devices=2            util.N=40           power_base_w.N=100   power_slope_w.N=0
//   vram.N=4096          energy_counter=1    (0: rsmi_dev_energy_count_get fails)
// Power is reported in microwatts, energy as ticks of 15.3 uJ (a typical MI200/MI300 resolution);
// unique ids are 0xabc0 + N.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidArgs = 1;
constexpr int kNotSupported = 2;
constexpr float kResolutionUj = 15.3f;

struct Device {
  unsigned util = 0;
  double power_base_w = 0, power_slope_w = 0;
  uint64_t vram = 0;
};

struct State {
  int init_count = 0;
  double start_s = 0;
  bool energy_counter = true;
  std::vector<Device> devices;
};

State& state() {
  static State s;  // a process-wide C library, like ROCm SMI itself
  return s;
}

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void load_script() {
  State& s = state();
  s = State{};
  std::map<std::string, std::string> kv;
  if (const char* path = std::getenv("SCALEPROF_FAKE_ROCM_SCRIPT")) {
    if (FILE* f = std::fopen(path, "r")) {
      char line[1024];
      while (std::fgets(line, sizeof(line), f) != nullptr) {
        std::string l(line);
        while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
        size_t eq = l.find('=');
        if (eq != std::string::npos) kv[l.substr(0, eq)] = l.substr(eq + 1);
      }
      std::fclose(f);
    }
  }
  auto get = [&](const std::string& key, const char* fallback) {
    auto it = kv.find(key);
    return it == kv.end() ? std::string(fallback) : it->second;
  };
  s.energy_counter = get("energy_counter", "1") == "1";
  int n = std::atoi(get("devices", "1").c_str());
  for (int i = 0; i < n; ++i) {
    std::string k = "." + std::to_string(i);
    Device d;
    d.util = static_cast<unsigned>(std::atoi(get("util" + k, "0").c_str()));
    d.power_base_w = std::strtod(get("power_base_w" + k, "0").c_str(), nullptr);
    d.power_slope_w = std::strtod(get("power_slope_w" + k, "0").c_str(), nullptr);
    d.vram = std::strtoull(get("vram" + k, "0").c_str(), nullptr, 10);
    s.devices.push_back(d);
  }
  s.start_s = now_s();
}

const Device* device(uint32_t dv) {
  const State& s = state();
  return s.init_count > 0 && dv < s.devices.size() ? &s.devices[dv] : nullptr;
}

}  // namespace

extern "C" {

int rsmi_init(uint64_t /*flags*/) {
  if (state().init_count == 0) load_script();  // resets the state, so count afterwards
  ++state().init_count;
  return kSuccess;
}

int rsmi_shut_down() {
  if (state().init_count > 0) --state().init_count;
  return kSuccess;
}

int rsmi_num_monitor_devices(uint32_t* n) {
  *n = static_cast<uint32_t>(state().devices.size());
  return kSuccess;
}

int rsmi_dev_busy_percent_get(uint32_t dv, uint32_t* busy) {
  const Device* d = device(dv);
  if (d == nullptr) return kInvalidArgs;
  *busy = d->util;
  return kSuccess;
}

int rsmi_dev_power_ave_get(uint32_t dv, uint32_t /*sensor*/, uint64_t* microwatts) {
  const Device* d = device(dv);
  if (d == nullptr) return kInvalidArgs;
  const double t = now_s() - state().start_s;
  *microwatts = static_cast<uint64_t>((d->power_base_w + d->power_slope_w * t) * 1e6);
  return kSuccess;
}

int rsmi_dev_memory_usage_get(uint32_t dv, int type, uint64_t* used) {
  const Device* d = device(dv);
  if (d == nullptr || type != 0) return kInvalidArgs;
  *used = d->vram;
  return kSuccess;
}

int rsmi_dev_energy_count_get(uint32_t dv, uint64_t* ticks, float* resolution_uj, uint64_t* timestamp) {
  const Device* d = device(dv);
  if (d == nullptr) return kInvalidArgs;
  if (!state().energy_counter) return kNotSupported;
  const double t = now_s() - state().start_s;
  const double joules = d->power_base_w * t + 0.5 * d->power_slope_w * t * t;
  *ticks = 1'000'000ULL + static_cast<uint64_t>(joules * 1e6 / kResolutionUj);
  *resolution_uj = kResolutionUj;
  *timestamp = static_cast<uint64_t>(t * 1e9);
  return kSuccess;
}

int rsmi_dev_unique_id_get(uint32_t dv, uint64_t* id) {
  if (device(dv) == nullptr) return kInvalidArgs;
  *id = 0xabc0 + dv;
  return kSuccess;
}

}  // extern "C"

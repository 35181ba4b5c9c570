// A stand-in for libnvidia-ml.so.1 with scripted values, so the tests exercise scaleprof's real
// dlopen/dlsym loading and sampling code on machines without NVIDIA GPUs. Same C symbols and
// signatures as NVML's documented API (declared here by us), values from the file named by
// SCALEPROF_FAKE_NVML_SCRIPT, one key=value per line:
//   devices=2               number of GPUs
//   util.N=10,20,30         utilization % of GPU N, one value per read, cycling
//   power_base_w.N=100      power of GPU N = base + slope * seconds since nvmlInit (linear, so the
//   power_slope_w.N=200     trapezoid rule integrates it exactly)
//   memory.N=1048576        bytes used
//   energy_counter=1        0: nvmlDeviceGetTotalEnergyConsumption answers NOT_SUPPORTED
//   energy_scale=1          the counter reports scale x the true integral (tests can tell it is used)
//   fail_init=1             nvmlInit_v2 fails
//   sm_clock_mhz.N=1980     SM clock of GPU N; without it, the clock and the clock event reasons of
//                           GPU N answer NOT_SUPPORTED (an old driver)
//   clock_drop.N=2.5-4:990  during seconds 2.5 to 4 since nvmlInit GPU N runs at 990 MHz with the
//                           reasons of clock_drop_reasons.N; several drops are separated by ','
//   clock_drop_unix.N=S-E:990  the same with S and E in Unix nanoseconds (CLOCK_REALTIME), so a test
//                           can line the drop up with the wall-clock times of recorded steps
//   clock_drop_reasons.N=4  NVML reasons mask during a drop (default 4, sw_power_cap); 0 outside
// UUIDs are "GPU-fake-N".
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0;
constexpr int kUninitialized = 1;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kNotFound = 6;
constexpr int kUnknown = 999;

struct Device {
  unsigned index = 0;
  std::vector<unsigned> util{0};
  size_t util_reads = 0;
  double power_base_w = 0;
  double power_slope_w = 0;
  unsigned long long memory = 0;
  long long sm_clock_mhz = -1;  // -1: not supported
  struct Drop {
    double start = 0;  // seconds since nvmlInit, or Unix ns when unix_time
    double end = 0;
    unsigned mhz = 0;
    bool unix_time = false;
  };
  std::vector<Drop> drops;
  unsigned long long drop_reasons = 0x4;
};

struct State {
  int init_count = 0;
  double start_s = 0;
  bool energy_counter = true;

  double energy_scale = 1;
  std::vector<Device> devices;
};

State& state() {
  static State s;  // the fake is a process-wide C library, like NVML itself
  return s;
}

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double unix_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// "S-E:MHZ[,S-E:MHZ...]"
void parse_drops(const std::string& text, bool unix_time, std::vector<Device::Drop>* out) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t dash = part.find('-');
    size_t colon = part.find(':');
    if (dash != std::string::npos && colon != std::string::npos && dash < colon) {
      Device::Drop d;
      d.start = std::strtod(part.substr(0, dash).c_str(), nullptr);
      d.end = std::strtod(part.substr(dash + 1, colon - dash - 1).c_str(), nullptr);
      d.mhz = static_cast<unsigned>(std::strtoul(part.substr(colon + 1).c_str(), nullptr, 10));
      d.unix_time = unix_time;
      out->push_back(d);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
}

// The drop GPU d is in now, or nullptr.
const Device::Drop* current_drop(const Device& d) {
  const double since_init = now_s() - state().start_s;
  const double unix_ns = unix_now_ns();
  for (const Device::Drop& drop : d.drops) {
    const double t = drop.unix_time ? unix_ns : since_init;
    if (t >= drop.start && t < drop.end) return &drop;
  }
  return nullptr;
}

std::vector<unsigned> parse_list(const std::string& text) {
  std::vector<unsigned> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    out.push_back(static_cast<unsigned>(std::strtoul(text.substr(pos, comma - pos).c_str(), nullptr, 10)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (out.empty()) out.push_back(0);
  return out;
}

int load_script() {
  State& s = state();
  s = State{};
  std::map<std::string, std::string> kv;
  if (const char* path = std::getenv("SCALEPROF_FAKE_NVML_SCRIPT")) {
    FILE* f = std::fopen(path, "r");
    if (f == nullptr) return kUnknown;
    char line[4096];
    while (std::fgets(line, sizeof(line), f) != nullptr) {
      std::string l(line);
      while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.pop_back();
      size_t eq = l.find('=');
      if (eq != std::string::npos && l[0] != '#') kv[l.substr(0, eq)] = l.substr(eq + 1);
    }
    std::fclose(f);
  }
  auto get = [&](const std::string& key, const char* fallback) {
    auto it = kv.find(key);
    return it == kv.end() ? std::string(fallback) : it->second;
  };
  if (get("fail_init", "0") == "1") return kUnknown;
  s.energy_counter = get("energy_counter", "1") == "1";
  s.energy_scale = std::strtod(get("energy_scale", "1").c_str(), nullptr);
  int n = std::atoi(get("devices", "1").c_str());
  for (int i = 0; i < n; ++i) {
    Device d;
    d.index = static_cast<unsigned>(i);
    std::string k = "." + std::to_string(i);
    d.util = parse_list(get("util" + k, "0"));
    d.power_base_w = std::strtod(get("power_base_w" + k, "0").c_str(), nullptr);
    d.power_slope_w = std::strtod(get("power_slope_w" + k, "0").c_str(), nullptr);
    d.memory = std::strtoull(get("memory" + k, "0").c_str(), nullptr, 10);
    d.sm_clock_mhz = std::strtoll(get("sm_clock_mhz" + k, "-1").c_str(), nullptr, 10);
    parse_drops(get("clock_drop" + k, ""), false, &d.drops);
    parse_drops(get("clock_drop_unix" + k, ""), true, &d.drops);
    d.drop_reasons = std::strtoull(get("clock_drop_reasons" + k, "4").c_str(), nullptr, 0);
    s.devices.push_back(d);
  }
  s.start_s = now_s();
  return kSuccess;
}

Device* device(void* handle) {
  State& s = state();
  auto* d = static_cast<Device*>(handle);
  if (s.init_count == 0 || d == nullptr) return nullptr;
  return d;
}

}  // namespace

extern "C" {

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

int nvmlInit_v2() {
  State& s = state();
  if (s.init_count == 0) {
    if (int r = load_script(); r != kSuccess) return r;
  }
  ++s.init_count;
  return kSuccess;
}

int nvmlShutdown() {
  State& s = state();
  if (s.init_count == 0) return kUninitialized;
  --s.init_count;
  return kSuccess;
}

const char* nvmlErrorString(int code) {
  return code == kSuccess ? "Success" : "Fake NVML error";
}

int nvmlDeviceGetCount_v2(unsigned int* count) {
  if (state().init_count == 0) return kUninitialized;
  *count = static_cast<unsigned>(state().devices.size());
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** handle) {
  State& s = state();
  if (s.init_count == 0) return kUninitialized;
  if (index >= s.devices.size()) return kInvalidArgument;
  *handle = &s.devices[index];
  return kSuccess;
}

int nvmlDeviceGetHandleByUUID(const char* uuid, void** handle) {
  State& s = state();
  for (Device& d : s.devices) {
    if (std::string(uuid) == "GPU-fake-" + std::to_string(d.index)) {
      *handle = &d;
      return kSuccess;
    }
  }
  return kNotFound;
}

int nvmlDeviceGetIndex(void* handle, unsigned int* index) {
  Device* d = device(handle);
  if (d == nullptr) return kInvalidArgument;
  *index = d->index;
  return kSuccess;
}

int nvmlDeviceGetUtilizationRates(void* handle, nvmlUtilization_t* util) {
  Device* d = device(handle);
  if (d == nullptr) return kInvalidArgument;
  util->gpu = d->util[d->util_reads++ % d->util.size()];
  util->memory = 0;
  return kSuccess;
}

int nvmlDeviceGetPowerUsage(void* handle, unsigned int* milliwatts) {
  Device* d = device(handle);
  if (d == nullptr) return kInvalidArgument;
  double t = now_s() - state().start_s;
  *milliwatts = static_cast<unsigned>((d->power_base_w + d->power_slope_w * t) * 1000.0 + 0.5);
  return kSuccess;
}

int nvmlDeviceGetMemoryInfo(void* handle, nvmlMemory_t* memory) {
  Device* d = device(handle);
  if (d == nullptr) return kInvalidArgument;
  memory->total = 80ULL << 30;
  memory->used = d->memory;
  memory->free = memory->total - d->memory;
  return kSuccess;
}

int nvmlDeviceGetTotalEnergyConsumption(void* handle, unsigned long long* millijoules) {
  Device* d = device(handle);
  if (d == nullptr) return kInvalidArgument;
  if (!state().energy_counter) return kNotSupported;
  double t = now_s() - state().start_s;
  double joules = d->power_base_w * t + 0.5 * d->power_slope_w * t * t;
  // An arbitrary offset: the driver's counter starts at boot, not at our first sample.
  *millijoules = 5'000'000ULL + static_cast<unsigned long long>(joules * state().energy_scale * 1000.0);
  return kSuccess;
}

// nvmlClockType_t is a C enum: int-sized. 1 is NVML_CLOCK_SM; the fake knows no other clock.
int nvmlDeviceGetClockInfo(void* handle, int type, unsigned int* mhz) {
  Device* d = device(handle);
  if (d == nullptr || mhz == nullptr) return kInvalidArgument;
  if (type != 1 || d->sm_clock_mhz < 0) return kNotSupported;
  const Device::Drop* drop = current_drop(*d);
  *mhz = drop != nullptr ? drop->mhz : static_cast<unsigned>(d->sm_clock_mhz);
  return kSuccess;
}

// Only the current name (R535 on): scaleprof looks up the pre-R535 "Throttle" name only when this
// one is missing.
int nvmlDeviceGetCurrentClocksEventReasons(void* handle, unsigned long long* mask) {
  Device* d = device(handle);
  if (d == nullptr || mask == nullptr) return kInvalidArgument;
  if (d->sm_clock_mhz < 0) return kNotSupported;
  *mask = current_drop(*d) != nullptr ? d->drop_reasons : 0;
  return kSuccess;
}

}  // extern "C"

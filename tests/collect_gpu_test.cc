// The GPU monitor through the real dlopen/dlsym code, against the stand-in NVML built by the test
// suite (tests/fake_nvml): utilization averages, energy from the counter and from power integration
// to the joule, device choice, and the no-library path.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <thread>

#include "collect/gpu_monitor.h"
#include "collect/rank_recorder.h"
#include "collect_test_util.h"
#include "core/clock_event_reasons.h"
#include "importers/run_reader.h"
#include "test_paths.h"

namespace scaleprof::collect {
namespace {

using testing::read_file;
using testing::TempDir;

// The fake reads its script at nvmlInit_v2 from the process environment.
class FakeNvml {
 public:
  explicit FakeNvml(const std::string& script) : dir_("nvml") {
    ::setenv("SCALEPROF_FAKE_NVML_SCRIPT", dir_.write("script.txt", script).c_str(), 1);
  }
  ~FakeNvml() { ::unsetenv("SCALEPROF_FAKE_NVML_SCRIPT"); }
  FakeNvml(const FakeNvml&) = delete;
  FakeNvml& operator=(const FakeNvml&) = delete;
  std::unique_ptr<GpuLibrary> load() const {
    auto lib = load_nvml(SCALEPROF_FAKE_NVML_PATH);
    EXPECT_TRUE(lib.ok()) << (lib.ok() ? "" : lib.error().message);
    return lib.ok() ? std::move(lib.value()) : nullptr;
  }
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
};

struct Sampled {
  std::vector<GpuDeviceSummary> live;
  std::vector<GpuSample> csv;
  int64_t rounds = 0;
};

Sampled sample_for(const FakeNvml& fake, std::chrono::milliseconds duration, std::vector<int64_t> devices = {}) {
  GpuMonitorOptions options;
  options.interval = std::chrono::milliseconds(10);
  options.devices = std::move(devices);
  options.csv_path = fake.dir().file("gpu.csv");
  auto monitor = GpuMonitor::start(fake.load(), options);
  EXPECT_TRUE(monitor.ok()) << (monitor.ok() ? "" : monitor.error().message);
  Sampled out;
  if (!monitor.ok()) return out;
  std::this_thread::sleep_for(duration);
  EXPECT_TRUE(monitor.value()->stop().ok());
  out.live = monitor.value()->summary();
  out.rounds = monitor.value()->samples_taken();
  std::vector<std::string> warnings;
  auto table = importers::read_csv(options.csv_path, &warnings);
  EXPECT_TRUE(table.ok() && warnings.empty());
  for (const auto& row : table.value().rows) {
    GpuSample s;
    s.time_unix_ns = std::stoll(row[0]);
    s.device = std::stoll(row[1]);
    s.utilization_pct = std::stod(row[2]);
    s.power_w = std::stod(row[3]);
    s.memory_used_bytes = std::stoll(row[4]);
    if (!row[5].empty()) s.energy_j = std::stod(row[5]);
    if (!row[6].empty()) s.sm_clock_mhz = std::stoll(row[6]);
    s.throttle_reasons = parse_clock_event_reasons(row[7]);
    EXPECT_EQ(row[7].empty(), !s.throttle_reasons.has_value()) << row[7];
    out.csv.push_back(s);
  }
  return out;
}

std::vector<GpuSample> of_device(const std::vector<GpuSample>& all, int64_t device) {
  std::vector<GpuSample> out;
  for (const GpuSample& s : all) {
    if (s.device == device) out.push_back(s);
  }
  return out;
}

TEST(GpuMonitor, UtilizationAverageAndTrapezoidEnergyToTheJoule) {
  // GPU 0: utilization cycles 10,20,30,40; power ramps 100 W + 200 W/s (linear: the trapezoid rule is
  // exact). GPU 1: 90 %, 50 W flat. No energy counter: power integration must be used.
  FakeNvml fake(
      "devices=2\nenergy_counter=0\nutil.0=10,20,30,40\npower_base_w.0=100\npower_slope_w.0=200\n"
      "memory.0=1048576\nutil.1=90\npower_base_w.1=50\nmemory.1=2048\n");
  Sampled s = sample_for(fake, std::chrono::milliseconds(1200));
  ASSERT_EQ(s.live.size(), 2u);
  // ~1.2 s at 10 ms: well over 60 rounds even on a loaded machine, and never more than the clock allows.
  EXPECT_GE(s.rounds, 60);
  EXPECT_LE(s.rounds, 125);
  EXPECT_EQ(s.live[0].samples, s.rounds);
  ASSERT_EQ(s.csv.size(), static_cast<size_t>(2 * s.rounds));

  // Utilization: the mean of the first `rounds` values of the cycle.
  double expected_util = 0;
  for (int64_t i = 0; i < s.rounds; ++i) expected_util += 10.0 * static_cast<double>(i % 4 + 1);
  expected_util /= static_cast<double>(s.rounds);
  EXPECT_NEAR(*s.live[0].mean_utilization_pct, expected_util, 1e-9);
  EXPECT_DOUBLE_EQ(*s.live[1].mean_utilization_pct, 90.0);
  EXPECT_EQ(*s.live[0].max_memory_used_bytes, 1048576);

  // Energy of a linear power ramp over the sampled span: (P_first + P_last) / 2 * span.
  auto d0 = of_device(s.csv, 0);
  const double span_s = static_cast<double>(d0.back().time_unix_ns - d0.front().time_unix_ns) * 1e-9;
  EXPECT_GT(span_s, 1.0);
  const double exact0 = 0.5 * (*d0.front().power_w + *d0.back().power_w) * span_s;
  EXPECT_FALSE(s.live[0].energy_from_counter);
  EXPECT_NEAR(*s.live[0].energy_j, exact0, 1.0);
  EXPECT_GT(*s.live[0].energy_j, 100.0 * span_s + 1.0);  // the ramp really is there
  EXPECT_NEAR(*s.live[1].energy_j, 50.0 * span_s, 1.0);
  EXPECT_FALSE(d0.front().energy_j.has_value());

  // Timestamps are real and increasing; the sampling interval is kept on average.
  for (size_t i = 1; i < d0.size(); ++i) EXPECT_GT(d0[i].time_unix_ns, d0[i - 1].time_unix_ns);
  const double mean_interval_ms = span_s * 1e3 / static_cast<double>(d0.size() - 1);
  EXPECT_GT(mean_interval_ms, 9.0);
  EXPECT_LT(mean_interval_ms, 20.0);

  // A reader of gpu.csv gets the same energy as the live monitor.
  auto from_csv = summarize_gpu_samples(s.csv);
  ASSERT_EQ(from_csv.size(), 2u);
  EXPECT_NEAR(*from_csv[0].energy_j, *s.live[0].energy_j, 0.01);
  EXPECT_NEAR(*from_csv[0].mean_utilization_pct, expected_util, 1e-9);
}

TEST(GpuMonitor, SmClockAndThrottleReasonsFollowTheScriptedDrop) {
  // GPU 0 runs at 1980 MHz except from 0.4 s to 0.8 s after nvmlInit, at 990 MHz under a software power
  // cap; GPU 1 answers NOT_SUPPORTED to both calls (its columns stay empty).
  FakeNvml fake("devices=2\nsm_clock_mhz.0=1980\nclock_drop.0=0.4-0.8:990\nclock_drop_reasons.0=0xc\n");
  Sampled s = sample_for(fake, std::chrono::milliseconds(1100));
  auto d0 = of_device(s.csv, 0);
  auto d1 = of_device(s.csv, 1);
  ASSERT_GT(d0.size(), 50u);
  int64_t dropped = 0;
  int64_t full = 0;
  for (const GpuSample& g : d0) {
    ASSERT_TRUE(g.sm_clock_mhz && g.throttle_reasons);
    if (*g.sm_clock_mhz == 990) {
      ++dropped;
      EXPECT_EQ(*g.throttle_reasons, kClockReasonSwPowerCap | kClockReasonHwSlowdown);
    } else {
      ++full;
      EXPECT_EQ(*g.sm_clock_mhz, 1980);
      EXPECT_EQ(*g.throttle_reasons, 0u);
    }
  }
  // 0.4 s of a 1.1 s run at 10 ms: about 40 samples; a loaded machine takes fewer, never more.
  EXPECT_GE(dropped, 15);
  EXPECT_LE(dropped, 42);
  EXPECT_GT(full, 20);
  for (const GpuSample& g : d1) {
    EXPECT_FALSE(g.sm_clock_mhz.has_value());
    EXPECT_FALSE(g.throttle_reasons.has_value());
  }
  // The text in gpu.csv is the readable list, and reads back to the mask.
  const std::string text = read_file(fake.dir().file("gpu.csv"));
  EXPECT_NE(text.find(",990,sw_power_cap|hw_slowdown\n"), std::string::npos);
  EXPECT_NE(text.find(",1980,none\n"), std::string::npos);
  EXPECT_EQ(text.substr(0, text.find('\n')), kGpuHeader);
}

TEST(ClockEventReasons, TextRoundTripsEveryMask) {
  EXPECT_EQ(clock_event_reasons_text(0), "none");
  EXPECT_EQ(clock_event_reasons_text(0x4), "sw_power_cap");
  EXPECT_EQ(clock_event_reasons_text(0x4 | 0x40 | 0x4000), "sw_power_cap|hw_thermal_slowdown|0x4000");
  for (uint64_t mask : {uint64_t{0}, uint64_t{0x1ff}, uint64_t{0x8}, uint64_t{0x10004}, ~uint64_t{0}}) {
    EXPECT_EQ(parse_clock_event_reasons(clock_event_reasons_text(mask)), mask);
  }
  EXPECT_FALSE(parse_clock_event_reasons("").has_value());
  EXPECT_FALSE(parse_clock_event_reasons("sw_power_cap|nonsense").has_value());
  EXPECT_FALSE(parse_clock_event_reasons("0x").has_value());
  EXPECT_FALSE(parse_clock_event_reasons("sw_power_cap|").has_value());
}

TEST(GpuMonitor, EnergyCounterIsPreferredWhenTheDriverHasOne) {
  // The counter deliberately reports twice the true integral: the monitor must report the counter.
  FakeNvml fake("devices=1\nenergy_counter=1\nenergy_scale=2\nutil.0=55\npower_base_w.0=150\npower_slope_w.0=100\n");
  Sampled s = sample_for(fake, std::chrono::milliseconds(1000));
  ASSERT_EQ(s.live.size(), 1u);
  ASSERT_GE(s.csv.size(), 50u);
  const double span_s = static_cast<double>(s.csv.back().time_unix_ns - s.csv.front().time_unix_ns) * 1e-9;
  const double integral = 0.5 * (*s.csv.front().power_w + *s.csv.back().power_w) * span_s;
  EXPECT_TRUE(s.live[0].energy_from_counter);
  EXPECT_NEAR(*s.live[0].energy_j, 2.0 * integral, 1.0);
  // gpu.csv holds the counter relative to the first sample: 0 first, the total last.
  EXPECT_DOUBLE_EQ(*s.csv.front().energy_j, 0.0);
  EXPECT_NEAR(*s.csv.back().energy_j, *s.live[0].energy_j, 0.002);
  EXPECT_DOUBLE_EQ(*s.live[0].mean_utilization_pct, 55.0);
}

TEST(GpuMonitor, MonitorsOnlyTheChosenDevices) {
  FakeNvml fake("devices=3\nutil.0=1\nutil.1=2\nutil.2=3\n");
  Sampled s = sample_for(fake, std::chrono::milliseconds(100), {2});
  ASSERT_EQ(s.live.size(), 1u);
  EXPECT_EQ(s.live[0].device, 2);
  EXPECT_DOUBLE_EQ(*s.live[0].mean_utilization_pct, 3.0);
  for (const GpuSample& x : s.csv) EXPECT_EQ(x.device, 2);
}

TEST(GpuMonitor, ChooseDevices) {
  FakeNvml fake("devices=4\n");
  auto lib = fake.load();
  ASSERT_TRUE(lib);
  RunContext c;
  auto pick = [&](const std::string& mode) {
    std::vector<std::string> warnings;
    auto r = choose_devices(*lib, c, mode, &warnings);
    EXPECT_TRUE(warnings.empty()) << warnings.front();
    return r;
  };
  EXPECT_EQ(pick("rank"), (std::vector<int64_t>{0, 1, 2, 3}));  // one process, nothing restricted
  EXPECT_EQ(pick("off"), (std::vector<int64_t>{}));
  c.local_world_size = 4;
  c.local_rank = 2;
  EXPECT_EQ(pick("rank"), (std::vector<int64_t>{2}));  // four ranks on the node: one GPU each
  EXPECT_EQ(pick("node"), (std::vector<int64_t>{0, 1, 2, 3}));
  c.devices_restricted = true;
  c.visible_devices = {"GPU-fake-3"};
  EXPECT_EQ(pick("rank"), (std::vector<int64_t>{3}));
  c.visible_devices = {"3", "1"};
  c.local_rank = 1;
  c.local_world_size = 2;
  EXPECT_EQ(pick("rank"), (std::vector<int64_t>{1}));
  // Unknown entries are warnings and are not sampled (monitoring never stops a training); digits that
  // overflow int64 are one of them, not an exception (they gave Python "IndexError: stoll").
  c.visible_devices = {"7", "99999999999999999999", "1"};
  std::vector<std::string> warnings;
  EXPECT_EQ(choose_devices(*lib, c, "rank", &warnings), (std::vector<int64_t>{1}));
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0], "GPU 7 is not among the 4 GPUs NVML sees; not sampled");
  EXPECT_EQ(warnings[1], "GPU 99999999999999999999 is not among the 4 GPUs NVML sees; not sampled");
  c.visible_devices = {};
  EXPECT_EQ(pick("rank"), (std::vector<int64_t>{}));  // CUDA_VISIBLE_DEVICES="" hides every GPU
}

TEST(GpuLibrary, NoLibraryFoundIsAClearMessage) {
  auto none = load_gpu_library(Environment{{"SCALEPROF_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"},
                                           {"SCALEPROF_ROCM_SMI_LIBRARY", "/nonexistent/librocm_smi64.so"}});
  ASSERT_FALSE(none.ok());
  const std::string& m = none.error().message;
  EXPECT_EQ(m.rfind("no GPU library found (/nonexistent/libnvidia-ml.so.1: ", 0), 0u) << m;
  EXPECT_NE(m.find("; /nonexistent/librocm_smi64.so: "), std::string::npos) << m;

  // A rank without a GPU library records everything else and says why it has no gpu.csv.
  TempDir dir("nogpu");
  RunContext c;
  c.root = dir.path();
  c.experiment = "e";
  c.run = "r";
  auto r = RankRecorder::open(c, {},
                              Environment{{"SCALEPROF_NVML_LIBRARY", "/nonexistent/a.so"},
                                          {"SCALEPROF_ROCM_SMI_LIBRARY", "/nonexistent/b.so"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value()->gpu_note().rfind("no GPU library found", 0), 0u);
  EXPECT_EQ(r.value()->gpu_monitor(), nullptr);
  ASSERT_TRUE(r.value()->finish(true).ok());
  EXPECT_FALSE(std::filesystem::exists(dir.file("e/r/rank-00000/gpu.csv")));
}

TEST(GpuLibrary, BrokenLibrariesAreReportedNotFatal) {
  FakeNvml fake("fail_init=1\n");
  auto lib = load_nvml(SCALEPROF_FAKE_NVML_PATH);
  ASSERT_FALSE(lib.ok());
  EXPECT_NE(lib.error().message.find("nvmlInit_v2 failed: Fake NVML error"), std::string::npos);
  // A library that is not NVML at all (libc has none of the symbols).
  auto not_nvml = load_nvml("libc.so.6");
  ASSERT_FALSE(not_nvml.ok());
  EXPECT_NE(not_nvml.error().message.find("not an NVML library"), std::string::npos);
}

TEST(GpuMonitor, RankRecorderSamplesWithTheLibraryFromTheEnvironment) {
  FakeNvml fake("devices=2\nenergy_counter=0\nutil.0=10\nutil.1=20\npower_base_w.0=100\npower_base_w.1=100\n");
  TempDir dir("rankgpu");
  RunContext c;
  c.root = dir.path();
  c.experiment = "e";
  c.run = "r";
  c.rank = 1;
  c.world_size = 2;
  c.local_rank = 1;
  c.local_world_size = 2;
  RankRecorderOptions options;
  options.gpu_interval = std::chrono::milliseconds(10);
  auto r = RankRecorder::open(c, options, Environment{{"SCALEPROF_NVML_LIBRARY", SCALEPROF_FAKE_NVML_PATH}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value()->gpu_note(), "");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(r.value()->finish(true).ok());
  auto run = importers::read_run(dir.file("e/r"));
  ASSERT_TRUE(run.ok());
  const auto& gpu = run.value().ranks.at(0).gpu;
  ASSERT_GE(gpu.size(), 10u);
  for (const GpuSample& s : gpu) EXPECT_EQ(s.device, 1);  // local rank 1 of 2 takes GPU 1 only
  auto summary = summarize_gpu_samples(gpu);
  EXPECT_DOUBLE_EQ(*summary.at(0).mean_utilization_pct, 20.0);
}

// The AMD path: ROCm SMI's units (microwatts, energy ticks x resolution in microjoules) and unique ids.
TEST(GpuLibrary, RocmSmiThroughTheStandIn) {
  TempDir dir("rocm");
  ::setenv("SCALEPROF_FAKE_ROCM_SCRIPT",
           dir.write("script.txt",
                     "devices=2\nutil.0=40\nutil.1=70\npower_base_w.0=300\npower_slope_w.0=100\n"
                     "vram.0=4096\npower_base_w.1=90\n")
               .c_str(),
           1);
  // load_gpu_library falls back to ROCm SMI when NVML is absent.
  auto lib = load_gpu_library(Environment{{"SCALEPROF_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"},
                                          {"SCALEPROF_ROCM_SMI_LIBRARY", SCALEPROF_FAKE_ROCM_SMI_PATH}});
  ASSERT_TRUE(lib.ok()) << lib.error().message;
  EXPECT_EQ(lib.value()->name().rfind("ROCm SMI (", 0), 0u);
  ASSERT_EQ(lib.value()->device_count(), 2);
  auto by_uid = lib.value()->device_index("GPU-abc1");
  ASSERT_TRUE(by_uid.ok()) << by_uid.error().message;
  EXPECT_EQ(by_uid.value(), 1);
  auto by_index = lib.value()->device_index("1");
  ASSERT_TRUE(by_index.ok()) << by_index.error().message;
  EXPECT_EQ(by_index.value(), 1);
  EXPECT_FALSE(lib.value()->device_index("GPU-ffff").ok());
  GpuReading r = lib.value()->read(0);
  EXPECT_DOUBLE_EQ(*r.utilization_pct, 40.0);
  EXPECT_NEAR(*r.power_w, 300.0, 1.0);
  EXPECT_EQ(*r.memory_used_bytes, 4096);
  ASSERT_TRUE(r.energy_counter_j.has_value());

  GpuMonitorOptions options;
  options.interval = std::chrono::milliseconds(10);
  options.csv_path = dir.file("gpu.csv");
  auto monitor = GpuMonitor::start(std::move(lib.value()), options);
  ASSERT_TRUE(monitor.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  ASSERT_TRUE(monitor.value()->stop().ok());
  auto summary = monitor.value()->summary();
  ASSERT_EQ(summary.size(), 2u);
  const double span_s = static_cast<double>(summary[1].last_unix_ns - summary[1].first_unix_ns) * 1e-9;
  EXPECT_GT(span_s, 0.7);
  // Counter path, to the joule: 90 W flat on GPU 1.
  EXPECT_TRUE(summary[1].energy_from_counter);
  EXPECT_NEAR(*summary[1].energy_j, 90.0 * span_s, 1.0);
  // GPU 0 ramps 300 W + 100 W/s: its counter agrees with the trapezoid over the sampled power (exact
  // for a linear ramp), computed here from gpu.csv without the counter column.
  std::vector<std::string> warnings;
  auto table = importers::read_csv(options.csv_path, &warnings);
  ASSERT_TRUE(table.ok());
  std::vector<std::pair<int64_t, double>> power0;
  for (const auto& row : table.value().rows) {
    if (row[1] == "0") power0.emplace_back(std::stoll(row[0]), std::stod(row[3]));
  }
  ASSERT_GE(power0.size(), 40u);
  EXPECT_TRUE(summary[0].energy_from_counter);
  EXPECT_NEAR(*summary[0].energy_j, trapezoid_energy_j(power0), 1.0);
  EXPECT_GT(*summary[0].energy_j, 300.0 * span_s + 1.0);
  EXPECT_DOUBLE_EQ(*summary[0].mean_utilization_pct, 40.0);
  EXPECT_DOUBLE_EQ(*summary[1].mean_utilization_pct, 70.0);
  ::unsetenv("SCALEPROF_FAKE_ROCM_SCRIPT");
}

TEST(GpuMonitor, ParseInterval) {
  EXPECT_EQ(parse_interval("1s").value(), std::chrono::seconds(1));
  EXPECT_EQ(parse_interval("250ms").value(), std::chrono::milliseconds(250));
  EXPECT_EQ(parse_interval("0.5").value(), std::chrono::milliseconds(500));
  EXPECT_EQ(parse_interval("10ms").value(), std::chrono::milliseconds(10));
  EXPECT_EQ(parse_interval("5ms").error().message, "interval '5ms' is below the minimum of 10ms");
  EXPECT_FALSE(parse_interval("fast").ok());
  EXPECT_FALSE(parse_interval("-1s").ok());
  EXPECT_FALSE(parse_interval("1h").ok());
}

}  // namespace
}  // namespace scaleprof::collect

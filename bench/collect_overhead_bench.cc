// What recording costs the training: the epoch/step timers with their CSV lines, and the GPU monitor
// sampling every 10 ms through the stand-in NVML (tests/fake_nvml). Issue 3 asks for under 1 % of one
// core; each benchmark reports its figure as the counter cpu_pct_of_one_core and fails above 1 %.
//
//   cmake -S . -B build-bench -G Ninja -DSCALEPROF_BENCH=ON -DCMAKE_BUILD_TYPE=Release
//   ninja -C build-bench collect_overhead_bench && build-bench/bench/collect_overhead_bench
//
// The stand-in answers in nanoseconds; a real NVML call takes tens of microseconds, so on a GPU node
// the monitor's cost is the driver's, which this cannot measure.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "collect/gpu_monitor.h"
#include "collect/rank_recorder.h"

namespace {

namespace fs = std::filesystem;
using scaleprof::collect::Environment;
using scaleprof::collect::RankRecorder;
using scaleprof::collect::RunContext;

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

fs::path temp_dir(const char* tag) {
  fs::path p = fs::temp_directory_path() / (std::string("scaleprof-bench-") + tag + "-" + std::to_string(getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// One epoch of `steps` timed steps per iteration: begin/end of every step and of the epoch, each end
// appending one CSV line with one write(). Reports the cost per record and what it is at 100
// records per second (a fast training loop: 10 ms steps).
void BM_TimersPerRecord(benchmark::State& state) {
  const fs::path root = temp_dir("timers");
  RunContext ctx;
  ctx.root = root.string();
  ctx.experiment = "bench";
  ctx.run = "timers";
  ctx.gpu_monitor = "off";
  auto rec = RankRecorder::open(ctx, {}, Environment{});
  if (!rec.ok()) {
    state.SkipWithError(rec.error().message.c_str());
    return;
  }
  const int64_t steps = state.range(0);
  int64_t epoch = 0, records = 0;
  const double cpu0 = process_cpu_s();
  for (auto _ : state) {
    (void)rec.value()->begin_epoch(epoch);
    for (int64_t s = 0; s < steps; ++s) {
      (void)rec.value()->begin_step();
      (void)rec.value()->end_step(32);
    }
    (void)rec.value()->end_epoch(32 * steps);
    ++epoch;
    records += steps + 1;
  }
  const double cpu_per_record_s = (process_cpu_s() - cpu0) / static_cast<double>(records);
  state.counters["cpu_us_per_record"] = cpu_per_record_s * 1e6;
  // 100 records/s: one step every 10 ms.
  state.counters["cpu_pct_of_one_core"] = cpu_per_record_s * 100 * 100;
  state.SetItemsProcessed(records);
  if (cpu_per_record_s * 100 * 100 >= 1.0) state.SkipWithError("timers cost 1% of a core or more at 100 records/s");
  (void)rec.value()->finish(true);
  fs::remove_all(root);
}
BENCHMARK(BM_TimersPerRecord)->Arg(100)->Unit(benchmark::kMicrosecond);

// The GPU monitor at 10 ms on 8 stand-in GPUs for a few seconds, with gpu.csv written: CPU time of
// the process (the main thread sleeps, so it is the monitor's) over wall time.
void BM_GpuMonitor10ms(benchmark::State& state) {
  const fs::path dir = temp_dir("gpu");
  const fs::path script = dir / "script.txt";
  std::ofstream(script) << "devices=8\nutil.0=10,20,30\npower_base_w.0=100\npower_slope_w.0=1\n";
  ::setenv("SCALEPROF_FAKE_NVML_SCRIPT", script.c_str(), 1);
  const auto seconds = std::chrono::seconds(state.range(0));
  for (auto _ : state) {
    auto lib = scaleprof::collect::load_nvml(SCALEPROF_FAKE_NVML_PATH);
    if (!lib.ok()) {
      state.SkipWithError(lib.error().message.c_str());
      return;
    }
    scaleprof::collect::GpuMonitorOptions options;
    options.interval = std::chrono::milliseconds(10);
    options.csv_path = (dir / "gpu.csv").string();
    const double cpu0 = process_cpu_s();
    const auto wall0 = std::chrono::steady_clock::now();
    auto monitor = scaleprof::collect::GpuMonitor::start(std::move(lib.value()), options);
    if (!monitor.ok()) {
      state.SkipWithError(monitor.error().message.c_str());
      return;
    }
    std::this_thread::sleep_for(seconds);
    (void)monitor.value()->stop();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const double pct = (process_cpu_s() - cpu0) / wall * 100;
    state.counters["cpu_pct_of_one_core"] = pct;
    state.counters["samples"] = static_cast<double>(monitor.value()->samples_taken());
    state.counters["samples_per_s"] = static_cast<double>(monitor.value()->samples_taken()) / wall;
    if (pct >= 1.0) state.SkipWithError("the GPU monitor at 10 ms costs 1% of a core or more");
  }
  ::unsetenv("SCALEPROF_FAKE_NVML_SCRIPT");
  fs::remove_all(dir);
}
BENCHMARK(BM_GpuMonitor10ms)->Arg(5)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

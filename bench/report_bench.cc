// The scalability report on 1,000 runs x 100 epochs, without plots: reading the run directories,
// the analyses, and the console tables. Issue 4 asks for under one second.
//
//   cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DSCALEPROF_BENCH=ON -DSCALEPROF_TESTS=OFF
//   ninja -C build-bench report_bench && ./build-bench/bench/report_bench
//
// With SCALEPROF_BENCH_KEEP=DIR the generated runs are written to DIR and kept, so the CLI can be timed
// on the same data: `time ./build-bench/scaleprof report --no-plots --root DIR >/dev/null`.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "analysis/scalability.h"
#include "engine/run_trace_metrics.h"
#include "importers/run_data_reader.h"
#include "report/scalability_report.h"

namespace {

namespace fs = std::filesystem;

constexpr int kRuns = 1000;
constexpr int kEpochs = 100;

// 4 strategies x 5 worker counts x 50 repetitions; one rank folder per run with 100 epochs and a
// small gpu.csv, as `scaleprof run` writes them.
void generate(const fs::path& root) {
  const char* strategies[] = {"ddp", "fsdp", "deepspeed", "horovod"};
  const int workers[] = {1, 2, 4, 8, 16};
  for (int i = 0; i < kRuns; ++i) {
    const std::string strategy = strategies[i % 4];
    const int w = workers[(i / 4) % 5];
    const fs::path run = root / "bench" / fmt::format("{}-w{}-{:04d}", strategy, w, i);
    fs::create_directories(run / "rank-00000");
    std::ofstream(run / "run.json") << fmt::format(
        R"({{"schema_version": 1, "experiment": "bench", "run": "{}", "strategy": "{}", "world_size": {}, "nodes": 1, "status": "completed"}})",
        run.filename().string(), strategy, w);
    std::ofstream(run / "rank-00000" / "rank.json") << fmt::format(
        R"({{"schema_version": 1, "rank": 0, "world_size": {}, "host": "n1", "status": "completed", "strategy": "{}"}})",
        w, strategy);
    std::string epochs = "epoch,start_unix_ns,end_unix_ns,duration_s,samples\n";
    for (int e = 0; e < kEpochs; ++e) {
      const double t = (1.0 + 8.0 / w) * (1.0 + 0.01 * ((e * 7 + i) % 5));
      epochs += fmt::format("{},{},{},{},50000\n", e, 1763767200000000000LL + e, 1763767200000000000LL + e + 1, t);
    }
    std::ofstream(run / "rank-00000" / "epochs.csv") << epochs;
    std::string gpu = "time_unix_ns,device,utilization_pct,power_w,memory_used_bytes,energy_j\n";
    for (int s = 0; s < 10; ++s) gpu += fmt::format("{},0,{},{},1000,\n", s * 1000000000LL, 50 + s, 200 + s);
    std::ofstream(run / "rank-00000" / "gpu.csv") << gpu;
  }
}

class ReportData {
 public:
  ReportData() {
    const char* keep = std::getenv("SCALEPROF_BENCH_KEEP");
    keep_ = keep != nullptr && keep[0] != '\0';
    root_ = keep_ ? fs::path(keep) : fs::temp_directory_path() / fmt::format("scaleprof-report-bench-{}", ::getpid());
    fs::remove_all(root_);
    generate(root_);
  }
  ~ReportData() {
    if (!keep_) fs::remove_all(root_);
  }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
  bool keep_ = false;
};

void BM_Report1000Runs(benchmark::State& state) {
  static const ReportData data;
  for (auto _ : state) {
    scaleprof::importers::ScalabilityReadOptions read;
    read.root = data.root();
    auto loaded = scaleprof::importers::read_scalability_data(read);
    if (!loaded) {
      state.SkipWithError(loaded.error().message.c_str());
      return;
    }
    scaleprof::engine::add_trace_metrics(&loaded.value());
    const auto analysis = scaleprof::analysis::analyse_scalability(loaded.value(), {});
    const auto sections = scaleprof::report::scalability_sections(analysis);
    const std::string text = scaleprof::report::render_sections_text(sections, false);
    benchmark::DoNotOptimize(text.data());
    if (analysis.runs.size() != kRuns) state.SkipWithError("wrong run count");
  }
  state.counters["runs"] = kRuns;
  state.counters["epochs"] = static_cast<double>(kRuns) * kEpochs;
}
BENCHMARK(BM_Report1000Runs)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();

// The trace reader alone: inflate + parse + build the tables of one real trace, as bytes of JSON
// per second. The trace is SCALEPROF_BENCH_TRACE, else ../shared's df_index_resolver (53.7 MB).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "trace/kineto_reader.h"

namespace {

std::string bench_trace() {
  if (const char* path = std::getenv("SCALEPROF_BENCH_TRACE")) return path;
  return std::string(SCALEPROF_SHARED_DIR) + "/traces/hta/df_index_resolver/df_index_resolver.json.gz";
}

// Streaming read of a gzip trace: the path every CLI command takes, on state.range(0) threads
// (1: serial; more: windows parsed by worker threads while this one inflates). Reports bytes of
// JSON per second of wall time and, as a counter, per thread (the per-core rate).
void BM_ReadKinetoTrace(benchmark::State& state) {
  scaleprof::trace::ParseOptions options;
  options.threads = static_cast<unsigned>(state.range(0));
  const std::string path = bench_trace();
  if (!std::filesystem::exists(path)) {
    state.SkipWithError(("no trace at " + path).c_str());
    return;
  }
  uint64_t json_bytes = 0;
  uint64_t events = 0;
  for (auto _ : state) {
    auto trace = scaleprof::trace::read_kineto_trace(path, options);
    if (!trace.ok()) {
      state.SkipWithError(trace.error().message.c_str());
      return;
    }
    json_bytes = trace.value().stats.json_bytes;
    events = trace.value().stats.events_total;
    benchmark::DoNotOptimize(trace.value().events.ts.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(json_bytes * state.iterations()));
  state.SetItemsProcessed(static_cast<int64_t>(events * state.iterations()));
  state.counters["MB_per_s_per_thread"] =
      benchmark::Counter(static_cast<double>(json_bytes) * static_cast<double>(state.iterations()) / 1e6 /
                             static_cast<double>(state.range(0)),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReadKinetoTrace)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

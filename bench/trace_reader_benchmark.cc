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

// Streaming read of a gzip trace: the path every CLI command takes.
void BM_ReadKinetoTrace(benchmark::State& state) {
  const std::string path = bench_trace();
  if (!std::filesystem::exists(path)) {
    state.SkipWithError(("no trace at " + path).c_str());
    return;
  }
  uint64_t json_bytes = 0;
  uint64_t events = 0;
  for (auto _ : state) {
    auto trace = scaleprof::trace::read_kineto_trace(path);
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
}
BENCHMARK(BM_ReadKinetoTrace)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();

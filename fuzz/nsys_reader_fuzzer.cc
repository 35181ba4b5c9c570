// libFuzzer target for the nsys reader (trace/nsys_reader.h): the input bytes are written as a
// temporary .sqlite file, detected by content and read as an Nsight Systems export, then the
// analysis window, the temporal breakdown and the GPU metrics tracks run on what was read. Whatever the bytes (a
// corrupt page, views or virtual tables in place of tables, NULL, text or huge values, ids that point nowhere, times
// that overflow): no crash, no hang (every query has a deadline), no runaway allocation, no row multiplied (StringIds
// ids shared by many rows are refused; a forged sqlite_stat1 chooses no plan: every table is one plain scan). Seeds:
// fuzz/corpus/nsys_reader/, small hand-written fixtures (never the shared capture), among them shared-ids.sqlite and
// forged-stat1.sqlite.
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "analysis/analysis_window.h"
#include "analysis/gpu_metrics.h"
#include "analysis/temporal_breakdown.h"
#include "trace/nsys_gpu_metrics.h"
#include "trace/nsys_reader.h"
#include "trace/trace_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = "/tmp/scaleprof-nsys-fuzz-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return 0;
  size_t written = 0;
  while (written < size) {
    const ssize_t n = write(fd, data + written, size - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  close(fd);
  if (scaleprof::trace::detect_trace_format(path) == scaleprof::trace::TraceFormat::kNsysSqlite) {
    scaleprof::trace::NsysReadOptions options;
    options.limits.query_deadline = std::chrono::milliseconds(1000);
    options.limits.max_value_bytes = 1 << 20;
    auto trace = scaleprof::trace::read_nsys_sqlite(path, options);
    if (trace) {
      const auto window = scaleprof::analysis::compute_analysis_window(trace.value());
      (void)scaleprof::analysis::temporal_breakdown(trace.value(), window.rows);
    }
    // Its GPU metrics (issue 31), streamed into the tracks `trace summary` shows.
    std::optional<scaleprof::analysis::GpuMetricsTracks> tracks;
    scaleprof::trace::NsysGpuMetricsHeader header;
    int64_t skipped = 0;
    auto metrics = scaleprof::trace::read_nsys_gpu_metrics(
        path,
        [&](const scaleprof::trace::NsysGpuMetricsHeader& h) {
          header = h;
          tracks.emplace(header, 20);
        },
        [&](int64_t type, int64_t metric, int64_t ts, double value) { tracks->add(type, metric, ts, value); }, &skipped,
        options);
    if (metrics && tracks) (void)tracks->finish();
  }
  unlink(path.c_str());
  return 0;
}

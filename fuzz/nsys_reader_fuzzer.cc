// libFuzzer target for the nsys reader (trace/nsys_reader.h): the input bytes are written as a
// temporary .sqlite file, detected by content and read as an Nsight Systems export, then the
// analysis window and the temporal breakdown run on what was read. Whatever the bytes (a corrupt
// page, views or virtual tables in place of tables, NULL, text or huge values, ids that point
// nowhere, times that overflow): no crash, no hang (every query has a deadline), no runaway
// allocation, no row multiplied (StringIds ids shared by many rows are refused; a forged sqlite_stat1
// chooses no plan: every table is one plain scan). Seeds: fuzz/corpus/nsys_reader/, small hand-written
// fixtures (never the shared capture), among them shared-ids.sqlite and forged-stat1.sqlite.
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "analysis/analysis_window.h"
#include "analysis/temporal_breakdown.h"
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
  }
  unlink(path.c_str());
  return 0;
}

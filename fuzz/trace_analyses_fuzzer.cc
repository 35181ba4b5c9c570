// libFuzzer target for the reader and every analysis behind it: any bytes that the reader accepts
// as a trace must go through breakdowns, kernels, idle time, overlap, launch statistics, the
// operator table and profiler steps without a crash, a sanitizer report (use-after-free, signed
// overflow) or a hang, and then the `summary --html` page of them (report/trace_html.h), which must
// stay bounded and hold no unescaped markup from the trace. The first byte picks the reader's
// window size; the rest is the file, read and reported as users' traces are (pipeline::stream_report).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "pipeline/trace_pipeline.h"
#include "report/trace_html.h"
#include "report/trace_report.h"
#include "trace_fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace scaleprof;
  trace::LoadOptions load;
  load.threads = 1;
  load.parse.window_bytes = 64 + static_cast<size_t>(data[0]) * 64;
  const fuzzing::TraceFile file(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  if (!file.ok()) return 0;
  report::TraceReportOptions report_options;
  report_options.include_last_step = (data[0] & 1) != 0;
  auto streamed = pipeline::stream_report("summary", {file.path()}, load, report_options);
  if (!streamed.ok() || !streamed.value().any_selected) return 0;
  const report::TraceReport& report = streamed.value().report;
  // Every table must have as many cells per row as it has columns.
  for (const report::Table& t : report.tables) {
    for (const auto& row : t.rows) {
      if (row.size() != t.columns.size()) __builtin_trap();
    }
  }
  // The page: bounded whatever the trace (one rank here: its tables are cut, its charts capped), and
  // a name from the trace never opens an element: the page's only script is its own.
  const std::string page = report::render_trace_html(report, {{"fuzz"}, {}, {}});
  if (page.size() > (size_t{64} << 20)) __builtin_trap();
  size_t scripts = 0;
  for (size_t at = page.find("<script"); at != std::string::npos; at = page.find("<script", at + 1)) ++scripts;
  if (scripts != 1 || page.find("<img") != std::string::npos || page.find("<iframe") != std::string::npos) {
    __builtin_trap();
  }
  return 0;
}

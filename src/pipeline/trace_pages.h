// The scalability report's links to the traces behind it (issue 22): one `trace summary --html` page
// (report/trace_html.h) per run that recorded profiler traces, written into a folder beside the report
// page, so a reader goes from "ddp loses 12 points at 8 workers" to that run's ranks in one click.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "report/scalability_html.h"
#include "tables/run_data.h"

namespace scaleprof::pipeline {

struct TracePagesOptions {
  std::string folder;       // where the pages go (created); the report's page is beside it
  std::string href_prefix;  // how the report's page reaches that folder ("report-traces/")
  unsigned threads = 0;     // trace files read in parallel (0: one per core)
};

struct TracePages {
  std::vector<report::TraceLink> links;  // one per run with traces, in the order of data.runs
  std::vector<Diagnostic> errors;        // traces that could not be read, naming the file (on the pages too)
};

// The folder of the pages for the report page `html_path`: its name without ".html" and "-traces"
// ("out/report.html" -> "out/report-traces").
std::string trace_pages_folder(const std::string& html_path);

// Writes the page of every run of `data` with trace files. A run whose traces cannot be read still gets
// its page, naming what failed; only a page that cannot be written is an error.
Result<TracePages> write_trace_pages(const tables::ScalabilityData& data, const TracePagesOptions& options);

}  // namespace scaleprof::pipeline

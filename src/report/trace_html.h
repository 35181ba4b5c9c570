// `scaleprof trace summary --html FILE`: the trace analyses as ONE offline, self-contained page.
// It is a view of the same tables `summary` prints (trace_report.h), so every figure on it is one the
// CSV and JSON outputs hold: temporal breakdown per rank, kernel types, idle time by cause, overlap
// per rank, top kernels, collective bandwidth against message size, each rank's lateness at the
// collectives of each step (a heatmap), stragglers, and the operator table (sortable by a click on a header).
//
// It stays readable and bounded at thousands of ranks: per-rank charts bin consecutive ranks into at
// most 64 bars (the mean of each bin; the worst ranks named beside the chart), the heatmap into 64
// rows (the latest rank of each bin, so one straggler cannot vanish in a mean), and long tables are
// cut with a line saying so. No script, style or font comes from outside the file; its only script
// sorts tables. Every string from a trace (kernel, operator and file names) is escaped.
#pragma once

#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "report/trace_report.h"

namespace scaleprof::report {

struct TraceHtmlOptions {
  std::vector<std::string> inputs;  // the paths given, shown in the header
  std::vector<Diagnostic> warnings;
  std::vector<Diagnostic> errors;
};

// The page for the tables of `trace summary` (the keys of report_tables()); sections whose tables
// are absent (an analysis left out with --only, or no data of that kind) say so in one line.
std::string render_trace_html(const TraceReport& report, const TraceHtmlOptions& options);

}  // namespace scaleprof::report

// The `scaleprof trace` reports from files: the engine streams the ranks (engine/trace_stream.h) and
// the report turns their results into tables (report/trace_report.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "report/trace_report.h"
#include "trace/trace_set.h"

namespace scaleprof::pipeline {

struct StreamedReport {
  trace::StreamedSet set;                 // the files, their final ranks, errors and warnings
  std::vector<std::string> repair_notes;  // "FILE: repaired N invalid JSON spots ...", in rank order
  bool any_read = false;                  // some file was read
  bool any_selected = false;              // some file read has a rank options.ranks selects
  report::TraceReport report;             // the tables; empty unless any_selected
  std::vector<std::string> overlays;      // `critical-path` with options.path_overlay_dir: the files written
};

// The report of subcommand `report` (summary, breakdown, ..., stragglers) over the files of `paths`.
// `flops` with options.deepspeed_profile reads that DeepSpeed flops profile first (its error, naming
// the file and line, is the result's).
// A file whose rank is known when it is read and not selected is not analysed; `load.wanted_rank`
// may also skip reading files whose rank their name gives. Fails as trace::stream_traces does, and
// for `critical-path` with options.path_overlay_dir when an overlay cannot be written
// (pipeline/critical_path_overlay.h).
Result<StreamedReport> stream_report(std::string_view report, const std::vector<std::string>& paths,
                                     const trace::LoadOptions& load, const engine::TraceReportOptions& options);

}  // namespace scaleprof::pipeline

// Streams the ranks of a `scaleprof trace` report: each file is read, reduced to what the report
// needs of it (RankResults and its compact collective rows) on the thread that read it, and freed
// before that thread reads the next. Memory is (threads × one trace) plus those results, whatever the
// number of ranks (docs/scale.md); the tables are those trace_report() makes from the set loaded whole.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "report/trace_report.h"
#include "trace/trace_set.h"

namespace scaleprof::report {

struct StreamedReport {
  trace::StreamedSet set;                 // the files, their final ranks, errors and warnings
  std::vector<std::string> repair_notes;  // "FILE: repaired N invalid JSON spots ...", in rank order
  bool any_read = false;                  // some file was read
  bool any_selected = false;              // some file read has a rank options.ranks selects
  TraceReport report;                     // the tables; empty unless any_selected
};

// The report of subcommand `report` (summary, breakdown, ..., stragglers) over the files of `paths`.
// A file whose rank is known when it is read and not selected is not analysed; `load.wanted_rank`
// may also skip reading files whose rank their name gives. Fails only as trace::stream_traces does.
Result<StreamedReport> stream_report(std::string_view report, const std::vector<std::string>& paths,
                                     const trace::LoadOptions& load, const TraceReportOptions& options);

}  // namespace scaleprof::report

// `scaleprof trace what-if PATHS --what-if SPEC ...` end to end, for the CLI and the Python module
// (TraceAnalysis.what_if): the engine reads the ranks into the what-if model's timeline
// (engine/step_timeline_build.h), the model re-times their profiled steps under each change
// (analysis/whatif_gains.h) and the report makes the table (report/what_if_report.h).
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "engine/step_timeline_build.h"
#include "report/what_if_report.h"
#include "trace/trace_set.h"

namespace scaleprof::pipeline {

struct TraceWhatIf {
  engine::TimelineRead read;
  std::vector<report::TraceWhatIfRow> rows;
  report::TraceReport report;
};

// Fails with kUsage on a change not understood or one that needs two scales ("... at base": that is
// `scaleprof report --what-if`), with kBadInput when no rank has a ProfilerStep to replay, and as
// trace::stream_traces does.
Result<TraceWhatIf> trace_what_if(const std::vector<std::string>& paths, const std::vector<std::string>& what_ifs,
                                  const trace::LoadOptions& load);

}  // namespace scaleprof::pipeline

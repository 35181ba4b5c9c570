// The table of `scaleprof trace what-if` (and TraceAnalysis.what_if): each change's predicted step
// time over the traces' ranks (analysis/whatif_gains.h). The report's own what-if table, per scale
// and strategy, is in scalability_report.cc.
#pragma once

#include <string>
#include <vector>

#include "analysis/whatif_gains.h"
#include "report/trace_report.h"

namespace scaleprof::report {

struct TraceWhatIfRow {
  std::string what_if;
  int64_t ranks = 0;
  int64_t steps = 0;  // step numbers replayed
  analysis::WhatIfOutcome outcome;
};

// Two tables: "what_if", per change the measured and predicted mean step, the gain, the fastest and
// slowest predicted step; "what_if_steps", per change and profiled step the same (mean over ranks).
TraceReport what_if_tables(const std::vector<TraceWhatIfRow>& rows);

}  // namespace scaleprof::report

// The tables of `scaleprof trace diff A B` (analysis/trace_diff.h): what each side read, the steps,
// the kernels, the operators and HTA's ops_diff, each as table, CSV or JSON through the one writer (report/table.h).
// JSON shapes: docs/trace-json.md ("trace diff").
#pragma once

#include <string>
#include <vector>

#include "analysis/ops_diff.h"
#include "analysis/trace_diff.h"
#include "report/trace_report.h"

namespace scaleprof::report {

// What the report says of each side besides its figures.
struct DiffSideInfo {
  std::string label;            // "A" or "B"
  std::string input;            // the path given on the command line
  std::string strategy;         // from run.json; "" when unknown
  double samples_per_step = 0;  // 0: unknown
  std::string samples_source;   // "steps.csv", "--samples" or ""
};

TraceReport diff_tables(const analysis::TraceDiff& diff, const analysis::DiffSide& a, const analysis::DiffSide& b,
                        const DiffSideInfo& info_a, const DiffSideInfo& info_b);

// HTA's TraceDiff.ops_diff (analysis/ops_diff.h): one row per name that changed or not, by change.
Table ops_diff_table(const analysis::OpsDiff& diff);

}  // namespace scaleprof::report

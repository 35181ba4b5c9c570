// `scaleprof trace diff A B` end to end, for the CLI and the Python module: each side is a trace file,
// a directory of traces or a scaleprof run directory (docs/run-directory.md: the traces of every rank,
// the samples per step from steps.csv, the strategy from run.json); the engine streams each side into
// per-rank summaries (engine/diff_stream.h), the analysis compares them (analysis/trace_diff.h) and
// the report makes the tables (report/trace_diff_report.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/trace_diff.h"
#include "core/diagnostic.h"
#include "core/result.h"
#include "report/trace_diff_report.h"
#include "report/trace_report.h"
#include "trace/trace_set.h"

namespace scaleprof::pipeline {

struct DiffOptions {
  analysis::DiffSummaryOptions summary;
  // Samples per step of each side, overriding what a run directory's steps.csv says (--samples A,B).
  std::optional<double> samples_a, samples_b;
};

struct DiffSideRead {
  report::DiffSideInfo info;
  trace::StreamedSet set;                 // the files, their final ranks, errors and warnings
  std::vector<std::string> repair_notes;  // "FILE: repaired N invalid JSON spots ..."
  std::vector<std::string> run_warnings;  // what the run-directory reader met
  analysis::DiffSide side;
};

struct DiffReport {
  DiffSideRead a, b;
  // What the sides do not share, each naming its side: a side unreadable or a rank without
  // ProfilerSteps (kError: exit 3), different ranks, steps or strategies, samples per step unknown on
  // one side (kWarning).
  std::vector<Diagnostic> problems;
  bool complete = false;  // both sides have ranks: the tables below hold the comparison
  report::TraceReport report;
};

// Fails when a side cannot be listed (no such path, a directory without traces) or its files claim
// one rank twice, naming the side; a side whose every file fails to read is reported in `problems`.
Result<DiffReport> diff_report(const std::string& a, const std::string& b, const trace::LoadOptions& load,
                               const DiffOptions& options);

}  // namespace scaleprof::pipeline

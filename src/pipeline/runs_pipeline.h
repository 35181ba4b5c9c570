// `scaleprof runs` end to end, for the CLI: the recorded runs of a root (scaleprof run directories,
// then itwinai's CSV layout when no experiment is asked for) as one table, one row per run.
#pragma once

#include <string>

#include "core/message_sink.h"
#include "core/result.h"
#include "report/table.h"

namespace scaleprof::pipeline {

struct RunsOptions {
  std::string root;  // empty: the run context's default ($SCALEPROF_ROOT or ./scalability-metrics)
  std::string experiment;
  std::string format = "table";
  bool quiet = false;  // no warnings
};

struct RunsTable {
  report::Table table;
  report::Format format = report::Format::kTable;
};

// Warnings (unreadable entries, torn lines, failed writes) through `message`, unless quiet.
Result<RunsTable> list_runs(const RunsOptions& options, const MessageSink& message);

}  // namespace scaleprof::pipeline

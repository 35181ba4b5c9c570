// The scalability report's pipeline, for the CLI (`scaleprof report`, `generate-scalability-report`)
// and any other caller: read the runs (an MLflow store, or run directories and itwinai's CSV layout),
// run the trace stage over their profiler traces (engine/run_trace_metrics.h) and analyse them
// (analysis/scalability.h). Where the runs come from is chosen first, from the front-end's flags and
// environment (pipeline/report_source.h). Rendering is the caller's (report/scalability_report.h and
// friends).
#pragma once

#include <string>
#include <vector>

#include "analysis/scalability.h"
#include "core/result.h"
#include "importers/run_data_reader.h"
#include "tables/run_data.h"

namespace scaleprof::pipeline {

struct ScalabilityReportOptions {
  importers::ScalabilityReadOptions read;  // run directories and itwinai CSVs, when tracking_uri is empty
  std::string tracking_uri;                // an MLflow store to read instead (choose_report_source checks it)
  std::string mlflow_experiment;           // its experiment; empty: MlflowReadOptions' default
  unsigned threads = 0;                    // trace files read in parallel (0: one per core)
  analysis::ScalabilityOptions analysis;
  // `--what-if` texts (analysis/whatif_gains.h: parse_what_if), parsed into analysis.what_ifs; one that
  // is not understood fails the build with kUsage before anything is read.
  std::vector<std::string> what_ifs;
  // itwinai keeps every epoch: with skip_epochs 0, also the means with one warm-up epoch skipped
  // (ScalabilityReport::warmup_changes).
  bool warmup_note = false;
};

struct ScalabilityReport {
  tables::ScalabilityData data;
  analysis::ScalabilityAnalysis analysis;
  std::string source;  // what was read: read.root, or the MLflow store's URI without credentials
  // With warmup_note: "<series> at N workers: <mean> -> <mean without warm-up> (+x.x%)", "; "-joined;
  // empty when nothing changes or not asked.
  std::string warmup_changes;
};

// Fails when the data cannot be read (the store cannot be opened, the root cannot be listed); what
// the runs lack or reject is in data's and analysis's warnings and errors.
Result<ScalabilityReport> build_scalability_report(const ScalabilityReportOptions& options);

// A report with no runs is no report: Error{"no runs found under SOURCE", kNotFound}. The front-ends
// check it once they have shown the data's warnings and notes.
Status runs_found(const ScalabilityReport& report);

}  // namespace scaleprof::pipeline

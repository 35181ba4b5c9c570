#include "pipeline/scalability_pipeline.h"

#include <fmt/format.h>

#include <utility>

#include "core/credential_redaction.h"
#include "core/seconds_text.h"
#include "engine/run_trace_metrics.h"
#include "importers/mlflow/mlflow_importer.h"

namespace scaleprof::pipeline {

namespace {

// How much the warm-up epoch weighs in the means itwinai reports (it keeps every epoch).
std::string warmup_changes(const tables::ScalabilityData& data, const analysis::ScalabilityAnalysis& analysis) {
  analysis::ScalabilityOptions skip_one;
  skip_one.skip_epochs = 1;
  const analysis::ScalabilityAnalysis other = analysis::analyse_scalability(data, skip_one);
  std::string changes;
  for (const analysis::ScaleGroup& g : analysis.groups) {
    for (const analysis::ScaleGroup& h : other.groups) {
      if (h.series != g.series || h.workers != g.workers || h.nodes != g.nodes) continue;
      if (g.epoch.count == 0 || h.epoch.count == 0) continue;
      changes += fmt::format("{}{} at {} worker{}: {} -> {} ({:+.1f}%)", changes.empty() ? "" : "; ", g.series,
                             g.workers, g.workers == 1 ? "" : "s", seconds_text(g.epoch.mean),
                             seconds_text(h.epoch.mean), (h.epoch.mean / g.epoch.mean - 1.0) * 100.0);
    }
  }
  return changes;
}

}  // namespace

Result<ScalabilityReport> build_scalability_report(const ScalabilityReportOptions& options) {
  ScalabilityReport out;
  analysis::ScalabilityOptions analysis_options = options.analysis;
  for (const std::string& text : options.what_ifs) {
    Result<analysis::WhatIfSpec> spec = analysis::parse_what_if(text);
    if (!spec) return spec.error();
    analysis_options.what_ifs.push_back(std::move(spec).value());
  }
  Result<tables::ScalabilityData> loaded = Error{""};
  if (!options.tracking_uri.empty()) {
    importers::MlflowReadOptions mlflow;
    mlflow.tracking_uri = options.tracking_uri;
    if (!options.mlflow_experiment.empty()) mlflow.experiment_name = options.mlflow_experiment;
    mlflow.run_names = options.read.run_names;
    loaded = importers::read_mlflow_data(mlflow);
    out.source = redact_url(options.tracking_uri);
  } else {
    loaded = importers::read_scalability_data(options.read);
    out.source = options.read.root;
  }
  if (!loaded) return loaded.error();
  out.data = std::move(loaded).value();
  engine::TraceStageOptions trace_options;
  trace_options.threads = options.threads;
  trace_options.what_if_targets = analysis::what_if_targets(analysis_options.what_ifs);
  engine::add_trace_metrics(&out.data, trace_options);
  std::vector<const tables::RunTimeline*> timelines;
  for (const tables::RunData& run : out.data.runs) timelines.push_back(&run.timeline);
  if (Status ran = analysis::check_what_ifs_apply(analysis_options.what_ifs, timelines); !ran) return ran.error();
  out.analysis = analysis::analyse_scalability(out.data, analysis_options);
  if (options.warmup_note && options.analysis.skip_epochs == 0)
    out.warmup_changes = warmup_changes(out.data, out.analysis);
  return out;
}

Status runs_found(const ScalabilityReport& report) {
  if (!report.data.runs.empty()) return Ok{};
  return Error{fmt::format("no runs found under {}", report.source), ErrorKind::kNotFound};
}

}  // namespace scaleprof::pipeline

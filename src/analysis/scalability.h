// The scalability analysis: the runs read by the importers (tables/run_data.h) grouped per
// strategy x workers (x nodes), with epoch statistics, speedup, efficiency, GPU utilization and
// energy per group, and per strategy an Amdahl fit and where the efficiency lost between the
// smallest and the largest scale went. Numbers only: the report (report/scalability_report.h,
// report/scalability_explanation.h) words and draws them.
//
// Formulas are in analysis/scaling.h and docs/report.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/scaling.h"
#include "analysis/scaling_loss.h"
#include "analysis/straggler_causes.h"
#include "analysis/throughput.h"
#include "analysis/whatif_gains.h"
#include "tables/run_data.h"

namespace scaleprof::analysis {

using tables::ComputationSums;
using tables::RunData;
using tables::ScalabilityData;
using tables::TraceSums;

struct ScalabilityOptions {
  int skip_epochs = 1;  // warm-up epochs dropped from the start of every run
  // itwinai's --include-communication: also show its deprecated computation-vs-communication report.
  bool include_communication = false;
  // The user's what-ifs (`--what-if`), each re-timed at every scale of every series (whatif_gains.h).
  std::vector<WhatIfSpec> what_ifs;
};

// One configuration: a strategy at a worker count and node count, repetitions pooled.
struct ScaleGroup {
  std::string series;  // strategy (experiment/strategy when several experiments are read)
  int64_t workers = 0;
  int64_t nodes = 0;
  std::vector<size_t> runs;  // indices into ScalabilityData::runs: the runs its figures are made of
  // Runs of this configuration that failed (tables::run_failed), left out of its figures: a run that
  // completed wins over one that failed, and a failed run's finished epochs alone are no measurement.
  std::vector<size_t> failed_runs;
  // Every run of the configuration failed: it has no figures, is shown as FAILED, and each strategy's
  // speedup and efficiency are measured against its smallest scale that did not fail.
  bool failed = false;
  int64_t epochs_read = 0;  // before warm-up skipping
  SampleStats epoch;        // pooled kept epochs of all runs, seconds
  ScalingRow scaling;       // against the series' smallest worker count
  // Share of the kept epochs' time spent outside the training steps (step records: epoch time minus
  // the steps of the rank that set it); NaN unless every kept epoch has step records.
  double outside_steps_share = tables::kNaN;
  GroupThroughput throughput;  // samples per second (analysis/throughput.h)
  // GPU data (NaN when the group has none)
  int64_t gpus = 0;                       // GPU series (devices x runs)
  double utilization_pct = tables::kNaN;  // mean over every sample of every GPU of every run
  double energy_wh_total = tables::kNaN;  // all runs of the group
  double energy_wh_per_run = tables::kNaN;
  double energy_wh_per_epoch = tables::kNaN;  // mean over runs of run energy / epochs of the run
  std::string energy_method;                  // "counter", "trapezoid", "rectangle" or a mix "a+b"
  // Traces
  std::optional<TraceSums> traces;
  // Peak bytes allocated per device other than the CPU ([memory] events), the largest and smallest
  // over the ranks of the group's runs; -1 where no trace has them (issue 23).
  int64_t peak_device_memory_bytes = -1;
  int64_t min_peak_device_memory_bytes = -1;
  double peak_device_memory_gb = tables::kNaN;  // the largest, in GB (1e9 B), for the bar plot
  // FLOPs of the profiled steps (RunData::step_flops), the runs' sums: achieved TFLOP/s per GPU
  // (FLOPs over rank-seconds of steps) and MFU in percent (time at peak over time taken); NaN where no
  // trace recorded shapes, or (MFU) a device or dtype has no peak (issue 23).
  double step_flops = tables::kNaN;
  double flop_step_ns = 0;
  double flop_ideal_ns = 0;
  double tflops_per_gpu = tables::kNaN;
  double mfu_pct = tables::kNaN;
  // The rank the others waited for most at the matched collectives, the runs' waits summed (-1 none),
  // and the decomposed rank's operators, self time as a share of its decomposed steps, runs pooled.
  int64_t straggler_rank = -1;
  std::vector<OperatorShare> operators;
  // The pipeline of the decomposed rank (RunData::pipeline_stages, _micro_batches: the first run with one;
  // 0 / -1 none, unknown), and the named parts of its exposed communication (RunData::communication_parts,
  // FSDP's exposed collectives), runs pooled, as shares of the decomposed steps.
  int64_t pipeline_stages = 0;
  int64_t pipeline_micro_batches = -1;
  std::vector<NamedShare> communication_parts;
  // The runs' profiled steps as the what-if model reads them (RunData::timeline), runs with steps only.
  std::vector<const tables::RunTimeline*> timelines;
  // itwinai's computation fraction (pooled sums)
  std::optional<ComputationSums> computation;
  double computation_fraction = tables::kNaN;
  // itwinai's deprecated "computation vs communication" (--include-communication): computation over
  // computation + communication self time (ComputationSums::communication_ns).
  double computation_vs_communication = tables::kNaN;

  // Share of the summed GPU span; NaN without traces or device work.
  double trace_share(int64_t TraceSums::*part) const;
};

struct GpuDeviceRow {
  std::string series;
  int64_t workers = 0;
  std::string run;
  std::string device;
  int64_t samples = 0;
  double utilization_pct = tables::kNaN;
  double energy_wh = tables::kNaN;
  std::string method;
};

struct SeriesResult {
  std::string series;
  AmdahlFit amdahl;
  int64_t projected_workers[2] = {0, 0};  // 2x and 4x the largest measured worker count
  double projected_speedup[2] = {tables::kNaN, tables::kNaN};
  double projected_efficiency[2] = {tables::kNaN, tables::kNaN};
  // Where scaling is lost (analysis/scaling_loss.h): one entry per measured scale above the smallest,
  // in worker order, each against the smallest; the last is the largest scale.
  std::vector<ScaleLoss> losses;
  // The epoch time at projected_workers from the what-if model (whatif_gains.h: project_epoch), from the
  // smallest and the largest scale; not ok without profiled steps at both.
  ModelProjection model_projection[2];
  bool has_loss() const { return !losses.empty(); }
  const ScaleLoss& largest_loss() const { return losses.back(); }
};

// A rank's slow steps and what its GPU did in them (straggler_causes.h), in one run of a scale.
struct StragglerCauseRow {
  std::string series;
  int64_t workers = 0;
  std::string run;
  std::string gpu_source;  // which samples were the rank's ("rank-00001/gpu.csv gpu 0")
  StragglerCause cause;
};

// One --what-if at one scale of a series.
struct WhatIfRow {
  std::string series;
  int64_t workers = 0;
  WhatIfSpec spec;
  WhatIfOutcome outcome;
};

struct ScalabilityAnalysis {
  ScalabilityOptions options;
  std::vector<ScaleGroup> groups;  // by series, then workers, then nodes
  std::vector<SeriesResult> series;
  std::vector<BestAtScale> best;
  std::vector<SeriesThroughput> throughput;  // per series with samples: weak or strong scaling
  std::vector<GpuDeviceRow> devices;
  std::vector<WhatIfRow> what_ifs;                  // per --what-if, series and scale with profiled steps
  std::vector<StragglerCauseRow> straggler_causes;  // per run used, its ranks with slow steps
  std::vector<Diagnostic> warnings;                 // reader warnings plus the report's own ("No GPU data found", ...)
  std::vector<Diagnostic> errors;                   // reader errors (file:line), and configurations that failed
  bool any_failed_run = false;                      // some run failed (left out, or its configuration FAILED)
  bool any_failed_group = false;                    // some configuration failed (every run of it)
  std::vector<const RunData*> runs;                 // every run read, in reading order
  std::vector<std::string> run_epochs_note;         // per run: epochs read/used (parallel to runs)
  std::vector<int64_t> run_epochs_used;
};

// `data` must outlive the result (runs are referenced).
// The smallest worker count of `series` that has epoch times (the baseline of its speedup and
// efficiency), 0 when none has.
int64_t baseline_workers(const ScalabilityAnalysis& analysis, const std::string& series);

// "status failed, exit 1, log PATH": what is known of why a run failed, for the messages and tables.
std::string failure_words(const RunData& run);

ScalabilityAnalysis analyse_scalability(const ScalabilityData& data, const ScalabilityOptions& options);

}  // namespace scaleprof::analysis

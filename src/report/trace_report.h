// Turns trace analyses into Tables, one function per `scaleprof trace` subcommand.
//
// Each report is made in two steps: every selected rank is reduced to its small results
// (engine/rank_results.h) and its compact collective rows while the ranks are read, one at a time
// (engine/trace_stream.h), then the tables are assembled here from those, in rank order
// (pipeline/trace_pipeline.h does both). The keys in `keys` name the tables in JSON output.
// Implementations live in trace_<subcommand>_report.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis_window.h"
#include "analysis/collective_calls.h"
#include "analysis/collective_match.h"
#include "analysis/collective_rows.h"
#include "analysis/stragglers.h"
#include "engine/rank_results.h"
#include "engine/rank_results_store.h"
#include "report/table.h"
#include "trace/deepspeed_profile.h"

namespace scaleprof::report {

// The analysis names `summary --only` accepts, in the order summary prints them.
const std::vector<std::string>& summary_analysis_names();

// The options of a `scaleprof trace` report: how each rank is reduced (the engine's options, reached
// only through reduce_options(), which adds what the report's own options imply of them) and what
// the tables need besides.
struct TraceReportOptions : private engine::ReduceOptions {
  using ReduceOptions::consecutive_kernel_delay_ns;
  using ReduceOptions::include_last_step;
  using ReduceOptions::kernel_duration_ratio;
  using ReduceOptions::launch_top;
  using ReduceOptions::max_queue_length;
  using ReduceOptions::memory_points;
  using ReduceOptions::path_window;
  using ReduceOptions::ranks;
  using ReduceOptions::sort_by;
  using ReduceOptions::top;
  // For summary: the analyses to run (summary_analysis_names()); empty: all.
  std::vector<std::string> only;
  // Node map for collectives when the traces carry no host names: node = rank / gpus_per_node.
  int64_t gpus_per_node = 0;
  // Collectives, stragglers: subtract each host's estimated clock offset (false: --no-align, every
  // cross-rank figure on the raw clocks, the offsets still estimated and shown).
  bool align_clocks = true;
  // `trace critical-path`: list each path's edges (--events, the Python API).
  bool path_events = false;
  // `trace critical-path --overlay DIR`: the pipeline writes each rank's overlay trace there
  // (trace/trace_overlay.h); it needs the edges, so they are kept.
  std::string path_overlay_dir;
  // `trace flops` (issue 23): the device whose peaks MFU uses instead of the trace's
  // deviceProperties name, and one peak (TFLOP/s) for every dtype instead of the table's (0: none).
  std::string flops_device;
  double peak_tflops = 0;
  // `trace flops --deepspeed-profile FILE` (issue 31): DeepSpeed's flops profile, read by the pipeline
  // from `deepspeed_profile`, shown beside the trace's FLOPs per forward pass; `deepspeed_forwards`:
  // the forward passes it covers (the DeepSpeed engine profiles one).
  std::string deepspeed_profile;
  std::shared_ptr<const trace::DsProfile> deepspeed;
  int64_t deepspeed_forwards = 1;

  // What the engine needs to reduce each rank for these tables.
  engine::ReduceOptions reduce_options() const;
};

// The sections of a report: `summary` has every one (or those of --only) after its inputs table;
// every other subcommand is its own section.
struct ReportSections {
  bool inputs = false;
  bool breakdown = false;
  bool kernels = false;
  bool idle = false;
  bool overlap = false;
  bool launch = false;
  bool ops = false;
  bool steps = false;
  bool collectives = false;
  bool stragglers = false;
  bool phases = false;            // `trace phases` only (not in summary)
  bool decompose = false;         // `trace decompose` only: per-rank parts, then the waits of the matched collectives
  bool memory = false;            // [memory] events: timeline, peaks, holders (issue 23)
  bool critical_path = false;     // per-rank paths, then the cross-rank path at the matched collectives (issue 23)
  bool counters = false;          // queue length per stream, memcpy bandwidth per direction (issue 23)
  bool counter_series = false;    // "counters_series" (the Python API's time series): the step functions too
  bool flops = false;             // `trace flops`, and summary's FLOPs line (issue 23)
  bool fsdp = false;              // `trace fsdp` only: exposed collectives per group, phase and layer (issue 33)
  bool pipeline = false;          // `trace pipeline` only: P2P waits per step, stages across ranks (issue 33)
  bool pipeline_summary = false;  // summary: one row per pipeline the ranks form, none when they form none

  // What the engine keeps of each rank for these sections: the per-rank results, and the compact
  // collective rows where collectives are matched across ranks.
  engine::RankAnalyses rank_analyses() const;
};

// `report`: a `scaleprof trace` subcommand name; unknown names select nothing.
ReportSections sections_of(std::string_view report, const TraceReportOptions& options);

struct TraceReport {
  std::vector<Table> tables;
  std::vector<std::string> keys;  // JSON keys, one per table
  void add(std::string key, Table table) {
    keys.push_back(std::move(key));
    tables.push_back(std::move(table));
  }
};

// The tables of each section.
TraceReport inputs_tables(const engine::RankStore& ranks);
TraceReport breakdown_tables(const engine::RankStore& ranks);
TraceReport kernels_tables(const engine::RankStore& ranks);
TraceReport idle_tables(const engine::RankStore& ranks);
TraceReport overlap_tables(const engine::RankStore& ranks);
TraceReport launch_tables(const engine::RankStore& ranks);
TraceReport ops_tables(const engine::RankStore& ranks, const TraceReportOptions& options);
TraceReport steps_tables(const engine::RankStore& ranks);
// `trace phases` and `trace decompose` (trace_phases_report.cc); decompose also uses the compact rows
// of the same ranks, for each rank's wait at the matched collectives of each step.
TraceReport phases_tables(const engine::RankStore& ranks);
TraceReport decompose_tables(const engine::RankStore& ranks, const analysis::CollectiveRows& rows,
                             const TraceReportOptions& options);
// `trace memory` (trace_memory_report.cc, issue 23): per rank and device from [memory] events; in
// summary (`subcommand` false) only where some rank has them.
TraceReport memory_tables(const engine::RankStore& ranks, bool subcommand);
// `trace critical-path` (trace_critical_path_report.cc): per-rank paths from `ranks`, the cross-rank
// path and each rank's wait from the compact rows of the same ranks.
TraceReport critical_path_tables(const engine::RankStore& ranks, const analysis::CollectiveRows& rows,
                                 const TraceReportOptions& options);
// `trace counters` (trace_counters_report.cc): queue length per stream, the time it was full, memcpy
// bandwidth per direction; and the step functions themselves (the Python API's time series).
TraceReport counters_tables(const engine::RankStore& ranks);
TraceReport counter_series_tables(const engine::RankStore& ranks);
// `trace flops` (trace_flops_report.cc): per rank, step, operator and kernel; `ranks_only`: summary's
// per-rank table, and only when some rank has FLOPs.
TraceReport flops_tables(const engine::RankStore& ranks, const TraceReportOptions& options, bool ranks_only);
// `trace flops --deepspeed-profile` (trace_deepspeed_report.cc, issue 31): DeepSpeed's flops profile
// (options.deepspeed) beside the trace's forward FLOPs, in total and per module; empty without one.
TraceReport deepspeed_tables(const engine::RankStore& ranks, const TraceReportOptions& options);
// `trace fsdp` (trace_fsdp_report.cc, issue 33): exposed collectives per process group, phase and type,
// per FSDP layer, and per rank.
TraceReport fsdp_tables(const engine::RankStore& ranks);
// `trace pipeline` (trace_pipeline_report.cc, issue 33): the stages from the ranks' send/recv, each
// stage's bubble per step beside (p-1)/(m+p-1), the slowest stage, and notes on unusable input.
TraceReport pipeline_tables(const engine::RankStore& ranks);
// summary's line of it: the "pipelines" table alone, and only when the ranks' send/recv form a
// pipeline (a trace without one adds nothing to the summary).
TraceReport pipeline_summary_tables(const engine::RankStore& ranks);
// Collectives and stragglers from one set of compact rows (matched once; the rows are freed before
// the tables are rendered).
TraceReport collective_tables(analysis::CollectiveRows rows, const ReportSections& sections,
                              const TraceReportOptions& options);

// Every table of `sections`, in summary's order: the per-rank sections from `ranks` (selected,
// rank order), then collectives and stragglers from `rows` (the same ranks).
TraceReport report_tables(const ReportSections& sections, const engine::RankStore& ranks, analysis::CollectiveRows rows,
                          const TraceReportOptions& options);

// Collectives matched across ranks and their bandwidth (trace_collectives_report.cc), and the
// stragglers at them (trace_stragglers_report.cc), from the compact per-rank rows (streamed, or
// merged from shards).
TraceReport collectives_tables(const std::vector<analysis::RankCollectives>& ranks, const TraceReportOptions& options);
TraceReport stragglers_tables(const std::vector<analysis::RankCollectives>& ranks, const TraceReportOptions& options);
// The same from the compact rows, which are freed once the tables' data is made (before rendering).
TraceReport collectives_tables(analysis::CollectiveRows rows, const TraceReportOptions& options);
TraceReport stragglers_tables(analysis::CollectiveRows rows, const TraceReportOptions& options);
// The tables of the matched calls (kept alive by the per-call-per-rank table, written row by row) and
// of the stragglers found in them.
TraceReport collectives_tables(const std::shared_ptr<const analysis::CollectiveAnalysis>& matched);
TraceReport stragglers_tables(analysis::StragglerAnalysis stragglers);

}  // namespace scaleprof::report

// Turns trace analyses into Tables, one function per `scaleprof trace` subcommand.
//
// Each report is made in two steps: every selected rank is reduced to its small results
// (rank_results.h) and its compact collective rows, then the tables are assembled from those in rank
// order. trace_stream.h does the first step while the ranks are read, one at a time; the
// `*_report(const TraceSet&)` functions do it over a set loaded whole. Both give the same tables.
// The keys in `keys` name the tables in JSON output. Implementations live in
// trace_<subcommand>_report.cc.
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
#include "trace/trace_set.h"

namespace scaleprof::report {

// The analysis names `summary --only` accepts, in the order summary prints them.
const std::vector<std::string>& summary_analysis_names();

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
TraceReport ops_tables(const engine::RankStore& ranks, const engine::TraceReportOptions& options);
TraceReport steps_tables(const engine::RankStore& ranks);
// `trace phases` and `trace decompose` (trace_phases_report.cc); decompose also uses the compact rows
// of the same ranks, for each rank's wait at the matched collectives of each step.
TraceReport phases_tables(const engine::RankStore& ranks);
TraceReport decompose_tables(const engine::RankStore& ranks, const analysis::CollectiveRows& rows,
                             const engine::TraceReportOptions& options);
// `trace memory` (trace_memory_report.cc, issue 23): per rank and device from [memory] events; in
// summary (`subcommand` false) only where some rank has them.
TraceReport memory_tables(const engine::RankStore& ranks, bool subcommand);
// `trace critical-path` (trace_critical_path_report.cc): per-rank paths from `ranks`, the cross-rank
// path and each rank's wait from the compact rows of the same ranks.
TraceReport critical_path_tables(const engine::RankStore& ranks, const analysis::CollectiveRows& rows,
                                 const engine::TraceReportOptions& options);
// `trace counters` (trace_counters_report.cc): queue length per stream, the time it was full, memcpy
// bandwidth per direction; and the step functions themselves (the Python API's time series).
TraceReport counters_tables(const engine::RankStore& ranks);
TraceReport counter_series_tables(const engine::RankStore& ranks);
TraceReport counters_report(const trace::TraceSet& set, const engine::TraceReportOptions& options);
// `trace flops` (trace_flops_report.cc): per rank, step, operator and kernel; `ranks_only`: summary's
// per-rank table, and only when some rank has FLOPs.
TraceReport flops_tables(const engine::RankStore& ranks, const engine::TraceReportOptions& options, bool ranks_only);
// `trace flops --deepspeed-profile` (trace_deepspeed_report.cc, issue 31): DeepSpeed's flops profile
// (options.deepspeed) beside the trace's forward FLOPs, in total and per module; empty without one.
TraceReport deepspeed_tables(const engine::RankStore& ranks, const engine::TraceReportOptions& options);
// `trace fsdp` (trace_fsdp_report.cc, issue 33): exposed collectives per process group, phase and type,
// per FSDP layer, and per rank.
TraceReport fsdp_tables(const engine::RankStore& ranks);
// `trace pipeline` (trace_pipeline_report.cc, issue 33): the stages from the ranks' send/recv, each
// stage's bubble per step beside (p-1)/(m+p-1), the slowest stage, and notes on unusable input.
TraceReport pipeline_tables(const engine::RankStore& ranks);
// Collectives and stragglers from one set of compact rows (matched once; the rows are freed before
// the tables are rendered).
TraceReport collective_tables(analysis::CollectiveRows rows, const engine::ReportSections& sections,
                              const engine::TraceReportOptions& options);

// Every table of `sections`, in summary's order: the per-rank sections from `ranks` (selected,
// rank order), then collectives and stragglers from `rows` (the same ranks).
TraceReport report_tables(const engine::ReportSections& sections, const engine::RankStore& ranks,
                          analysis::CollectiveRows rows, const engine::TraceReportOptions& options);
// The report of subcommand `report` over the selected ranks of a set loaded whole.
TraceReport trace_report(std::string_view report, const trace::TraceSet& set,
                         const engine::TraceReportOptions& options);

TraceReport breakdown_report(const trace::TraceSet& set, const engine::TraceReportOptions& options);
TraceReport kernels_report(const trace::TraceSet& set, const engine::TraceReportOptions& options);
TraceReport idle_report(const trace::TraceSet& set, const engine::TraceReportOptions& options);
TraceReport overlap_report(const trace::TraceSet& set, const engine::TraceReportOptions& options);
TraceReport launch_report(const trace::TraceSet& set, const engine::TraceReportOptions& options);
TraceReport ops_report(const trace::TraceSet& set, const engine::TraceReportOptions& options);
TraceReport steps_report(const trace::TraceSet& set, const engine::TraceReportOptions& options);
// Collectives matched across ranks and their bandwidth (trace_collectives_report.cc).
TraceReport collectives_report(const trace::TraceSet& set, const engine::TraceReportOptions& options);
// Stragglers at the collectives (trace_stragglers_report.cc).
TraceReport stragglers_report(const trace::TraceSet& set, const engine::TraceReportOptions& options);
// The compact per-rank rows both need, and the tables made from them (so rows reduced elsewhere,
// streamed or merged from shards, give the same tables).
std::vector<analysis::RankCollectives> rank_collectives(const trace::TraceSet& set,
                                                        const engine::TraceReportOptions& options);
TraceReport collectives_tables(const std::vector<analysis::RankCollectives>& ranks,
                               const engine::TraceReportOptions& options);
TraceReport stragglers_tables(const std::vector<analysis::RankCollectives>& ranks,
                              const engine::TraceReportOptions& options);
// The same from the compact rows, which are freed once the tables' data is made (before rendering).
TraceReport collectives_tables(analysis::CollectiveRows rows, const engine::TraceReportOptions& options);
TraceReport stragglers_tables(analysis::CollectiveRows rows, const engine::TraceReportOptions& options);
// The tables of the matched calls (kept alive by the per-call-per-rank table, written row by row) and
// of the stragglers found in them.
TraceReport collectives_tables(const std::shared_ptr<const analysis::CollectiveAnalysis>& matched);
TraceReport stragglers_tables(analysis::StragglerAnalysis stragglers);
// Everything above, plus what was read (events, ranks, devices), for every selected rank.
TraceReport summary_report(const trace::TraceSet& set, const engine::TraceReportOptions& options);

}  // namespace scaleprof::report

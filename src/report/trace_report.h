// Turns trace analyses into Tables, one function per `scaleprof trace` subcommand.
//
// Each function runs its analyses over the selected ranks of a loaded TraceSet and returns the tables
// to print (a per-rank table, and where useful a cross-rank one). The keys in `keys` name the tables
// in JSON output. Implementations live in trace_<subcommand>_report.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis_window.h"
#include "analysis/collective_calls.h"
#include "analysis/collective_rows.h"
#include "report/table.h"
#include "trace/trace_set.h"

namespace scaleprof::report {

struct TraceReportOptions {
  std::vector<int64_t> ranks;                    // empty: all ranks
  int top = 10;                                  // rows per group in kernel and operator tables
  int64_t consecutive_kernel_delay_ns = 30'000;  // idle-time breakdown threshold (HTA default 30 us)
  bool include_last_step = false;                // HTA drops the last ProfilerStep by default
  std::string sort_by = "self_cpu";              // operator table sort key
  // Analysis windows of the selected ranks, in rank order, when already computed (summary computes
  // them once for all its reports); null means each report computes its own.
  const std::vector<analysis::AnalysisWindow>* windows = nullptr;
  // For summary: the analyses to run (breakdown, kernels, idle, overlap, launch, ops, steps); empty: all.
  std::vector<std::string> only;
  // Node map for collectives when the traces carry no host names: node = rank / gpus_per_node.
  int64_t gpus_per_node = 0;
};

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

// The ranks of `set` selected by options.ranks, in rank order.
std::vector<const trace::RankTrace*> selected_ranks(const trace::TraceSet& set, const TraceReportOptions& options);

TraceReport breakdown_report(const trace::TraceSet& set, const TraceReportOptions& options);
TraceReport kernels_report(const trace::TraceSet& set, const TraceReportOptions& options);
TraceReport idle_report(const trace::TraceSet& set, const TraceReportOptions& options);
TraceReport overlap_report(const trace::TraceSet& set, const TraceReportOptions& options);
TraceReport launch_report(const trace::TraceSet& set, const TraceReportOptions& options);
TraceReport ops_report(const trace::TraceSet& set, const TraceReportOptions& options);
TraceReport steps_report(const trace::TraceSet& set, const TraceReportOptions& options);
// Collectives matched across ranks and their bandwidth (trace_collectives_report.cc).
TraceReport collectives_report(const trace::TraceSet& set, const TraceReportOptions& options);
// Stragglers at the collectives (trace_stragglers_report.cc).
TraceReport stragglers_report(const trace::TraceSet& set, const TraceReportOptions& options);
// The compact per-rank rows both need, and the tables made from them (so rows reduced elsewhere,
// streamed or merged from shards, give the same tables).
std::vector<analysis::RankCollectives> rank_collectives(const trace::TraceSet& set, const TraceReportOptions& options);
TraceReport collectives_tables(const std::vector<analysis::RankCollectives>& ranks, const TraceReportOptions& options);
TraceReport stragglers_tables(const std::vector<analysis::RankCollectives>& ranks, const TraceReportOptions& options);
// The same from the compact rows, which are freed once the tables' data is made (before rendering).
TraceReport collectives_tables(analysis::CollectiveRows rows, const TraceReportOptions& options);
TraceReport stragglers_tables(analysis::CollectiveRows rows, const TraceReportOptions& options);
// Everything above, plus what was read (events, ranks, devices), for every selected rank.
TraceReport summary_report(const trace::TraceSet& set, const TraceReportOptions& options);

}  // namespace scaleprof::report

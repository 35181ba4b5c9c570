// `scaleprof trace summary`: what was read (events, ranks, devices) and every analysis below it; and
// the assembly shared by every report: the tables of the selected sections from the ranks' results.
#include <fmt/format.h>

#include <algorithm>

#include "engine/rank_analysis.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

TraceReport inputs_tables(const engine::RankStore& ranks) {
  Table t;
  t.title = "Inputs";
  t.columns = {{"rank", "Rank"},         {"file", "File"},       {"events", "Events"},     {"kept", "Kept"},
               {"rejected", "Rejected"}, {"repairs", "Repairs"}, {"json_mb", "JSON (MB)"}, {"devices", "Devices"}};
  t.set_importance(Importance::kKey, {"rank"});
  t.set_importance(Importance::kUseful, {"file", "devices"});
  t.set_importance(Importance::kDetail, {"events", "kept", "json_mb"});
  t.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      const trace::ReadStats& s = r.inputs.stats;
      visit({r.rank, r.inputs.path, s.events_total, s.events_kept, s.rejected_events, s.repairs,
             Cell(static_cast<double>(s.json_bytes) / 1e6, 1),
             r.inputs.devices.empty() ? Cell("none") : Cell(r.inputs.devices)});
    });
  };
  TraceReport report;
  report.add("inputs", std::move(t));
  return report;
}

namespace {

void append(TraceReport* into, TraceReport from) {
  for (size_t i = 0; i < from.tables.size(); ++i) into->add(std::move(from.keys[i]), std::move(from.tables[i]));
}

}  // namespace

const std::vector<std::string>& summary_analysis_names() {
  static const std::vector<std::string> kNames = {"breakdown",     "kernels",  "idle",        "overlap",    "launch",
                                                  "ops",           "steps",    "collectives", "stragglers", "memory",
                                                  "critical-path", "counters", "flops"};
  return kNames;
}

TraceReport report_tables(const engine::ReportSections& sections, const engine::RankStore& ranks,
                          analysis::CollectiveRows rows, const engine::TraceReportOptions& options) {
  TraceReport report;
  if (sections.inputs) append(&report, inputs_tables(ranks));
  if (sections.breakdown) append(&report, breakdown_tables(ranks));
  if (sections.kernels) append(&report, kernels_tables(ranks));
  if (sections.idle) append(&report, idle_tables(ranks));
  if (sections.overlap) append(&report, overlap_tables(ranks));
  if (sections.launch) append(&report, launch_tables(ranks));
  if (sections.ops) append(&report, ops_tables(ranks, options));
  if (sections.steps) append(&report, steps_tables(ranks));
  if (sections.phases) append(&report, phases_tables(ranks));
  if (sections.decompose) append(&report, decompose_tables(ranks, rows, options));
  if (sections.critical_path) append(&report, critical_path_tables(ranks, rows, options));
  // Issue 23, counters.
  if (sections.counters) append(&report, counters_tables(ranks));
  if (sections.counter_series) append(&report, counter_series_tables(ranks));
  if (sections.flops) append(&report, flops_tables(ranks, options, sections.inputs));
  if (sections.fsdp) append(&report, fsdp_tables(ranks));
  if (sections.pipeline) append(&report, pipeline_tables(ranks));
  if (sections.collectives || sections.stragglers) {
    append(&report, collective_tables(std::move(rows), sections, options));
  }
  // `!sections.inputs`: the `trace memory` subcommand (summary has the inputs table).
  if (sections.memory) append(&report, memory_tables(ranks, !sections.inputs));
  return report;
}

TraceReport trace_report(std::string_view report, const trace::TraceSet& set,
                         const engine::TraceReportOptions& options) {
  const engine::ReportSections sections = engine::sections_of(report, options);
  auto ranks = std::make_shared<engine::RankResultsStore>();
  if (sections.per_rank()) {
    for (engine::RankResults& r : engine::analyse_ranks(
             set, options, [&](const trace::RankTrace& t) { return engine::reduce_rank(t, sections, options); })) {
      ranks->add(std::move(r));
    }
  }
  analysis::CollectiveRows rows;
  if (sections.collective_rows()) rows = analysis::compact_rows(rank_collectives(set, options));
  return report_tables(sections, ranks, std::move(rows), options);
}

TraceReport summary_report(const trace::TraceSet& set, const engine::TraceReportOptions& options) {
  return trace_report("summary", set, options);
}

}  // namespace scaleprof::report

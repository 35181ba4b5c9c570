// `scaleprof trace summary`: what was read (events, ranks, devices) and every analysis below it; and
// the assembly shared by every report: the tables of the selected sections from the ranks' results.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

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
                                                  "critical-path", "counters", "flops",       "pipeline"};
  return kNames;
}

TraceReport report_tables(const ReportSections& sections, const engine::RankStore& ranks, analysis::CollectiveRows rows,
                          const TraceReportOptions& options) {
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
  if (sections.pipeline_summary) append(&report, pipeline_summary_tables(ranks));
  if (sections.collectives || sections.stragglers) {
    append(&report, collective_tables(std::move(rows), sections, options));
  }
  // `!sections.inputs`: the `trace memory` subcommand (summary has the inputs table).
  if (sections.memory) append(&report, memory_tables(ranks, !sections.inputs));
  return report;
}

ReportSections sections_of(std::string_view report, const TraceReportOptions& options) {
  ReportSections s;
  if (report == "summary") {
    auto wanted = [&](std::string_view name) {
      return options.only.empty() || std::find(options.only.begin(), options.only.end(), name) != options.only.end();
    };
    s.inputs = true;
    s.breakdown = wanted("breakdown");
    s.kernels = wanted("kernels");
    s.idle = wanted("idle");
    s.overlap = wanted("overlap");
    s.launch = wanted("launch");
    s.ops = wanted("ops");
    s.steps = wanted("steps");
    s.collectives = wanted("collectives");
    s.stragglers = wanted("stragglers");
    s.memory = wanted("memory");
    s.critical_path = wanted("critical-path");
    s.counters = wanted("counters");
    s.flops = wanted("flops");
    s.pipeline_summary = wanted("pipeline");
    return s;
  }
  s.breakdown = report == "breakdown";
  s.kernels = report == "kernels";
  s.idle = report == "idle";
  s.overlap = report == "overlap";
  s.launch = report == "launch";
  s.ops = report == "ops";
  s.steps = report == "steps";
  s.collectives = report == "collectives";
  s.stragglers = report == "stragglers";
  s.phases = report == "phases";
  s.decompose = report == "decompose";
  s.memory = report == "memory";
  s.critical_path = report == "critical-path";
  s.counters = report == "counters" || report == "counters_series";
  s.counter_series = report == "counters_series";
  s.flops = report == "flops";
  s.fsdp = report == "fsdp";
  s.pipeline = report == "pipeline";
  return s;
}

engine::RankAnalyses ReportSections::rank_analyses() const {
  engine::RankAnalyses a;
  a.inputs = inputs;
  a.breakdown = breakdown;
  a.kernels = kernels;
  a.idle = idle;
  a.overlap = overlap;
  a.launch = launch;
  a.ops = ops;
  a.steps = steps;
  a.phases = phases;
  a.decomposition = decompose;
  a.memory = memory;
  a.critical_path = critical_path;
  a.counters = counters;
  a.counter_series = counter_series;
  a.flops = flops;
  a.exposed_collectives = fsdp;
  a.pipeline = pipeline || pipeline_summary;
  // Collectives and stragglers are matched across ranks from the compact rows; decompose and the
  // critical path use them for each rank's wait at the matched collectives.
  a.collective_rows = collectives || stragglers || decompose || critical_path;
  return a;
}

engine::ReduceOptions TraceReportOptions::reduce_options() const {
  engine::ReduceOptions out = *this;
  // --events lists each path's edges and --overlay draws them: both need them kept.
  out.path_edges = path_events || !path_overlay_dir.empty();
  // With a DeepSpeed profile, the trace's FLOPs per module are shown beside it.
  out.module_flops = deepspeed != nullptr;
  return out;
}

}  // namespace scaleprof::report

// The `scaleprof trace` reports from files: the engine streams the ranks (engine/trace_stream.h) and
// the report turns their results into tables (report/trace_report.h). `trace REPORT` is one call of
// run_trace_report() for the CLI and the Python module alike (TraceReportRequest, their one options
// type), `trace merge` one of merge_shards().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "report/trace_report.h"
#include "trace/trace_set.h"

namespace scaleprof::pipeline {

struct StreamedReport {
  trace::StreamedSet set;                 // the files, their final ranks, errors and warnings
  std::vector<std::string> repair_notes;  // "FILE: repaired N invalid JSON spots ...", in rank order
  bool any_read = false;                  // some file was read
  bool any_selected = false;              // some file read has a rank options.ranks selects
  report::TraceReport report;             // the tables; empty unless any_selected
  std::vector<std::string> overlays;      // `critical-path` with options.path_overlay_dir: the files written
  std::string shard;                      // TraceReportRequest::shard: the shard file's text (engine/partial_results.h)
  std::string page;                       // TraceReportRequest::html: the page of report/trace_html.h
};

// The report of subcommand `report` (summary, breakdown, ..., stragglers) over the files of `paths`.
// `flops` with options.deepspeed_profile reads that DeepSpeed flops profile first (its error, naming
// the file and line, is the result's).
// A file whose rank is known when it is read and not selected is not analysed; `load.wanted_rank`
// may also skip reading files whose rank their name gives. Fails as trace::stream_traces does, and
// for `critical-path` with options.path_overlay_dir when an overlay cannot be written
// (pipeline/critical_path_overlay.h).
Result<StreamedReport> stream_report(std::string_view report, const std::vector<std::string>& paths,
                                     const trace::LoadOptions& load, const report::TraceReportOptions& options);

// `scaleprof trace REPORT PATHS...` (and TraceAnalysis's reports): what a front-end fills from its
// arguments.
struct TraceReportRequest {
  std::string report;              // summary, breakdown, ..., counters_series (the Python API's), fsdp, pipeline
  std::vector<std::string> paths;  // trace files or folders of them
  trace::LoadOptions load;         // how they are read: --strict, --threads, --rank FILE=N, progress
  report::TraceReportOptions options;
  // collectives and stragglers: with options.ranks, files whose name (or --rank) gives a rank not
  // selected are not read, so a shard of a huge job touches only its own files (the CLI; the other
  // reports read every file, so errors and warnings cover all the inputs).
  bool read_selected_files_only = false;
  // collectives and stragglers --partial: the selected ranks' collective rows as one shard of a huge
  // job (StreamedReport::shard, for `trace merge`; docs/scale.md) instead of tables.
  bool shard = false;
  // summary --html: also the analyses as one offline page (StreamedReport::page), of the tables and
  // of what reading met.
  bool html = false;
};

// The report, the shard or the page the request asks for. Fails as stream_report does, and with
// kUsage for a shard of another report than collectives or stragglers.
Result<StreamedReport> run_trace_report(const TraceReportRequest& request);

// `scaleprof trace merge FILES...`: the shards' rows merged (engine/partial_results.h) into the tables
// of one run over all their ranks.
struct TraceMergeOptions {
  std::vector<std::string> paths;  // the shard files
  int64_t gpus_per_node = 0;       // as report::TraceReportOptions
  bool align_clocks = true;
};
// Fails when a shard cannot be read or the shards do not fit together.
Result<report::TraceReport> merge_shards(const TraceMergeOptions& options);

// The critical path's window from `--step N` or `--instance N` / `A-B` (Python: instance_id), its
// annotation already set; false with *error (a usage error) on a bad or conflicting one.
bool set_path_window(std::optional<int64_t> step, const std::string& instance, analysis::PathWindowSpec* spec,
                     std::string* error);

// What the front-ends check their arguments against: operator-table sort keys (self_cpu, ...) and
// the devices with a peak table for MFU (analysis/device_peaks.h), their names ", "-separated.
bool known_operator_sort_key(std::string_view key);
bool known_flops_device(std::string_view name);
std::string flops_device_names();

}  // namespace scaleprof::pipeline

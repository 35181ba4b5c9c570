#include "pipeline/trace_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "analysis/device_peaks.h"
#include "analysis/gpu_metrics.h"
#include "analysis/operator_table.h"
#include "analysis/profiler_steps.h"
#include "core/number_text.h"
#include "engine/partial_results.h"
#include "engine/rank_stream.h"
#include "engine/trace_stream.h"
#include "pipeline/critical_path_overlay.h"
#include "report/gpu_metrics_report.h"
#include "report/trace_html.h"
#include "trace/deepspeed_profile.h"
#include "trace/nsys_gpu_metrics.h"
#include "trace/trace_file.h"

namespace scaleprof::pipeline {

namespace {

// Bins of the GPU utilization track.
constexpr int kGpuMetricBins = 20;

// `trace summary` (every analysis, no --only): the GPU metrics of the selected ranks read from nsys
// exports (trace/nsys_gpu_metrics.h), after their events; a file whose metrics cannot be read is
// a warning, its events stay analysed.
void add_gpu_metrics(StreamedReport* out, const report::TraceReportOptions& options) {
  std::vector<report::RankGpuMetrics> ranks;
  for (size_t i = 0; i < out->set.files.size(); ++i) {
    const int64_t rank = out->set.rank_of_file[i];
    const std::string& path = out->set.files[i];
    if (rank < 0 || !engine::rank_selected(options.ranks, rank)) continue;
    if (trace::detect_trace_format(path) != trace::TraceFormat::kNsysSqlite) continue;
    std::optional<analysis::GpuMetricsTracks> tracks;
    trace::NsysGpuMetricsHeader header;
    int64_t skipped = 0;
    auto read = trace::read_nsys_gpu_metrics(
        path,
        [&](const trace::NsysGpuMetricsHeader& h) {
          header = h;
          tracks.emplace(header, kGpuMetricBins);
        },
        [&](int64_t type, int64_t metric, int64_t ts, double value) { tracks->add(type, metric, ts, value); },
        &skipped);
    if (!read) {
      out->set.warnings.push_back(
          diagnostic(Severity::kWarning, fmt::format("GPU metrics not read: {}", read.error().message)));
      continue;
    }
    if (!read.value() || !tracks) continue;
    if (skipped > 0 || tracks->unnamed() > 0) {
      out->set.warnings.push_back(
          Diagnostic{Severity::kWarning, path,
                     fmt::format("table GPU_METRICS: {} row(s) skipped ({} without a number, {} of a metric "
                                 "TARGET_INFO_GPU_METRICS does not name)",
                                 skipped + tracks->unnamed(), skipped, tracks->unnamed())});
    }
    ranks.push_back({rank, tracks->finish()});
  }
  std::sort(ranks.begin(), ranks.end(),
            [](const report::RankGpuMetrics& a, const report::RankGpuMetrics& b) { return a.rank < b.rank; });
  report::TraceReport tables = report::gpu_metrics_tables(ranks);
  for (size_t i = 0; i < tables.tables.size(); ++i) out->report.add(tables.keys[i], std::move(tables.tables[i]));
}

}  // namespace

Result<StreamedReport> stream_report(std::string_view report, const std::vector<std::string>& paths,
                                     const trace::LoadOptions& load, const report::TraceReportOptions& given) {
  report::TraceReportOptions options = given;
  // `trace flops --deepspeed-profile FILE`: read before any trace, so a bad file fails at once.
  if (report == "flops" && !options.deepspeed_profile.empty() && !options.deepspeed) {
    auto profile = trace::read_deepspeed_profile(options.deepspeed_profile);
    if (!profile) return profile.error();
    options.deepspeed = std::make_shared<const trace::DsProfile>(std::move(profile.value()));
  }
  const report::ReportSections sections = report::sections_of(report, options);
  auto streamed = engine::stream_ranks(sections.rank_analyses(), paths, load, options.reduce_options());
  if (!streamed) return streamed.error();
  engine::StreamedRanks& ranks = streamed.value();
  StreamedReport out;
  out.set = std::move(ranks.set);
  out.repair_notes = std::move(ranks.repair_notes);
  out.any_read = ranks.any_read;
  out.any_selected = ranks.any_selected;
  if (!out.any_selected) return out;
  if (report == "critical-path" && !options.path_overlay_dir.empty()) {
    auto written = write_critical_path_overlays(ranks.results, options.path_overlay_dir);
    if (!written) return written.error();
    out.overlays = std::move(written.value());
  }
  out.report = report::report_tables(sections, ranks.results, std::move(ranks.rows), options);
  if (report == "summary" && options.only.empty()) add_gpu_metrics(&out, options);
  return out;
}

namespace {

// A shard of `collectives` or `stragglers`: each rank reduced to its whole collective rows, which a
// merge of every shard turns into the tables of one run (docs/scale.md).
Result<StreamedReport> stream_shard(const TraceReportRequest& request, const trace::LoadOptions& load) {
  const std::vector<int64_t>& ranks = request.options.ranks;
  std::vector<analysis::RankCollectives> rows;
  auto reduce = [](const trace::RankTrace& t, unsigned) {
    // Ranks are final only once every file is read (unranked files are numbered then): keep all rows.
    engine::RankReduction<analysis::RankCollectives> out;
    out.parts = analysis::extract_collectives(t);
    return out;
  };
  auto selected = [&](int64_t rank) { return engine::rank_selected(ranks, rank); };
  auto reduced = engine::reduce_ranks(request.paths, load, reduce, selected, &rows);
  if (!reduced) return reduced.error();
  StreamedReport out;
  out.set = std::move(reduced.value().set);
  for (int64_t rank : out.set.rank_of_file) out.any_read |= rank >= 0;
  out.any_selected = !rows.empty();
  if (out.any_selected) out.shard = engine::write_partial({request.report, rows});
  return out;
}

}  // namespace

Result<StreamedReport> run_trace_report(const TraceReportRequest& request) {
  const bool rows_only = request.report == "collectives" || request.report == "stragglers";
  if (request.shard && !rows_only) {
    return Error{"a shard is made of the collectives or stragglers report only", ErrorKind::kUsage};
  }
  trace::LoadOptions load = request.load;
  if (rows_only && request.read_selected_files_only && !request.options.ranks.empty()) {
    load.wanted_rank = [ranks = request.options.ranks](int64_t rank) { return engine::rank_selected(ranks, rank); };
  }
  if (request.shard) return stream_shard(request, load);
  auto streamed = stream_report(request.report, request.paths, load, request.options);
  if (!streamed) return streamed.error();
  StreamedReport& out = streamed.value();
  if (request.html && out.any_selected) {
    out.page = report::render_trace_html(out.report, {request.paths, out.set.warnings, out.set.errors});
  }
  return streamed;
}

Result<report::TraceReport> merge_shards(const TraceMergeOptions& options) {
  auto merged = engine::merge_partials(options.paths);
  if (!merged) return merged.error();
  report::TraceReportOptions report_options;
  report_options.gpus_per_node = options.gpus_per_node;
  report_options.align_clocks = options.align_clocks;
  const engine::PartialResults& m = merged.value();
  return m.report == "collectives" ? report::collectives_tables(m.ranks, report_options)
                                   : report::stragglers_tables(m.ranks, report_options);
}

bool known_operator_sort_key(std::string_view key) {
  return analysis::parse_operator_sort_key(key).has_value();
}

// `--step N` or `--instance N` / `A-B` into the critical path's window spec (its annotation already
// set); false with *error (a usage error) on a bad or conflicting one.
bool set_path_window(std::optional<int64_t> step, const std::string& instance, analysis::PathWindowSpec* spec,
                     std::string* error) {
  if (step && !instance.empty()) {
    *error = "--step and --instance: give one of them (--step N is --annotation ProfilerStep --instance N)";
    return false;
  }
  if (step) {
    if (!analysis::names_profiler_steps(spec->annotation)) {
      *error = "--step is for ProfilerStep windows; with --annotation use --instance";
      return false;
    }
    spec->first = spec->last = *step;
    return true;
  }
  if (instance.empty()) return true;
  const std::string_view view = instance;
  const size_t dash = view.find('-', 1);
  const std::optional<int64_t> lo = parse_int64(view.substr(0, dash));
  const std::optional<int64_t> hi = dash == std::string_view::npos ? lo : parse_int64(view.substr(dash + 1));
  if (!lo || !hi || *lo < 0 || *hi < *lo) {
    *error = fmt::format("--instance expects N or A-B with 0 <= A <= B (got '{}')", instance);
    return false;
  }
  spec->first = *lo;
  spec->last = *hi;
  return true;
}

bool known_flops_device(std::string_view name) {
  return analysis::find_device_peak(name) != nullptr;
}

std::string flops_device_names() {
  std::string names;
  for (const analysis::DevicePeak& p : analysis::device_peaks())
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

}  // namespace scaleprof::pipeline

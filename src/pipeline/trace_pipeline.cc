#include "pipeline/trace_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "analysis/gpu_metrics.h"
#include "engine/trace_stream.h"
#include "pipeline/critical_path_overlay.h"
#include "report/gpu_metrics_report.h"
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
void add_gpu_metrics(StreamedReport* out, const engine::TraceReportOptions& options) {
  std::vector<report::RankGpuMetrics> ranks;
  for (size_t i = 0; i < out->set.files.size(); ++i) {
    const int64_t rank = out->set.rank_of_file[i];
    const std::string& path = out->set.files[i];
    if (rank < 0 || !engine::rank_selected(options, rank)) continue;
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
      out->set.warnings.push_back(fmt::format("GPU metrics not read: {}", read.error().message));
      continue;
    }
    if (!read.value() || !tracks) continue;
    if (skipped > 0 || tracks->unnamed() > 0) {
      out->set.warnings.push_back(
          fmt::format("{}: table GPU_METRICS: {} row(s) skipped ({} without a number, {} of a metric "
                      "TARGET_INFO_GPU_METRICS does not name)",
                      path, skipped + tracks->unnamed(), skipped, tracks->unnamed()));
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
                                     const trace::LoadOptions& load, const engine::TraceReportOptions& given) {
  engine::TraceReportOptions options = given;
  // `trace flops --deepspeed-profile FILE`: read before any trace, so a bad file fails at once.
  if (report == "flops" && !options.deepspeed_profile.empty() && !options.deepspeed) {
    auto profile = trace::read_deepspeed_profile(options.deepspeed_profile);
    if (!profile) return profile.error();
    options.deepspeed = std::make_shared<const trace::DsProfile>(std::move(profile.value()));
  }
  const engine::ReportSections sections = sections_of(report, options);
  auto streamed = engine::stream_ranks(sections, paths, load, options);
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

}  // namespace scaleprof::pipeline

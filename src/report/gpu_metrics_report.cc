#include "report/gpu_metrics_report.h"

#include <memory>

#include "report/trace_cells.h"

namespace scaleprof::report {

TraceReport gpu_metrics_tables(const std::vector<RankGpuMetrics>& ranks) {
  TraceReport report;
  bool any = false;
  for (const RankGpuMetrics& r : ranks) any |= !r.tracks.empty();
  if (!any) return report;
  auto data = std::make_shared<const std::vector<RankGpuMetrics>>(ranks);

  Table summary;
  summary.title = "GPU metrics (nsys --gpu-metrics-devices): per GPU and metric over the capture";
  summary.columns = {{"rank", "Rank"},       {"gpu", "GPU"},   {"set", "Metric set"}, {"metric", "Metric"},
                     {"samples", "Samples"}, {"mean", "Mean"}, {"min", "Min"},        {"max", "Max"}};
  summary.set_importance(Importance::kKey, {"rank", "gpu", "metric"});
  summary.set_importance(Importance::kDetail, {"set", "samples"});
  summary.row_source = [data](const RowVisitor& visit) {
    for (const RankGpuMetrics& r : *data) {
      for (const analysis::GpuMetricTrack& t : r.tracks) {
        visit({r.rank, t.gpu, t.set, t.metric, t.samples, Cell(t.mean, 2), Cell(t.min, 2), Cell(t.max, 2)});
      }
    }
  };
  report.add("gpu_metrics", std::move(summary));

  Table track;
  track.title =
      "GPU utilization track: each throughput percentage per GPU, the mean of its samples in equal time "
      "bins (ms since the capture started)";
  track.columns = {
      {"rank", "Rank"},           {"gpu", "GPU"},         {"metric", "Metric"},   {"bin", "Bin"},
      {"start_ms", "Start (ms)"}, {"end_ms", "End (ms)"}, {"samples", "Samples"}, {"mean_pct", "Mean (%)"}};
  track.set_importance(Importance::kKey, {"rank", "gpu", "metric", "bin"});
  track.set_importance(Importance::kDetail, {"samples"});
  track.row_source = [data](const RowVisitor& visit) {
    for (const RankGpuMetrics& r : *data) {
      for (const analysis::GpuMetricTrack& t : r.tracks) {
        if (!t.percent) continue;
        for (size_t b = 0; b < t.bins.size(); ++b) {
          const analysis::GpuMetricBin& bin = t.bins[b];
          visit({r.rank, t.gpu, t.metric, static_cast<int64_t>(b), Cell(static_cast<double>(bin.start_ns) / 1e6, 3),
                 Cell(static_cast<double>(bin.end_ns) / 1e6, 3), bin.samples,
                 bin.samples > 0 ? Cell(bin.mean, 2) : Cell::null()});
        }
      }
    }
  };
  report.add("gpu_utilization", std::move(track));
  return report;
}

}  // namespace scaleprof::report

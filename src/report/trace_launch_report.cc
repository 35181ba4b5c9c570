// `scaleprof trace launch`: kernel launch statistics per rank (HTA's cuda_kernel_launch_stats):
// the distribution of host time in the launch call, device time of the launched work, and launch
// delay (device start minus the end of the call, clipped at 0); plus the `--top` launches that
// waited longest (`--top 0`: all of them).
#include <algorithm>

#include "analysis/launch_stats.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

std::vector<Cell> summary_row(int64_t rank, std::string_view metric, const analysis::Distribution& d) {
  return {rank,
          metric,
          d.count,
          us_cell(d.sum),
          us_stat_cell(d.mean),
          us_stat_cell(d.min),
          us_stat_cell(d.p25),
          us_stat_cell(d.p50),
          us_stat_cell(d.p75),
          us_stat_cell(d.p90),
          us_stat_cell(d.p99),
          us_stat_cell(d.max)};
}

}  // namespace

TraceReport launch_tables(const engine::RankStore& ranks) {
  Table summary;
  summary.title = "Kernel launches: host call, device time and launch delay (us)";
  summary.columns = {{"rank", "Rank"},    {"metric", "Metric"}, {"count", "Launches"}, {"sum_us", "Total"},
                     {"mean_us", "Mean"}, {"min_us", "Min"},    {"p25_us", "P25"},     {"p50_us", "P50"},
                     {"p75_us", "P75"},   {"p90_us", "P90"},    {"p99_us", "P99"},     {"max_us", "Max"}};
  summary.set_importance(Importance::kKey, {"rank", "metric"});
  summary.set_importance(Importance::kUseful, {"min_us", "p99_us"});
  summary.set_importance(Importance::kDetail, {"p25_us", "p75_us", "p90_us"});
  summary.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& rank) {
      const engine::RankLaunches& r = rank.launch.value();
      visit(summary_row(rank.rank, "cpu_duration", r.summary.cpu_duration));
      visit(summary_row(rank.rank, "gpu_duration", r.summary.gpu_duration));
      visit(summary_row(rank.rank, "launch_delay", r.summary.launch_delay));
    });
  };
  Table slowest;
  slowest.title = "Longest launch delays";
  slowest.columns = {{"rank", "Rank"},
                     {"correlation", "Correlation"},
                     {"launch_delay_us", "Delay (us)"},
                     {"cpu_duration_us", "Call (us)"},
                     {"gpu_duration_us", "Device (us)"},
                     {"launch", "Launch call"},
                     {"kernel", "Device work"}};  // long kernel names last
  slowest.set_importance(Importance::kKey, {"rank"});
  slowest.set_importance(Importance::kUseful, {"cpu_duration_us", "gpu_duration_us", "launch"});
  slowest.set_importance(Importance::kDetail, {"correlation"});
  slowest.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& rank) {
      for (const engine::SlowLaunch& l : rank.launch->slowest) {
        visit({rank.rank, l.correlation, us_cell(l.launch_delay_ns), us_cell(l.cpu_duration_ns),
               us_cell(l.gpu_duration_ns), l.launch, l.kernel});
      }
    });
  };
  TraceReport report;
  report.add("launch_summary", std::move(summary));
  report.add("launch_delays", std::move(slowest));
  return report;
}

}  // namespace scaleprof::report

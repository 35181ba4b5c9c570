// `scaleprof trace launch`: kernel launch statistics per rank (HTA's cuda_kernel_launch_stats):
// the distribution of host time in the launch call, device time of the launched work, and launch
// delay (device start minus the end of the call, clipped at 0); plus the `--top` launches that
// waited longest (`--top 0`: all of them).
#include <algorithm>

#include "analysis/launch_stats.h"
#include "report/rank_analysis.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

struct RankLaunches {
  std::vector<analysis::KernelLaunch> launches;
  analysis::LaunchSummary summary;
};

void add_summary_row(Table* t, int64_t rank, std::string_view metric, const analysis::Distribution& d) {
  t->add_row({rank, metric, d.count, us_cell(d.sum), us_stat_cell(d.mean), us_stat_cell(d.min), us_stat_cell(d.p25),
              us_stat_cell(d.p50), us_stat_cell(d.p75), us_stat_cell(d.p90), us_stat_cell(d.p99), us_stat_cell(d.max)});
}

}  // namespace

TraceReport launch_report(const trace::TraceSet& set, const TraceReportOptions& options) {
  const std::vector<const trace::RankTrace*> ranks = selected_ranks(set, options);
  const auto results = analyse_ranks(set, options, [](const trace::RankTrace& t, const analysis::AnalysisWindow& w) {
    RankLaunches r;
    r.launches = analysis::kernel_launches(t, w.rows);
    r.summary = analysis::summarize_launches(r.launches);
    return r;
  });

  Table summary;
  summary.title = "Kernel launches: host call, device time and launch delay (us)";
  summary.columns = {{"rank", "Rank"},    {"metric", "Metric"}, {"count", "Launches"}, {"sum_us", "Total"},
                     {"mean_us", "Mean"}, {"min_us", "Min"},    {"p25_us", "P25"},     {"p50_us", "P50"},
                     {"p75_us", "P75"},   {"p90_us", "P90"},    {"p99_us", "P99"},     {"max_us", "Max"}};
  Table slowest;
  slowest.title = "Longest launch delays";
  slowest.columns = {{"rank", "Rank"},
                     {"correlation", "Correlation"},
                     {"launch_delay_us", "Delay (us)"},
                     {"cpu_duration_us", "Call (us)"},
                     {"gpu_duration_us", "Device (us)"},
                     {"launch", "Launch call"},
                     {"kernel", "Device work"}};  // long kernel names last
  for (size_t i = 0; i < ranks.size(); ++i) {
    const trace::RankTrace& t = *ranks[i];
    const RankLaunches& r = results[i];
    add_summary_row(&summary, t.rank, "cpu_duration", r.summary.cpu_duration);
    add_summary_row(&summary, t.rank, "gpu_duration", r.summary.gpu_duration);
    add_summary_row(&summary, t.rank, "launch_delay", r.summary.launch_delay);

    std::vector<const analysis::KernelLaunch*> order;
    for (const auto& l : r.launches) order.push_back(&l);
    // --top 0 lists every launch, as in the other tables.
    const size_t n = options.top <= 0 ? order.size() : std::min<size_t>(order.size(), static_cast<size_t>(options.top));
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                      [](const auto* a, const auto* b) { return a->launch_delay_ns > b->launch_delay_ns; });
    for (size_t k = 0; k < n; ++k) {
      const analysis::KernelLaunch& l = *order[k];
      slowest.add_row({t.rank, l.correlation, us_cell(l.launch_delay_ns), us_cell(l.cpu_duration_ns),
                       us_cell(l.gpu_duration_ns), t.name(l.launch_row), t.name(l.device_row)});
    }
  }
  TraceReport report;
  report.add("launch_summary", std::move(summary));
  report.add("launch_delays", std::move(slowest));
  return report;
}

}  // namespace scaleprof::report

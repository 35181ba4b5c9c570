// `scaleprof trace kernels`: HTA's GPU kernel breakdown.
//  * kernel_types: busy device time of all selected ranks split by the set of kernel types running
//    (computation, communication, memory, and their overlaps), summed across ranks as HTA does;
//  * kernel_types_per_rank: the same split for each rank;
//  * kernels: per rank and type, the `--top` kernels with the largest total time and an "others"
//    row for the rest, each with real count / sum / mean / min / max / std of its durations.
#include <limits>
#include <string>

#include "analysis/kernel_breakdown.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

double pct_of(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole)
                   : std::numeric_limits<double>::quiet_NaN();
}

void partition_rows(const std::vector<analysis::TypeShare>& partition, const Cell* rank, const RowVisitor& visit) {
  int64_t total = 0;
  for (const auto& s : partition) total += s.ns;
  std::vector<Cell> row;
  for (const auto& s : partition) {
    row.clear();
    if (rank != nullptr) row.push_back(*rank);
    row.insert(row.end(), {analysis::type_set_label(s.types), us_cell(s.ns), pct_cell(pct_of(s.ns, total))});
    visit(row);
  }
}

void kernel_rows(const engine::RankResults& r, const RowVisitor& visit) {
  for (int t = 0; t < analysis::kKernelTypeCount; ++t) {
    const auto type = static_cast<analysis::KernelType>(t);
    const std::vector<analysis::KernelStats>& top = r.kernels->top[t];
    int64_t type_total = 0;
    for (const auto& k : top) type_total += k.duration.sum;
    for (const auto& k : top) {
      const analysis::RunningStats& d = k.duration;
      visit({r.rank, analysis::kernel_type_name(type), d.count, us_cell(d.sum), pct_cell(pct_of(d.sum, type_total)),
             us_stat_cell(d.mean), us_cell(d.min), us_cell(d.max), us_stat_cell(d.stddev()), k.kernels, k.name});
    }
  }
}

}  // namespace

TraceReport kernels_tables(const engine::RankStore& ranks) {
  std::vector<std::vector<analysis::TypeShare>> partitions;
  partitions.reserve(ranks->size());
  ranks->for_each([&](const engine::RankResults& r) { partitions.push_back(r.kernels->partition); });
  Table types;
  types.title = "Busy GPU time by kernel type, all selected ranks (overlaps split out)";
  types.columns = {{"kernel_type", "Kernel type"}, {"time_us", "Time (us)"}, {"pct", "Share (%)"}};
  partition_rows(analysis::merge_type_partitions(partitions), nullptr,
                 [&](const std::vector<Cell>& row) { types.add_row(row); });
  partitions = {};

  Table per_rank;
  per_rank.title = "Busy GPU time by kernel type, per rank";
  per_rank.columns = {{"rank", "Rank"}, {"kernel_type", "Kernel type"}, {"time_us", "Time (us)"}, {"pct", "Share (%)"}};
  per_rank.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      const Cell rank(r.rank);
      partition_rows(r.kernels->partition, &rank, visit);
    });
  };

  Table kernels;
  kernels.title = "Top kernels per rank and type by total time (others: the rest, folded)";
  // The name goes last: kernel names run to hundreds of characters and would push the numbers off
  // a terminal.
  kernels.columns = {{"rank", "Rank"},       {"kernel_type", "Type"},  {"count", "Count"},     {"sum_us", "Total (us)"},
                     {"pct", "Of type (%)"}, {"mean_us", "Mean (us)"}, {"min_us", "Min (us)"}, {"max_us", "Max (us)"},
                     {"std_us", "Std (us)"}, {"names", "Names"},       {"name", "Kernel"}};
  kernels.set_importance(Importance::kKey, {"rank", "kernel_type", "name"});
  kernels.set_importance(Importance::kUseful, {"mean_us", "names"});
  kernels.set_importance(Importance::kDetail, {"min_us", "max_us", "std_us"});
  kernels.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) { kernel_rows(r, visit); });
  };

  TraceReport report;
  report.add("kernel_types", std::move(types));
  report.add("kernel_types_per_rank", std::move(per_rank));
  report.add("kernels", std::move(kernels));
  return report;
}

}  // namespace scaleprof::report

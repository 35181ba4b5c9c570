#include "report/hta_extras_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/trace_cells.h"

namespace scaleprof::report {

TraceReport potential_stragglers_tables(const analysis::PotentialStragglers& result, int64_t num_candidates) {
  TraceReport report;
  Table ranks;
  ranks.title = fmt::format(
      "Potential stragglers (HTA's get_potential_stragglers, num_candidates {}): steps in which each rank started "
      "the dominant communication kernel among the {} latest",
      num_candidates, num_candidates);
  ranks.columns = {
      {"rank", "Rank"}, {"flagged_steps", "Steps flagged"}, {"potential_straggler", "Potential straggler"}};
  ranks.set_importance(Importance::kKey, {"rank"});
  for (const analysis::RankLateStarts& r : result.ranks) {
    ranks.add_row({r.rank, r.flagged_steps, r.potential_straggler ? "yes" : "no"});
  }
  report.add("potential_stragglers", std::move(ranks));

  Table metric;
  metric.title = "Start of the dominant communication kernel per step and rank: (start - first event) / mean step time";
  metric.columns = {{"step", "Step"},
                    {"rank", "Rank"},
                    {"start_us", "Start (us)"},
                    {"duration_us", "Duration (us)"},
                    {"normalized_start_time", "Normalized start"},
                    {"flagged", "Flagged"}};
  metric.set_importance(Importance::kKey, {"step", "rank"});
  metric.set_importance(Importance::kDetail, {"start_us"});
  for (const analysis::StragglerMetricRow& m : result.metric) {
    metric.add_row(
        {m.step, m.rank, us_cell(m.ts_ns), us_cell(m.dur_ns), Cell(m.normalized_start, 6), m.flagged ? "yes" : "no"});
  }
  report.add("straggler_metric", std::move(metric));

  Table basis;
  basis.title = "Basis: the steps, the mean step time (first event to last end over them), the kernel chosen";
  basis.columns = {{"steps", "Steps"},
                   {"mean_step_us", "Mean step (us)"},
                   {"min_duration_us", "Min kernel (us)"},
                   {"stream", "Stream"},
                   {"kernel", "Kernel"},
                   {"mean_duration_std", "Mean std of duration"},
                   {"note", "Note"}};
  basis.set_importance(Importance::kDetail, {"min_duration_us", "mean_duration_std"});
  const bool chosen = result.stream >= 0 || !result.kernel.empty();
  basis.add_row({fmt::format("{}", fmt::join(result.steps, ",")),
                 result.steps.empty() ? Cell::null() : us_stat_cell(result.mean_step_ns),
                 result.steps.empty() ? Cell::null() : us_stat_cell(result.min_duration_ns),
                 chosen ? Cell(result.stream) : Cell::null(), chosen ? Cell(result.kernel) : Cell::null(),
                 chosen ? Cell(result.mean_duration_std, 6) : Cell::null(),
                 result.note.empty() ? Cell::null() : Cell(result.note)});
  report.add("straggler_basis", std::move(basis));
  return report;
}

TraceReport kernel_sequences_tables(const std::vector<analysis::RankKernelSequences>& ranks,
                                    const analysis::KernelSequenceOptions& options) {
  TraceReport report;
  Table t;
  t.title = fmt::format(
      "Frequent kernel sequences under '{}' (HTA's get_frequent_cuda_kernel_sequences, min_pattern_len {}): the "
      "operator then its device work in start order",
      options.operator_name, options.min_pattern_len);
  t.columns = {{"rank", "Rank"},
               {"pattern", "Pattern"},
               {"count", "Count"},
               {"gpu_kernel_duration_us", "GPU time (us)"},
               {"cpu_op_duration_us", "CPU op time (us)"},
               {"mean_gpu_kernel_duration_us", "Mean GPU time (us)"},
               {"kernels", "Kernels"}};
  t.set_importance(Importance::kKey, {"rank"});
  t.set_importance(Importance::kDetail, {"kernels", "cpu_op_duration_us"});
  for (const analysis::RankKernelSequences& r : ranks) {
    for (const analysis::KernelSequence& s : r.sequences) {
      t.add_row({r.rank, s.pattern(), s.count, us_cell(s.gpu_ns), us_cell(s.cpu_ns),
                 us_stat_cell(static_cast<double>(s.gpu_ns) / static_cast<double>(s.count)),
                 static_cast<int64_t>(s.kernels.size())});
    }
  }
  report.add("kernel_sequences", std::move(t));
  Table roots;
  roots.title = "Operators matched: calls whose name contains the operator name, and the roots counted";
  roots.columns = {{"rank", "Rank"}, {"candidates", "Calls matched"}, {"roots", "Roots"}, {"patterns", "Patterns"}};
  roots.set_importance(Importance::kKey, {"rank"});
  for (const analysis::RankKernelSequences& r : ranks) {
    roots.add_row({r.rank, r.candidates, r.roots, static_cast<int64_t>(r.sequences.size())});
  }
  report.add("kernel_sequence_roots", std::move(roots));
  return report;
}

}  // namespace scaleprof::report

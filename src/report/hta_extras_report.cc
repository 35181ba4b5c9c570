#include "report/hta_extras_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

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

TraceReport annotated_kernels_tables(const std::vector<analysis::RankAnnotatedKernels>& ranks) {
  TraceReport report;
  Table t;
  t.title =
      "Device work with its GPU user annotation (HTA's get_gpu_kernels_with_user_annotations): the shortest "
      "gpu_user_annotation span on the same track that overlaps it";
  t.columns = {{"rank", "Rank"},
               {"name", "Name"},
               {"cat", "Category"},
               {"pid", "Pid"},
               {"tid", "Tid"},
               {"stream", "Stream"},
               {"correlation", "Correlation"},
               {"external_id", "External id"},
               {"ts_us", "Start (us)"},
               {"dur_us", "Duration (us)"},
               {"user_annotation", "User annotation"}};
  t.set_importance(Importance::kKey, {"rank", "name"});
  t.set_importance(Importance::kDetail, {"pid", "tid", "correlation", "external_id", "cat"});
  auto id_cell = [](int64_t v) { return v == trace::kNone ? Cell::null() : Cell(v); };
  for (const analysis::RankAnnotatedKernels& r : ranks) {
    for (const analysis::AnnotatedKernel& k : r.kernels) {
      t.add_row({r.rank, k.name, k.cat, id_cell(k.pid), id_cell(k.tid), id_cell(k.stream), id_cell(k.correlation),
                 id_cell(k.external_id), us_cell(k.ts_ns), us_cell(k.dur_ns),
                 k.annotation < 0 ? Cell::null() : Cell(r.annotation_names[static_cast<size_t>(k.annotation)])});
    }
  }
  report.add("gpu_kernels_with_user_annotations", std::move(t));
  Table counts;
  counts.title = "Per rank: gpu_user_annotation spans in the analysis window, device work, and work annotated";
  counts.columns = {{"rank", "Rank"}, {"spans", "Spans"}, {"kernels", "Device work"}, {"annotated", "Annotated"}};
  counts.set_importance(Importance::kKey, {"rank"});
  for (const analysis::RankAnnotatedKernels& r : ranks) {
    int64_t annotated = 0;
    for (const analysis::AnnotatedKernel& k : r.kernels) annotated += k.annotation >= 0 ? 1 : 0;
    counts.add_row({r.rank, r.spans, static_cast<int64_t>(r.kernels.size()), annotated});
  }
  report.add("user_annotation_kernel_counts", std::move(counts));
  return report;
}

TraceReport annotation_breakdown_tables(const std::vector<analysis::RankAnnotationBreakdown>& ranks,
                                        const analysis::AnnotationBreakdownOptions& options) {
  TraceReport report;
  Table t;
  t.title = fmt::format(
      "Time per {} (HTA's get_gpu_user_annotation_breakdown, duration_ratio {}, num_kernels {}): the spans' "
      "durations by name",
      options.use_gpu_annotation ? "GPU user annotation (gpu_user_annotation spans)"
                                 : "user annotation (host user_annotation spans)",
      options.duration_ratio, options.num_kernels);
  t.columns = {{"rank", "Rank"},         {"name", "Name"},          {"count", "Count"},
               {"sum_us", "Sum (us)"},   {"max_us", "Max (us)"},    {"min_us", "Min (us)"},
               {"mean_us", "Mean (us)"}, {"stddev_us", "Std (us)"}, {"names", "Names"}};
  t.set_importance(Importance::kKey, {"rank", "name"});
  t.set_importance(Importance::kDetail, {"names"});
  for (const analysis::RankAnnotationBreakdown& r : ranks) {
    for (const analysis::AnnotationStats& a : r.rows) {
      t.add_row({r.rank, a.name, a.dur.count, us_cell(a.dur.sum), us_cell(a.dur.max), us_cell(a.dur.min),
                 us_stat_cell(a.dur.mean), us_stat_cell(a.dur.stddev()), a.names});
    }
  }
  report.add("user_annotation_breakdown", std::move(t));
  Table spans;
  spans.title = "Per rank: whether the trace has such spans, and how many the analysis window holds";
  spans.columns = {{"rank", "Rank"}, {"present", "Present"}, {"spans", "Spans"}, {"names", "Names"}};
  spans.set_importance(Importance::kKey, {"rank"});
  for (const analysis::RankAnnotationBreakdown& r : ranks) {
    spans.add_row({r.rank, r.present ? "yes" : "no", r.spans, static_cast<int64_t>(r.rows.size())});
  }
  report.add("user_annotation_spans", std::move(spans));
  return report;
}

TraceReport cupti_counters_tables(const std::vector<analysis::RankCuptiCounters>& ranks) {
  TraceReport report;
  Table t;
  t.title =
      "CUPTI counters per kernel (HTA's get_cupti_counter_data_with_operators): the cuda_profiler_range events "
      "paired in start order with the cudaLaunchKernel calls, and the cpu_op calls holding each launch";
  t.columns = {{"rank", "Rank"},
               {"kernel", "Kernel #"},
               {"name", "Name"},
               {"pid", "Pid"},
               {"tid", "Tid"},
               {"ts_us", "Start (us)"},
               {"dur_us", "Duration (us)"},
               {"top_level_op", "Top-level op"},
               {"bottom_level_op", "Bottom-level op"},
               {"op_stack", "Operator stack"}};
  t.set_importance(Importance::kKey, {"rank", "kernel"});
  t.set_importance(Importance::kDetail, {"pid", "tid", "ts_us", "op_stack"});
  Table values;
  values.title = "Counter values per kernel";
  values.columns = {{"rank", "Rank"}, {"kernel", "Kernel #"}, {"counter", "Counter"}, {"value", "Value"}};
  values.set_importance(Importance::kKey, {"rank", "kernel"});
  Table stacks;
  stacks.title = "Operator stacks: the cpu_op calls holding each kernel's launch, outermost (depth 0) first";
  stacks.columns = {{"rank", "Rank"}, {"kernel", "Kernel #"}, {"depth", "Depth"}, {"op", "Operator"}};
  stacks.set_importance(Importance::kKey, {"rank", "kernel"});
  Table summary;
  summary.title = "Per rank: cuda_profiler_range events, kernel launches, kernels paired and counters";
  summary.columns = {{"rank", "Rank"},       {"ranges", "Range events"}, {"launches", "Launches"},
                     {"kernels", "Kernels"}, {"counters", "Counters"},   {"note", "Note"}};
  summary.set_importance(Importance::kKey, {"rank"});
  for (const analysis::RankCuptiCounters& r : ranks) {
    for (size_t k = 0; k < r.kernels.size(); ++k) {
      const analysis::CuptiKernel& kernel = r.kernels[k];
      const auto index = static_cast<int64_t>(k);
      auto id_cell = [](int64_t v) { return v == trace::kNone ? Cell::null() : Cell(v); };
      t.add_row({r.rank, index, kernel.name, id_cell(kernel.pid), id_cell(kernel.tid), us_cell(kernel.ts_ns),
                 us_cell(kernel.dur_ns), kernel.op_stack.empty() ? Cell("") : Cell(kernel.op_stack.front()),
                 kernel.op_stack.empty() ? Cell("") : Cell(kernel.op_stack.back()),
                 fmt::format("{}", fmt::join(kernel.op_stack, " > "))});
      for (size_t c = 0; c < r.counter_names.size(); ++c) {
        const double v = kernel.counters[c];
        // Integers as integers (counts are), exact up to 2^53; NaN (absent) as null.
        const bool integral = std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 9007199254740992.0;
        values.add_row({r.rank, index, r.counter_names[c],
                        std::isnan(v) ? Cell::null()
                        : integral    ? Cell(static_cast<int64_t>(v))
                                      : Cell(v, 6)});
      }
      for (size_t d = 0; d < kernel.op_stack.size(); ++d) {
        stacks.add_row({r.rank, index, static_cast<int64_t>(d), kernel.op_stack[d]});
      }
    }
    summary.add_row({r.rank, r.ranges, r.launches, static_cast<int64_t>(r.kernels.size()),
                     static_cast<int64_t>(r.counter_names.size()), r.error.empty() ? Cell::null() : Cell(r.error)});
  }
  report.add("cupti_counters", std::move(t));
  report.add("cupti_counter_values", std::move(values));
  report.add("cupti_op_stacks", std::move(stacks));
  report.add("cupti_ranks", std::move(summary));
  return report;
}

}  // namespace scaleprof::report

#include "engine/hta_extras_stream.h"

#include <algorithm>
#include <utility>

#include "analysis/analysis_window.h"
#include "engine/rank_stream.h"

namespace scaleprof::engine {

namespace {

template <class Parts, class Reduce, class Keep>
Result<StreamedParts<Parts>> stream_parts(const std::vector<std::string>& paths, const trace::LoadOptions& load,
                                          Reduce reduce_one, Keep keep) {
  std::vector<Parts> ranks;
  auto reduce = [&](const trace::RankTrace& t, unsigned /*threads_per_file*/) {
    RankReduction<Parts> out;
    // A rank known now is final; a file with none (-1) is numbered once all are read.
    if (t.rank < 0 || keep(t.rank)) out.parts = reduce_one(t);
    return out;
  };
  auto kept = [&](int64_t rank) { return rank >= 0 && keep(rank); };
  auto reduced = reduce_ranks(paths, load, reduce, kept, &ranks);
  if (!reduced) return reduced.error();
  StreamedParts<Parts> out;
  out.set = std::move(reduced.value().set);
  out.repair_notes = std::move(reduced.value().repair_notes);
  out.ranks = std::move(ranks);
  return out;
}

auto rank_filter(const std::vector<int64_t>& ranks) {
  return [&ranks](int64_t rank) { return ranks.empty() || std::find(ranks.begin(), ranks.end(), rank) != ranks.end(); };
}

}  // namespace

Result<StreamedParts<analysis::RankStragglerEvents>> stream_straggler_events(const std::vector<std::string>& paths,
                                                                             const trace::LoadOptions& load,
                                                                             bool include_last_step) {
  return stream_parts<analysis::RankStragglerEvents>(
      paths, load,
      [&](const trace::RankTrace& t) { return analysis::summarize_for_potential_stragglers(t, include_last_step); },
      [](int64_t) { return true; });
}

Result<StreamedParts<analysis::RankKernelSequences>> stream_kernel_sequences(
    const std::vector<std::string>& paths, const trace::LoadOptions& load,
    const analysis::KernelSequenceOptions& options, const std::vector<int64_t>& ranks) {
  return stream_parts<analysis::RankKernelSequences>(
      paths, load, [&](const trace::RankTrace& t) { return analysis::frequent_kernel_sequences(t, options); },
      [&](int64_t rank) { return ranks.empty() || std::find(ranks.begin(), ranks.end(), rank) != ranks.end(); });
}

Result<StreamedParts<analysis::RankAnnotatedKernels>> stream_annotated_kernels(const std::vector<std::string>& paths,
                                                                               const trace::LoadOptions& load,
                                                                               bool include_last_step,
                                                                               const std::vector<int64_t>& ranks) {
  return stream_parts<analysis::RankAnnotatedKernels>(
      paths, load,
      [&](const trace::RankTrace& t) {
        analysis::WindowOptions window;
        window.include_last_step = include_last_step;
        return analysis::gpu_kernels_with_user_annotations(t, analysis::compute_analysis_window(t, window).rows);
      },
      rank_filter(ranks));
}

Result<StreamedParts<analysis::RankAnnotationBreakdown>> stream_annotation_breakdown(
    const std::vector<std::string>& paths, const trace::LoadOptions& load,
    const analysis::AnnotationBreakdownOptions& options, const std::vector<int64_t>& ranks) {
  return stream_parts<analysis::RankAnnotationBreakdown>(
      paths, load,
      [&](const trace::RankTrace& t) {
        analysis::WindowOptions window;
        window.include_last_step = options.include_last_step;
        const std::vector<analysis::AnnotationSpan> spans = analysis::user_annotation_spans(
            t, analysis::compute_analysis_window(t, window).rows, options.use_gpu_annotation);
        analysis::RankAnnotationBreakdown out = analysis::aggregate_user_annotations(t.rank, spans, options);
        out.present = analysis::has_user_annotations(t, options.use_gpu_annotation);
        return out;
      },
      rank_filter(ranks));
}

Result<StreamedParts<analysis::RankCuptiCounters>> stream_cupti_counters(const std::vector<std::string>& paths,
                                                                         const trace::LoadOptions& load,
                                                                         bool include_last_step,
                                                                         const std::vector<int64_t>& ranks) {
  return stream_parts<analysis::RankCuptiCounters>(
      paths, load,
      [&](const trace::RankTrace& t) {
        analysis::WindowOptions window;
        window.include_last_step = include_last_step;
        return analysis::cupti_counters_with_operators(t, analysis::compute_analysis_window(t, window).rows);
      },
      rank_filter(ranks));
}

}  // namespace scaleprof::engine

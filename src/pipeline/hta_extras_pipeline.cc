#include "pipeline/hta_extras_pipeline.h"

#include <utility>

#include "engine/hta_extras_stream.h"
#include "report/hta_extras_report.h"

namespace scaleprof::pipeline {

Result<PotentialStragglersReport> potential_stragglers_report(const std::vector<std::string>& paths,
                                                              const trace::LoadOptions& load,
                                                              const analysis::PotentialStragglerOptions& options,
                                                              bool include_last_step) {
  auto streamed = engine::stream_straggler_events(paths, load, include_last_step);
  if (!streamed) return streamed.error();
  auto found = analysis::find_potential_stragglers(streamed.value().ranks, options);
  if (!found) return found.error();
  PotentialStragglersReport out;
  out.set = std::move(streamed.value().set);
  out.repair_notes = std::move(streamed.value().repair_notes);
  out.result = std::move(found).value();
  out.report = report::potential_stragglers_tables(out.result, options.num_candidates < 1 ? 1 : options.num_candidates);
  return out;
}

Result<KernelSequencesReport> kernel_sequences_report(const std::vector<std::string>& paths,
                                                      const trace::LoadOptions& load,
                                                      const analysis::KernelSequenceOptions& options,
                                                      const std::vector<int64_t>& ranks) {
  auto streamed = engine::stream_kernel_sequences(paths, load, options, ranks);
  if (!streamed) return streamed.error();
  KernelSequencesReport out;
  out.set = std::move(streamed.value().set);
  out.repair_notes = std::move(streamed.value().repair_notes);
  out.ranks = std::move(streamed.value().ranks);
  out.report = report::kernel_sequences_tables(out.ranks, options);
  return out;
}

Result<AnnotatedKernelsReport> annotated_kernels_report(const std::vector<std::string>& paths,
                                                        const trace::LoadOptions& load, bool include_last_step,
                                                        const std::vector<int64_t>& ranks) {
  auto streamed = engine::stream_annotated_kernels(paths, load, include_last_step, ranks);
  if (!streamed) return streamed.error();
  AnnotatedKernelsReport out;
  out.set = std::move(streamed.value().set);
  out.repair_notes = std::move(streamed.value().repair_notes);
  out.ranks = std::move(streamed.value().ranks);
  out.report = report::annotated_kernels_tables(out.ranks);
  return out;
}

Result<AnnotationBreakdownReport> annotation_breakdown_report(const std::vector<std::string>& paths,
                                                              const trace::LoadOptions& load,
                                                              const analysis::AnnotationBreakdownOptions& options,
                                                              const std::vector<int64_t>& ranks) {
  auto streamed = engine::stream_annotation_breakdown(paths, load, options, ranks);
  if (!streamed) return streamed.error();
  AnnotationBreakdownReport out;
  out.set = std::move(streamed.value().set);
  out.repair_notes = std::move(streamed.value().repair_notes);
  out.ranks = std::move(streamed.value().ranks);
  out.report = report::annotation_breakdown_tables(out.ranks, options);
  return out;
}

Result<CuptiCountersReport> cupti_counters_report(const std::vector<std::string>& paths, const trace::LoadOptions& load,
                                                  bool include_last_step, const std::vector<int64_t>& ranks) {
  auto streamed = engine::stream_cupti_counters(paths, load, include_last_step, ranks);
  if (!streamed) return streamed.error();
  CuptiCountersReport out;
  out.set = std::move(streamed.value().set);
  out.repair_notes = std::move(streamed.value().repair_notes);
  out.ranks = std::move(streamed.value().ranks);
  out.report = report::cupti_counters_tables(out.ranks);
  return out;
}

}  // namespace scaleprof::pipeline

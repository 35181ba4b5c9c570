// `scaleprof trace potential-stragglers` and `scaleprof trace kernel-sequences` end to end, for the CLI
// and the Python module (TraceAnalysis.get_potential_stragglers, get_frequent_cuda_kernel_sequences):
// the engine reduces each rank (engine/hta_extras_stream.h), the analysis runs on the reductions
// (analysis/potential_stragglers.h, analysis/kernel_sequences.h) and the report makes the tables
// (report/hta_extras_report.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/cupti_counters.h"
#include "analysis/kernel_sequences.h"
#include "analysis/potential_stragglers.h"
#include "analysis/user_annotations.h"
#include "core/result.h"
#include "report/trace_report.h"
#include "trace/trace_set.h"

namespace scaleprof::pipeline {

// What a per-rank HTA analysis gives its front-ends: the set read (for its warnings and exit code), the
// notes of repaired files, each selected rank's result and the tables.
template <class RankResult>
struct PerRankReport {
  trace::StreamedSet set;
  std::vector<std::string> repair_notes;
  std::vector<RankResult> ranks;  // the ranks selected and read, in rank order
  report::TraceReport report;
};

struct PotentialStragglersReport {
  trace::StreamedSet set;
  std::vector<std::string> repair_notes;
  analysis::PotentialStragglers result;
  report::TraceReport report;
};

// Fails as trace::stream_traces does, and (kUsage) when no step asked for is among the analysed steps.
Result<PotentialStragglersReport> potential_stragglers_report(const std::vector<std::string>& paths,
                                                              const trace::LoadOptions& load,
                                                              const analysis::PotentialStragglerOptions& options,
                                                              bool include_last_step);

using KernelSequencesReport = PerRankReport<analysis::RankKernelSequences>;

// `ranks`: the ranks analysed (empty: all). Fails as trace::stream_traces does.
Result<KernelSequencesReport> kernel_sequences_report(const std::vector<std::string>& paths,
                                                      const trace::LoadOptions& load,
                                                      const analysis::KernelSequenceOptions& options,
                                                      const std::vector<int64_t>& ranks);

// `scaleprof trace annotations` (TraceAnalysis.get_gpu_kernels_with_user_annotations and
// get_gpu_user_annotation_breakdown).
using AnnotatedKernelsReport = PerRankReport<analysis::RankAnnotatedKernels>;

// `ranks`: the ranks analysed (empty: all). Fails as trace::stream_traces does.
Result<AnnotatedKernelsReport> annotated_kernels_report(const std::vector<std::string>& paths,
                                                        const trace::LoadOptions& load, bool include_last_step,
                                                        const std::vector<int64_t>& ranks);

using AnnotationBreakdownReport = PerRankReport<analysis::RankAnnotationBreakdown>;

// `ranks`: the ranks analysed (empty: all). Fails as trace::stream_traces does.
Result<AnnotationBreakdownReport> annotation_breakdown_report(const std::vector<std::string>& paths,
                                                              const trace::LoadOptions& load,
                                                              const analysis::AnnotationBreakdownOptions& options,
                                                              const std::vector<int64_t>& ranks);

// `scaleprof trace cupti-counters` (TraceAnalysis.get_cupti_counter_data_with_operators).
using CuptiCountersReport = PerRankReport<analysis::RankCuptiCounters>;

// `ranks`: the ranks analysed (empty: all). Fails as trace::stream_traces does.
Result<CuptiCountersReport> cupti_counters_report(const std::vector<std::string>& paths, const trace::LoadOptions& load,
                                                  bool include_last_step, const std::vector<int64_t>& ranks);

}  // namespace scaleprof::pipeline

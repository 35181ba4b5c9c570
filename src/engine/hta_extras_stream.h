// Streams ranks for HTA's analyses that have a command of their own (`scaleprof trace
// potential-stragglers`, `trace kernel-sequences`, `trace annotations`, `trace cupti-counters`) through the engine's
// per-rank driver (engine/rank_stream.h): each rank is reduced on the thread that read it to what the analysis needs
// and freed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/cupti_counters.h"
#include "analysis/kernel_sequences.h"
#include "analysis/potential_stragglers.h"
#include "analysis/user_annotations.h"
#include "core/result.h"
#include "trace/trace_set.h"

namespace scaleprof::engine {

template <class Parts>
struct StreamedParts {
  trace::StreamedSet set;                 // the files, their final ranks, errors and warnings
  std::vector<std::string> repair_notes;  // "FILE: repaired N invalid JSON spots ...", in rank order
  std::vector<Parts> ranks;               // every rank kept, in rank order
};

// Every rank's steps and last communication kernels (analysis/potential_stragglers.h).
Result<StreamedParts<analysis::RankStragglerEvents>> stream_straggler_events(const std::vector<std::string>& paths,
                                                                             const trace::LoadOptions& load,
                                                                             bool include_last_step);

// The kernel sequences of the ranks of `ranks` (empty: every rank).
Result<StreamedParts<analysis::RankKernelSequences>> stream_kernel_sequences(
    const std::vector<std::string>& paths, const trace::LoadOptions& load,
    const analysis::KernelSequenceOptions& options, const std::vector<int64_t>& ranks);

// The device work of the ranks of `ranks` (empty: every rank) with the gpu_user_annotation span that
// holds each, inside each rank's analysis window.
Result<StreamedParts<analysis::RankAnnotatedKernels>> stream_annotated_kernels(const std::vector<std::string>& paths,
                                                                               const trace::LoadOptions& load,
                                                                               bool include_last_step,
                                                                               const std::vector<int64_t>& ranks);

// Every rank's user annotation spans (gpu or host, options.use_gpu_annotation) aggregated by name.
Result<StreamedParts<analysis::RankAnnotationBreakdown>> stream_annotation_breakdown(
    const std::vector<std::string>& paths, const trace::LoadOptions& load,
    const analysis::AnnotationBreakdownOptions& options, const std::vector<int64_t>& ranks);

// The CUPTI counters of the kernels of the ranks of `ranks` (empty: every rank), with their operators.
Result<StreamedParts<analysis::RankCuptiCounters>> stream_cupti_counters(const std::vector<std::string>& paths,
                                                                         const trace::LoadOptions& load,
                                                                         bool include_last_step,
                                                                         const std::vector<int64_t>& ranks);

}  // namespace scaleprof::engine

// The tables of `scaleprof trace potential-stragglers` (analysis/potential_stragglers.h) and `scaleprof
// trace kernel-sequences` (analysis/kernel_sequences.h), each as table, CSV or JSON through the one
// writer (report/table.h). JSON shapes: docs/trace-json.md.
#pragma once

#include <string>
#include <vector>

#include "analysis/cupti_counters.h"
#include "analysis/kernel_sequences.h"
#include "analysis/potential_stragglers.h"
#include "analysis/user_annotations.h"
#include "report/trace_report.h"

namespace scaleprof::report {

// `potential_stragglers` (HTA's list, then every rank with a candidate kernel), `straggler_metric` (per
// step and rank) and `straggler_basis` (the steps, the mean step time, the kernel chosen).
TraceReport potential_stragglers_tables(const analysis::PotentialStragglers& result, int64_t num_candidates);

// `kernel_sequences`: every pattern of every rank, by rank, then count and pattern.
TraceReport kernel_sequences_tables(const std::vector<analysis::RankKernelSequences>& ranks,
                                    const analysis::KernelSequenceOptions& options);

// `gpu_kernels_with_user_annotations`: every rank's device work with the gpu_user_annotation span that
// holds it (null: none), by rank then start.
TraceReport annotated_kernels_tables(const std::vector<analysis::RankAnnotatedKernels>& ranks);

// `user_annotation_breakdown`: per rank and annotation name (HTA's "others" folded as HTA picks it),
// the spans' count and duration statistics; `user_annotation_spans`: per rank, the spans found.
TraceReport annotation_breakdown_tables(const std::vector<analysis::RankAnnotationBreakdown>& ranks,
                                        const analysis::AnnotationBreakdownOptions& options);

// `cupti_counters` (per kernel: its operators; HTA's op_stack joined by " > "), `cupti_counter_values`
// (per kernel and counter: the value; HTA's one column per counter, long here so that counter names
// from the trace are cells, never headers), `cupti_op_stacks` (per kernel and depth: the operator) and
// `cupti_ranks` (per rank: the events paired, or why not).
TraceReport cupti_counters_tables(const std::vector<analysis::RankCuptiCounters>& ranks);

}  // namespace scaleprof::report

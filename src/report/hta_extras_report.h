// The tables of `scaleprof trace potential-stragglers` (analysis/potential_stragglers.h) and `scaleprof
// trace kernel-sequences` (analysis/kernel_sequences.h), each as table, CSV or JSON through the one
// writer (report/table.h). JSON shapes: docs/trace-json.md.
#pragma once

#include <string>
#include <vector>

#include "analysis/kernel_sequences.h"
#include "analysis/potential_stragglers.h"
#include "report/trace_report.h"

namespace scaleprof::report {

// `potential_stragglers` (HTA's list, then every rank with a candidate kernel), `straggler_metric` (per
// step and rank) and `straggler_basis` (the steps, the mean step time, the kernel chosen).
TraceReport potential_stragglers_tables(const analysis::PotentialStragglers& result, int64_t num_candidates);

// `kernel_sequences`: every pattern of every rank, by rank, then count and pattern.
TraceReport kernel_sequences_tables(const std::vector<analysis::RankKernelSequences>& ranks,
                                    const analysis::KernelSequenceOptions& options);

}  // namespace scaleprof::report

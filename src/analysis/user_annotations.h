// HTA's user-annotation analyses (hta/analyzers/breakdown_analysis.py):
//
//  * `get_gpu_kernels_with_user_annotations`: every piece of device work of a rank with the
//    gpu_user_annotation span that holds it. HTA's rule: the spans and the work are matched on the
//    same (pid, tid) track; a span [ts, end) holds work [ts, end) when the two overlap as half-open
//    intervals (work start < span end and span start < work end, so work of zero length on a span's
//    first nanosecond is not held); where several spans hold the work, the shortest wins (HTA assigns
//    the spans longest first, each overwriting the last: the leaf of the stack). Work no span holds
//    has no annotation (HTA's -1).
//  * `get_gpu_user_annotation_breakdown`: the time of each annotation name per rank, over the
//    gpu_user_annotation spans (use_gpu_annotation) or the host `user_annotation` spans (record_function
//    and ProfilerStep#N, each span counted on its own, nested ones included): count, sum, max, min,
//    mean and sample std of the spans' durations. With more than `num_kernels` names, HTA's rule folds
//    names into "others": ordered by sum (largest first), a name whose running sum exceeds the
//    `duration_ratio`-quantile of the running sums, or at position num_kernels or later, is folded,
//    unless it contains one of `allowlist_patterns` (HTA escapes the patterns, so they are literal
//    substrings). Rows are by name.
//
// Only the events of the analysis window (analysis_window.h: the last step left out, as HTA's loaded
// trace) count; device work is analysis/device_events.h's (kernels, copies, sets, sync records).
// Differences from HTA 0.6.1: docs/differences-from-hta.md, "User annotations".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/distribution.h"
#include "trace/event_table.h"

namespace scaleprof::analysis {

struct AnnotatedKernel {
  std::string name;
  std::string cat;  // the category's name ("kernel", "gpu_memcpy", ...)
  int64_t pid = trace::kNone;
  int64_t tid = trace::kNone;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  int64_t stream = trace::kNone;
  int64_t correlation = trace::kNone;
  int64_t external_id = trace::kNone;
  int32_t annotation = -1;  // index into RankAnnotatedKernels::annotation_names; -1: no span holds it
};

struct RankAnnotatedKernels {
  int64_t rank = 0;
  int64_t spans = 0;                          // gpu_user_annotation spans in the window
  std::vector<std::string> annotation_names;  // the names kernels got, first use first
  std::vector<AnnotatedKernel> kernels;       // by start, then file order
};

// `rows`: the analysis window's rows.
RankAnnotatedKernels gpu_kernels_with_user_annotations(const trace::RankTrace& trace, std::span<const uint32_t> rows);

// One annotation span's name and duration.
struct AnnotationSpan {
  std::string name;
  int64_t dur_ns = 0;
};

// The complete spans of category gpu_user_annotation (gpu) or user_annotation (host) among `rows`.
std::vector<AnnotationSpan> user_annotation_spans(const trace::RankTrace& trace, std::span<const uint32_t> rows,
                                                  bool gpu);
// Whether any event of the rank, in the window or not, is of that category.
bool has_user_annotations(const trace::RankTrace& trace, bool gpu);

struct AnnotationBreakdownOptions {
  bool use_gpu_annotation = true;
  double duration_ratio = 0.8;
  int64_t num_kernels = 1000;
  bool has_allowlist = false;          // allowlist_patterns given (an empty list keeps every name)
  std::vector<std::string> allowlist;  // literal substrings
  bool include_last_step = false;
};

struct AnnotationStats {
  std::string name;
  bool others = false;  // the "others" row
  int64_t names = 1;    // distinct names in the row
  RunningStats dur;     // ns, over the spans
};

struct RankAnnotationBreakdown {
  int64_t rank = 0;
  bool present = false;               // the rank has a span of the category, in the window or not (HTA: else None)
  int64_t spans = 0;                  // spans in the window
  std::vector<AnnotationStats> rows;  // by name ("others" sorted as a name)
};

// Groups `spans` by name and applies HTA's folding rule.
RankAnnotationBreakdown aggregate_user_annotations(int64_t rank, std::span<const AnnotationSpan> spans,
                                                   const AnnotationBreakdownOptions& options);

}  // namespace scaleprof::analysis

// HTA's user-annotation analyses (analysis/user_annotations.h) on small hand-written traces whose
// answers are known by construction.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analysis_window.h"
#include "analysis/user_annotations.h"
#include "host_trace_builder.h"

namespace scaleprof::analysis {
namespace {

using testing::HostTraceBuilder;
using trace::Category;

// On stream 7: "outer" spans [0, 1000), "inner" [100, 300) inside it, "other" [2000, 2100).
// Kernels: a [150, 160) in inner and outer; b [500, 510) in outer only; c [950, 1050) overlaps outer's
// end; d [1000, 1000) of zero length at outer's end; e [2000, 2000) of zero length at other's start;
// f [3000, 3010) in none; g [150, 160) on another track, where only "elsewhere" [0, 5000) lies.
trace::RankTrace ua_annotated() {
  HostTraceBuilder b;
  b.kernel("outer", 0, 1000, trace::kNone, trace::kNone, Category::kGpuUserAnnotation);
  b.kernel("inner", 100, 200, trace::kNone, trace::kNone, Category::kGpuUserAnnotation);
  b.kernel("other", 2000, 100, trace::kNone, trace::kNone, Category::kGpuUserAnnotation);
  b.kernel("a", 150, 10, trace::kNone, 1);
  b.kernel("b", 500, 10, trace::kNone, 2);
  b.kernel("c", 950, 100, trace::kNone, 3);
  b.kernel("d", 1000, 0, trace::kNone, 4);
  b.kernel("e", 2000, 0, trace::kNone, 5);
  b.kernel("f", 3000, 10, trace::kNone, 6);
  b.op("elsewhere", 0, 5000, 1, trace::kNone, Category::kGpuUserAnnotation);
  b.kernel("g_memcpy", 150, 10, trace::kNone, 7, Category::kGpuMemcpy);
  return b.take();
}

std::vector<uint32_t> ua_all_rows(const trace::RankTrace& t) {
  std::vector<uint32_t> rows(t.events.size());
  for (uint32_t i = 0; i < rows.size(); ++i) rows[i] = i;
  return rows;
}

std::string ua_annotation_of(const RankAnnotatedKernels& r, const std::string& kernel) {
  for (const AnnotatedKernel& k : r.kernels) {
    if (k.name == kernel) return k.annotation < 0 ? "-" : r.annotation_names[static_cast<size_t>(k.annotation)];
  }
  return "missing";
}

TEST(UserAnnotations, KernelsGetTheShortestOverlappingSpanOnTheirTrack) {
  const trace::RankTrace t = ua_annotated();
  const RankAnnotatedKernels r = gpu_kernels_with_user_annotations(t, ua_all_rows(t));
  EXPECT_EQ(r.spans, 4);
  ASSERT_EQ(r.kernels.size(), 7u);
  EXPECT_EQ(ua_annotation_of(r, "a"), "inner");
  EXPECT_EQ(ua_annotation_of(r, "b"), "outer");
  EXPECT_EQ(ua_annotation_of(r, "c"), "outer");  // overlaps the span's end
  EXPECT_EQ(ua_annotation_of(r, "d"), "-");      // zero length at the span's end: [1000, 1000) overlaps nothing
  EXPECT_EQ(ua_annotation_of(r, "e"), "-");      // zero length at the span's start: HTA's 2000 < 2000 fails
  EXPECT_EQ(ua_annotation_of(r, "f"), "-");
  // The copy is on stream 7 too (the builder's device track), so "elsewhere" on the host track does not
  // hold it, while inner does.
  EXPECT_EQ(ua_annotation_of(r, "g_memcpy"), "inner");
  // By start, then file order.
  EXPECT_EQ(r.kernels.front().name, "a");
  EXPECT_EQ(r.kernels[1].name, "g_memcpy");
  EXPECT_EQ(r.kernels.back().name, "f");
  EXPECT_EQ(r.kernels.front().cat, "kernel");
  EXPECT_EQ(r.kernels.front().correlation, 1);
}

TEST(UserAnnotations, WindowLeavesOutTheLastStepsSpansAndKernels) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 1000);
  b.annotation("ProfilerStep#2", 1000, 1000);
  b.runtime("cudaLaunchKernel", 10, 5, 1);
  b.kernel("k1", 100, 10, trace::kNone, 1);
  b.runtime("cudaLaunchKernel", 1010, 5, 2);
  b.kernel("k2", 1100, 10, trace::kNone, 2);
  b.kernel("fwd", 50, 500, trace::kNone, trace::kNone, Category::kGpuUserAnnotation);
  b.kernel("fwd", 1050, 500, trace::kNone, trace::kNone, Category::kGpuUserAnnotation);
  const trace::RankTrace t = b.take();
  const AnalysisWindow w = compute_analysis_window(t);
  const RankAnnotatedKernels r = gpu_kernels_with_user_annotations(t, w.rows);
  EXPECT_EQ(r.spans, 1);
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].name, "k1");
  EXPECT_EQ(ua_annotation_of(r, "k1"), "fwd");
  // The host breakdown counts ProfilerStep#1 only (the last step is outside the window).
  const std::vector<AnnotationSpan> host = user_annotation_spans(t, w.rows, false);
  ASSERT_EQ(host.size(), 1u);
  EXPECT_EQ(host[0].name, "ProfilerStep#1");
  EXPECT_EQ(user_annotation_spans(t, w.rows, true).size(), 1u);
  EXPECT_TRUE(has_user_annotations(t, true));
  EXPECT_TRUE(has_user_annotations(t, false));
}

std::vector<AnnotationSpan> ua_spans_of(const std::vector<std::pair<std::string, int64_t>>& named) {
  std::vector<AnnotationSpan> out;
  for (const auto& [name, dur] : named) out.push_back({name, dur});
  return out;
}

const AnnotationStats* ua_row(const RankAnnotationBreakdown& b, const std::string& name) {
  for (const AnnotationStats& s : b.rows) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST(UserAnnotations, BreakdownStatisticsByName) {
  const auto spans = ua_spans_of({{"fwd", 100}, {"fwd", 300}, {"bwd", 50}});
  const RankAnnotationBreakdown b = aggregate_user_annotations(3, spans, {});
  EXPECT_EQ(b.rank, 3);
  ASSERT_EQ(b.rows.size(), 2u);
  EXPECT_EQ(b.rows[0].name, "bwd");  // by name
  const AnnotationStats* fwd = ua_row(b, "fwd");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->dur.count, 2);
  EXPECT_EQ(fwd->dur.sum, 400);
  EXPECT_EQ(fwd->dur.max, 300);
  EXPECT_EQ(fwd->dur.min, 100);
  EXPECT_DOUBLE_EQ(fwd->dur.mean, 200.0);
  EXPECT_NEAR(fwd->dur.stddev(), 141.42135623730951, 1e-9);
  EXPECT_EQ(ua_row(b, "bwd")->dur.stddev(), 0.0);  // one span: HTA fills NaN with 0
}

TEST(UserAnnotations, FoldingFollowsHtasQuantileAndPositionRules) {
  // Sums 1000, 500, 300, 200: running 1000, 1500, 1800, 2000. The 0.5-quantile of the running sums is
  // 1650, so c (1800) and d (2000) fold; with num_kernels 1, b folds too (position 1).
  const auto spans = ua_spans_of({{"a", 1000}, {"b", 500}, {"c", 300}, {"d", 200}});
  AnnotationBreakdownOptions options;
  options.duration_ratio = 0.5;
  options.num_kernels = 3;
  RankAnnotationBreakdown b = aggregate_user_annotations(0, spans, options);
  ASSERT_EQ(b.rows.size(), 3u);
  EXPECT_EQ(b.rows[0].name, "a");
  EXPECT_EQ(b.rows[1].name, "b");
  EXPECT_EQ(b.rows[2].name, "others");
  EXPECT_TRUE(b.rows[2].others);
  EXPECT_EQ(b.rows[2].names, 2);
  EXPECT_EQ(b.rows[2].dur.sum, 500);
  EXPECT_EQ(b.rows[2].dur.count, 2);
  EXPECT_EQ(b.rows[2].dur.max, 300);  // the spans' statistics, not HTA's regrouped sums

  options.num_kernels = 1;
  b = aggregate_user_annotations(0, spans, options);
  ASSERT_EQ(b.rows.size(), 2u);
  EXPECT_EQ(ua_row(b, "others")->dur.sum, 1000);

  // An allowlisted name (literal substring) is never folded.
  options.has_allowlist = true;
  options.allowlist = {"d"};
  b = aggregate_user_annotations(0, spans, options);
  ASSERT_EQ(b.rows.size(), 3u);
  ASSERT_NE(ua_row(b, "d"), nullptr);
  EXPECT_EQ(ua_row(b, "others")->dur.sum, 800);
  options.allowlist = {"."};  // not a regular expression: matches no name here
  b = aggregate_user_annotations(0, spans, options);
  EXPECT_EQ(b.rows.size(), 2u);
  options.allowlist = {};  // an empty list keeps every name (HTA's empty pattern matches all)
  b = aggregate_user_annotations(0, spans, options);
  EXPECT_EQ(b.rows.size(), 4u);

  // At most num_kernels names: nothing folds, whatever the ratio.
  options = {};
  options.duration_ratio = 0.0;
  options.num_kernels = 4;
  EXPECT_EQ(aggregate_user_annotations(0, spans, options).rows.size(), 4u);
}

}  // namespace
}  // namespace scaleprof::analysis

#include "analysis/analysis_window.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "rank_trace_builder.h"

namespace scaleprof::analysis {
namespace {

using testing::RankTraceBuilder;
using trace::Category;

bool kept(const AnalysisWindow& w, uint32_t row) {
  return std::binary_search(w.rows.begin(), w.rows.end(), row);
}

TEST(AnalysisWindow, WithoutTwoStepsNothingIsFilteredButTheSpan) {
  RankTraceBuilder b;
  const uint32_t span = b.add("PyTorch Profiler (0)", Category::kTrace, 0, 1'000'000);
  b.add("ProfilerStep#3", Category::kUserAnnotation, 0, 100);
  b.add("ProfilerStep#3", Category::kUserAnnotation, 200, 100);  // the same name twice is one step
  b.launched_kernel("k", 500, 10, 600, 10, /*correlation=*/1);
  const AnalysisWindow w = compute_analysis_window(b.trace());
  EXPECT_FALSE(w.filtered);
  EXPECT_EQ(w.distinct_steps, 1u);
  EXPECT_EQ(w.rows.size(), 4u);
  EXPECT_FALSE(kept(w, span));
}

// Steps #1 [0, 1000) and #2 [1000, 2000): the last step and what it launched are dropped, while
// work launched in step 1 stays even when the device runs it during step 2. Correlation ids start at
// `first_correlation`.
struct TwoSteps {
  RankTraceBuilder b;
  uint32_t step1, step2, op_in_step1, op_at_cutoff, op_in_step2, op_after_end;
  uint32_t launch_early, kernel_late, launch_late, kernel_of_late, stray_early, stray_late, annotation;

  explicit TwoSteps(int64_t first_correlation = 7) {
    const int64_t c7 = first_correlation;
    const int64_t c8 = first_correlation + 1;
    step1 = b.add("ProfilerStep#1", Category::kUserAnnotation, 0, 1000);
    step2 = b.add("ProfilerStep#2", Category::kUserAnnotation, 1000, 1000);
    op_in_step1 = b.cpu_op("aten::mm", 100, 50);
    op_at_cutoff = b.cpu_op("aten::add", 1000, 10);  // starts exactly at the last step: dropped
    op_in_step2 = b.cpu_op("aten::mul", 1500, 10);
    op_after_end = b.cpu_op("aten::div", 2500, 10);
    launch_early = b.runtime("cudaLaunchKernel", 900, 20, c7);
    kernel_late = b.kernel("late_kernel", 1200, 300, 7, c7);  // launched in step 1, runs in step 2
    launch_late = b.runtime("cudaLaunchKernel", 1600, 20, c8);
    kernel_of_late = b.kernel("k2", 1700, 10, 7, c8);
    stray_early = b.kernel("no_correlation", 500, 10);  // no correlation: judged by its own start
    stray_late = b.kernel("no_correlation", 1500, 10);
    // A device-side annotation with a step name is not a step.
    annotation = b.add("ProfilerStep#9", Category::kGpuUserAnnotation, 10, 10, trace::kNone, trace::kNone, 0, 7);
  }
};

TEST(AnalysisWindow, DropsTheLastStepAndWhatItLaunched) {
  TwoSteps s;
  const AnalysisWindow w = compute_analysis_window(s.b.trace());
  EXPECT_TRUE(w.filtered);
  EXPECT_EQ(w.distinct_steps, 2u);
  EXPECT_EQ(w.last_step_start, 1000);
  EXPECT_EQ(w.last_step_end, 2000);
  EXPECT_TRUE(kept(w, s.step1));
  EXPECT_FALSE(kept(w, s.step2));
  EXPECT_TRUE(kept(w, s.op_in_step1));
  EXPECT_FALSE(kept(w, s.op_at_cutoff));
  EXPECT_FALSE(kept(w, s.op_in_step2));
  EXPECT_TRUE(kept(w, s.launch_early));
  EXPECT_TRUE(kept(w, s.kernel_late));
  EXPECT_FALSE(kept(w, s.launch_late));
  EXPECT_FALSE(kept(w, s.kernel_of_late));
  EXPECT_TRUE(kept(w, s.stray_early));
  EXPECT_FALSE(kept(w, s.stray_late));
  EXPECT_TRUE(kept(w, s.annotation));  // host-side rule on its start time, as HTA
  EXPECT_EQ(w.rows.size(), 6u);
  EXPECT_TRUE(std::is_sorted(w.rows.begin(), w.rows.end()));
}

// Correlation ids far beyond the number of rows are looked up in sorted order rather than in a
// bitmap over them: the same rows are kept.
TEST(AnalysisWindow, SparseCorrelationIdsKeepTheSameRows) {
  TwoSteps dense;
  TwoSteps sparse(int64_t{1} << 50);
  const AnalysisWindow a = compute_analysis_window(dense.b.trace());
  const AnalysisWindow b = compute_analysis_window(sparse.b.trace());
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_TRUE(kept(b, sparse.kernel_late));
  EXPECT_FALSE(kept(b, sparse.kernel_of_late));
}

TEST(AnalysisWindow, IncludeLastStepKeepsEverythingUpToItsEnd) {
  TwoSteps s;
  WindowOptions options;
  options.include_last_step = true;
  const AnalysisWindow w = compute_analysis_window(s.b.trace(), options);
  EXPECT_TRUE(w.filtered);
  EXPECT_TRUE(kept(w, s.step2));
  EXPECT_TRUE(kept(w, s.op_at_cutoff));
  EXPECT_TRUE(kept(w, s.op_in_step2));
  EXPECT_FALSE(kept(w, s.op_after_end));
  EXPECT_TRUE(kept(w, s.launch_late));
  EXPECT_TRUE(kept(w, s.kernel_of_late));
  EXPECT_TRUE(kept(w, s.stray_late));
  EXPECT_EQ(w.rows.size(), 12u);
}

}  // namespace
}  // namespace scaleprof::analysis

#include "analysis/profiler_steps.h"

#include <gtest/gtest.h>

#include "host_trace_builder.h"

namespace scaleprof::analysis {
namespace {

using testing::HostTraceBuilder;
using trace::Category;

TEST(ProfilerSteps, ParsesStepNumbers) {
  EXPECT_EQ(profiler_step_number("ProfilerStep#0"), 0);
  EXPECT_EQ(profiler_step_number("ProfilerStep#12"), 12);
  EXPECT_FALSE(profiler_step_number("ProfilerStep*"));
  EXPECT_FALSE(profiler_step_number("ProfilerStep#"));
  EXPECT_FALSE(profiler_step_number("ProfilerStep#3a"));
  EXPECT_FALSE(profiler_step_number("ProfilerStep#-1"));
  EXPECT_FALSE(profiler_step_number("aten::mm"));
}

TEST(ProfilerSteps, NoStepsInAnUnscheduledTrace) {
  HostTraceBuilder b;
  b.op("aten::mm", 0, 10);
  ProfilerSteps s = find_profiler_steps(b.take());
  EXPECT_TRUE(s.steps.empty());
  EXPECT_FALSE(s.has_kernels);
}

TEST(ProfilerSteps, WindowsAreSortedByStartAndKeepTheirNumbers) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#4", 100, 50);
  b.annotation("ProfilerStep#3", 0, 90);
  b.op("ProfilerStep#5", 200, 10);  // PyTorch 1.x wrote steps as cpu_op
  b.kernel("ProfilerStep#3", 5, 80, trace::kNone, trace::kNone, Category::kGpuUserAnnotation);  // not a window
  ProfilerSteps s = find_profiler_steps(b.take());
  ASSERT_EQ(s.steps.size(), 3u);
  EXPECT_EQ(s.steps[0].step, 3);
  EXPECT_EQ(s.steps[0].start_ns, 0);
  EXPECT_EQ(s.steps[0].end_ns, 90);
  EXPECT_EQ(s.steps[1].step, 4);
  EXPECT_EQ(s.steps[1].duration_ns(), 50);
  EXPECT_EQ(s.steps[2].step, 5);
  EXPECT_EQ(s.steps[0].kernels, 0);
  EXPECT_EQ(s.steps[0].first_kernel_start_ns, trace::kNone);
}

TEST(ProfilerSteps, RepeatedNumbersOfPyTorch113AreKept) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#0", 0, 10);
  b.annotation("ProfilerStep#0", 10, 10);
  ProfilerSteps s = find_profiler_steps(b.take());
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[0].step, 0);
  EXPECT_EQ(s.steps[1].step, 0);
}

// Kernels belong to the step their launch falls in, wherever they run.
TEST(ProfilerSteps, KernelsCountInTheStepThatLaunchedThem) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#3", 0, 100);
  b.annotation("ProfilerStep#4", 100, 100);
  b.runtime("cudaLaunchKernel", 10, 5, /*correlation=*/1);
  b.kernel("k1", 50, 30, trace::kNone, /*correlation=*/1);  // [50, 80]
  b.runtime("cudaLaunchKernel", 20, 5, 2);
  b.kernel("k2", 70, 50, trace::kNone, 2);   // [70, 120], runs into step 4 but launched in 3
  b.runtime("cudaLaunchKernel", 100, 5, 3);  // exactly at step 4's start: windows are [start, end)
  b.kernel("k3", 130, 10, trace::kNone, 3);
  b.op("aten::mm", 150, 20, 1, /*external_id=*/9);  // no runtime event: the op's External id is the launch
  b.kernel("k4", 300, 10, /*external_id=*/9, /*correlation=*/4);
  b.kernel("k5", 400, 10);                   // launch unknown
  b.runtime("cudaLaunchKernel", 250, 5, 6);  // after the last step
  b.kernel("k6", 260, 10, trace::kNone, 6);
  b.runtime("cudaMemcpyAsync", 30, 5, 7);  // copies are device work of the step too
  b.kernel("Memcpy HtoD", 60, 10, trace::kNone, 7, Category::kGpuMemcpy);
  b.kernel("Stream Sync", 60, 90, trace::kNone, 7, Category::kCudaSync);  // a host wait: not counted
  ProfilerSteps s = find_profiler_steps(b.take());
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_TRUE(s.has_kernels);
  EXPECT_EQ(s.steps[0].kernels, 3);
  EXPECT_EQ(s.steps[0].gpu_busy_ns, 70);    // union [50, 120]
  EXPECT_EQ(s.steps[0].kernel_sum_ns, 90);  // 30 + 50 + the copy's 10
  EXPECT_EQ(s.steps[0].first_kernel_start_ns, 50);
  EXPECT_EQ(s.steps[0].last_kernel_end_ns, 120);
  EXPECT_EQ(s.steps[1].kernels, 2);
  EXPECT_EQ(s.steps[1].gpu_busy_ns, 20);  // [130, 140] and [300, 310]
  EXPECT_EQ(s.steps[1].kernel_sum_ns, 20);
  EXPECT_EQ(s.kernels_outside_steps, 2);  // k5 and k6
}

}  // namespace
}  // namespace scaleprof::analysis

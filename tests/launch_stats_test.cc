#include "analysis/launch_stats.h"

#include <gtest/gtest.h>

#include "rank_trace_builder.h"

namespace scaleprof::analysis {
namespace {

using testing::RankTraceBuilder;
using trace::Category;

TEST(LaunchStats, JoinsLaunchesWithTheirDeviceWork) {
  RankTraceBuilder b;
  b.runtime("cudaLaunchKernel", 0, 10, 1);
  b.kernel("gemm", 15, 5, 7, 1);                                            // delay 15 - 10 = 5
  b.add("cuLaunchKernel", Category::kCudaDriver, 20, 10, trace::kNone, 2);  // Triton's driver API
  b.kernel("triton_kernel", 25, 3, 7, 2);                                   // starts before the call returns: delay 0
  b.runtime("cudaMemcpyAsync", 40, 4, 3);
  b.kernel("Memcpy HtoD", 50, 8, 7, 3, Category::kGpuMemcpy);
  b.runtime("hipLaunchKernel", 60, 2, 4);
  b.kernel("hip_kernel", 70, 1, 0, 4);
  b.runtime("cudaStreamSynchronize", 80, 5, 5);  // not a launch
  b.kernel("Stream Sync", 80, 5, 7, 5, Category::kCudaSync);
  b.runtime("cudaLaunchKernel", 90, 1, 6);  // launch without device work: no row
  b.kernel("orphan", 95, 1, 7, 7);          // device work without launch: no row
  const std::vector<KernelLaunch> l = kernel_launches(b.trace(), b.all_rows());
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0].correlation, 1);
  EXPECT_EQ(l[0].cpu_duration_ns, 10);
  EXPECT_EQ(l[0].gpu_duration_ns, 5);
  EXPECT_EQ(l[0].launch_delay_ns, 5);
  EXPECT_EQ(l[1].correlation, 2);
  EXPECT_EQ(l[1].launch_delay_ns, 0);
  EXPECT_EQ(l[2].correlation, 3);
  EXPECT_EQ(l[2].launch_delay_ns, 6);
  EXPECT_EQ(l[3].correlation, 4);
  EXPECT_EQ(b.trace().name(l[3].launch_row), "hipLaunchKernel");
  EXPECT_EQ(b.trace().name(l[3].device_row), "hip_kernel");

  const LaunchSummary s = summarize_launches(l);
  EXPECT_EQ(s.cpu_duration.count, 4);
  EXPECT_EQ(s.cpu_duration.sum, 10 + 10 + 4 + 2);
  EXPECT_EQ(s.gpu_duration.sum, 5 + 3 + 8 + 1);
  EXPECT_EQ(s.launch_delay.sum, 5 + 0 + 6 + 8);
  EXPECT_DOUBLE_EQ(s.launch_delay.max, 8);
}

TEST(LaunchStats, LaunchApiNames) {
  for (const char* name : {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
                           "hipLaunchKernel", "hipExtModuleLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync"}) {
    EXPECT_TRUE(is_launch_api_name(name)) << name;
  }
  for (const char* name : {"cudaGraphLaunch", "cudaStreamSynchronize", "cudaMemcpy", "aten::mm"}) {
    EXPECT_FALSE(is_launch_api_name(name)) << name;
  }
}

}  // namespace
}  // namespace scaleprof::analysis

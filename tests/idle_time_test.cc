#include "analysis/idle_time.h"

#include <gtest/gtest.h>

#include <cmath>

#include "rank_trace_builder.h"

namespace scaleprof::analysis {
namespace {

using testing::RankTraceBuilder;
using trace::Category;

constexpr int kHost = static_cast<int>(IdleCategory::kHostWait);
constexpr int kKernel = static_cast<int>(IdleCategory::kKernelWait);
constexpr int kOther = static_cast<int>(IdleCategory::kOther);

// Stream 7 of device 0, times in ns, threshold 30 us:
//   k1 [10, 20)        launched at 0
//   k2 [25, 30)        launched at 5 (before k1 ended), gap 5       -> kernel_wait
//   k3 [100030, ...)   launched at 100000, after k2 ended, gap 100000 -> host_wait
//   k4 [200040, ...)   launched at 50 (long ago), gap 99 990         -> other
//   k5 [200055, ...)   no launch in the trace, gap 5                 -> kernel_wait
RankTraceBuilder stream7() {
  RankTraceBuilder b;
  b.launched_kernel("k1", 0, 2, 10, 10, 1);
  b.launched_kernel("k2", 5, 2, 25, 5, 2);
  b.launched_kernel("k3", 100'000, 2, 100'030, 20, 3);
  b.launched_kernel("k4", 50, 2, 200'040, 10, 4);
  b.kernel("k5", 200'055, 10);
  b.kernel("Stream Sync", 300'000, 10, 7, 99, Category::kCudaSync);  // not stream work
  b.kernel("lonely", 0, 10, 8);                                      // stream 8: one event
  return b;
}

TEST(IdleTime, SplitsGapsByCause) {
  RankTraceBuilder b = stream7();
  const std::vector<StreamIdle> idle = idle_time_breakdown(b.trace(), b.all_rows());
  ASSERT_EQ(idle.size(), 2u);
  const StreamIdle& s = idle[0];
  EXPECT_EQ(s.device, 0);
  EXPECT_EQ(s.stream, 7);
  EXPECT_EQ(s.events, 5);
  EXPECT_EQ(s.idle_ns[kHost], 100'000);
  EXPECT_EQ(s.idle_ns[kKernel], 10);
  EXPECT_EQ(s.idle_ns[kOther], 99'990);
  EXPECT_EQ(s.gaps[kKernel].count, 2);
  EXPECT_DOUBLE_EQ(s.gaps[kKernel].mean, 5);
  EXPECT_EQ(s.gaps[kHost].count, 1);
  EXPECT_DOUBLE_EQ(s.ratio(IdleCategory::kHostWait), 100'000.0 / 200'000.0);
  // One event: never idle, ratios undefined.
  EXPECT_EQ(idle[1].stream, 8);
  EXPECT_EQ(idle[1].total_idle_ns(), 0);
  EXPECT_TRUE(std::isnan(idle[1].ratio(IdleCategory::kOther)));
}

TEST(IdleTime, ThresholdIsConfigurable) {
  RankTraceBuilder b = stream7();
  IdleOptions options;
  options.consecutive_kernel_delay_ns = 5;  // gaps must be strictly shorter
  const std::vector<StreamIdle> idle = idle_time_breakdown(b.trace(), b.all_rows(), options);
  EXPECT_EQ(idle[0].idle_ns[kKernel], 0);
  EXPECT_EQ(idle[0].idle_ns[kOther], 99'990 + 10);
  options.consecutive_kernel_delay_ns = 100'000;
  EXPECT_EQ(idle_time_breakdown(b.trace(), b.all_rows(), options)[0].idle_ns[kKernel], 10 + 99'990);
}

TEST(IdleTime, OverlapsAreCountedApartAndAreNoGaps) {
  RankTraceBuilder b;
  b.kernel("long", 0, 100);
  b.kernel("inside", 90, 5);      // starts before "long" ends: an overlap, not a gap of 0
  b.kernel("next", 120, 10);      // gap from the latest end (100), not from "inside" (95)
  b.kernel("touching", 130, 10);  // starts as "next" ends: a true gap of 0
  const std::vector<StreamIdle> idle = idle_time_breakdown(b.trace(), b.all_rows());
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0].events, 4);
  EXPECT_EQ(idle[0].overlaps, 1);
  EXPECT_EQ(idle[0].idle_ns[kKernel], 20);
  EXPECT_EQ(idle[0].gaps[kKernel].count, 2);
  EXPECT_DOUBLE_EQ(idle[0].gaps[kKernel].min, 0);
  EXPECT_DOUBLE_EQ(idle[0].gaps[kKernel].max, 20);
}

TEST(IdleTime, StreamsAreKeyedByDevice) {
  RankTraceBuilder b;
  b.kernel("a", 0, 10, 7, trace::kNone, Category::kKernel, /*device=*/0);
  b.kernel("b", 0, 10, 7, trace::kNone, Category::kKernel, /*device=*/1);
  b.kernel("c", 50, 10, 7, trace::kNone, Category::kKernel, /*device=*/1);
  const std::vector<StreamIdle> idle = idle_time_breakdown(b.trace(), b.all_rows());
  ASSERT_EQ(idle.size(), 2u);
  EXPECT_EQ(idle[0].device, 0);
  EXPECT_EQ(idle[0].total_idle_ns(), 0);
  EXPECT_EQ(idle[1].device, 1);
  EXPECT_EQ(idle[1].idle_ns[kKernel], 40);
}

}  // namespace
}  // namespace scaleprof::analysis

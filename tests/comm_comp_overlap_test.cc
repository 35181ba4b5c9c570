#include "analysis/comm_comp_overlap.h"

#include <gtest/gtest.h>

#include "rank_trace_builder.h"

namespace scaleprof::analysis {
namespace {

using testing::RankTraceBuilder;
using trace::Category;

TEST(CommCompOverlap, ShareOfCommunicationUnderComputation) {
  RankTraceBuilder b;
  b.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 10, 20);           // comm [0, 10)
  b.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 5, 10, 21);           // comm [5, 15): union [0, 15)
  b.kernel("gemm", 5, 20);                                                  // comp [5, 25)
  b.kernel("Stream Sync", 0, 100, 7, trace::kNone, Category::kCudaSync);    // sync is not computation
  b.kernel("Memcpy DtoD", 0, 100, 22, trace::kNone, Category::kGpuMemcpy);  // nor are copies
  const CommCompOverlap o = comm_comp_overlap(b.trace(), b.all_rows());
  EXPECT_EQ(o.communication_ns, 15);
  EXPECT_EQ(o.computation_ns, 20);
  EXPECT_EQ(o.overlap_ns, 10);
  EXPECT_EQ(o.communication_events, 2);
  EXPECT_EQ(o.computation_events, 1);
  ASSERT_TRUE(o.overlap_pct().has_value());
  EXPECT_DOUBLE_EQ(*o.overlap_pct(), 100.0 * 10 / 15);
}

TEST(CommCompOverlap, NoCommunicationHasNoPercentage) {
  RankTraceBuilder b;
  b.kernel("gemm", 0, 10);
  const CommCompOverlap o = comm_comp_overlap(b.trace(), b.all_rows());
  EXPECT_FALSE(o.has_communication());
  EXPECT_FALSE(o.overlap_pct().has_value());
  EXPECT_EQ(o.computation_ns, 10);
}

}  // namespace
}  // namespace scaleprof::analysis

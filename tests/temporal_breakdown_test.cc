#include "analysis/temporal_breakdown.h"

#include <gtest/gtest.h>

#include <cmath>

#include "rank_trace_builder.h"

namespace scaleprof::analysis {
namespace {

using testing::RankTraceBuilder;
using trace::Category;

TEST(TemporalBreakdown, SplitsTheSpanIntoIdleComputeAndTheRest) {
  RankTraceBuilder b;
  b.kernel("gemm", 0, 10);                      // compute [0, 10)
  b.kernel("gemm", 5, 10, 8);                   // compute [5, 15), other stream
  b.kernel("ncclDevKernel_AllReduce", 20, 10);  // communication [20, 30)
  b.kernel("Memcpy DtoD (Device -> Device)", 30, 5, 7, trace::kNone, Category::kGpuMemcpy);  // touches
  b.kernel("Stream Sync", 40, 2, 7, trace::kNone, Category::kCudaSync);  // sync counts as busy, not compute
  b.add("triton_poi_fused", Category::kCpuOp, 100, 50, /*stream=*/0);    // host op with a stream arg: ignored
  b.cpu_op("aten::mm", -100, 1000);                                      // host work never counts
  const TemporalBreakdown t = temporal_breakdown(b.trace(), b.all_rows());
  EXPECT_EQ(t.device_events, 5);
  EXPECT_EQ(t.kernel_time_ns, 42);         // [0, 42)
  EXPECT_EQ(t.idle_ns, 42 - 15 - 15 - 2);  // busy: [0,15) [20,35) [40,42)
  EXPECT_EQ(t.compute_ns, 15);
  EXPECT_EQ(t.non_compute_ns, 17);
  EXPECT_DOUBLE_EQ(t.idle_pct(), 100.0 * 10 / 42);
  EXPECT_DOUBLE_EQ(t.compute_pct(), 100.0 * 15 / 42);
  EXPECT_NEAR(t.idle_pct() + t.compute_pct() + t.non_compute_pct(), 100.0, 1e-9);
}

TEST(TemporalBreakdown, OnlyTheWindowRowsCount) {
  RankTraceBuilder b;
  b.kernel("gemm", 0, 10);
  const uint32_t late = b.kernel("gemm", 100, 10);
  std::vector<uint32_t> rows = b.all_rows();
  EXPECT_EQ(temporal_breakdown(b.trace(), rows).kernel_time_ns, 110);
  std::erase(rows, late);
  const TemporalBreakdown t = temporal_breakdown(b.trace(), rows);
  EXPECT_EQ(t.kernel_time_ns, 10);
  EXPECT_EQ(t.idle_ns, 0);
}

TEST(TemporalBreakdown, NoDeviceWorkHasNoPercentages) {
  RankTraceBuilder b;
  b.cpu_op("aten::add", 0, 10);
  const TemporalBreakdown t = temporal_breakdown(b.trace(), b.all_rows());
  EXPECT_EQ(t.device_events, 0);
  EXPECT_EQ(t.kernel_time_ns, 0);
  EXPECT_TRUE(std::isnan(t.idle_pct()));
  EXPECT_TRUE(std::isnan(t.compute_pct()));
}

}  // namespace
}  // namespace scaleprof::analysis

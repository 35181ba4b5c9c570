#include "analysis/kernel_breakdown.h"

#include <gtest/gtest.h>

#include <cmath>

#include "rank_trace_builder.h"

namespace scaleprof::analysis {
namespace {

using testing::RankTraceBuilder;
using trace::Category;

TEST(KernelBreakdown, PartitionLabelsOverlapsBetweenTypes) {
  RankTraceBuilder b;
  b.kernel("gemm", 0, 10);                                                      // C   [0, 10)
  b.kernel("ncclKernel_AllReduce", 5, 10, 20);                                  // N   [5, 15)
  b.kernel("Memcpy HtoD", 12, 8, 21, trace::kNone, Category::kGpuMemcpy);       // M   [12, 20)
  b.kernel("Stream Wait Event", 0, 100, 7, trace::kNone, Category::kCudaSync);  // OTHER: not in the partition
  const KernelBreakdown k = kernel_breakdown(b.trace(), b.all_rows());
  // Segments: [0,5) C, [5,10) C+N, [10,12) N, [12,15) N+M, [15,20) M; largest first, ties by set.
  ASSERT_EQ(k.partition.size(), 5u);
  EXPECT_EQ(type_set_label(k.partition[0].types), "COMPUTATION");  // 5, ties broken by set
  EXPECT_EQ(k.partition[0].ns, 5);
  EXPECT_EQ(type_set_label(k.partition[1].types), "COMPUTATION overlapping COMMUNICATION");
  EXPECT_EQ(k.partition[1].ns, 5);
  EXPECT_EQ(type_set_label(k.partition[2].types), "MEMORY");
  EXPECT_EQ(k.partition[2].ns, 5);
  EXPECT_EQ(type_set_label(k.partition[3].types), "COMMUNICATION overlapping MEMORY");
  EXPECT_EQ(k.partition[3].ns, 3);
  EXPECT_EQ(type_set_label(k.partition[4].types), "COMMUNICATION");
  EXPECT_EQ(k.partition[4].ns, 2);
  EXPECT_EQ(k.busy_ns(), 20);
  EXPECT_EQ(type_set_label(kComputationBit | kCommunicationBit | kMemoryBit),
            "COMPUTATION overlapping COMMUNICATION overlapping MEMORY");
}

TEST(KernelBreakdown, PerKernelStatisticsAreReal) {
  RankTraceBuilder b;
  b.kernel("gemm", 0, 10);
  b.kernel("gemm", 100, 30);
  b.kernel("gemm", 200, 20);
  b.kernel("relu", 300, 5);
  b.kernel("Stream Sync", 400, 7, 7, trace::kNone, Category::kCudaSync);
  const KernelBreakdown k = kernel_breakdown(b.trace(), b.all_rows());
  ASSERT_EQ(k.kernels.size(), 3u);
  const KernelStats& gemm = k.kernels[0];
  EXPECT_EQ(gemm.name, "gemm");
  EXPECT_EQ(gemm.type, KernelType::kComputation);
  EXPECT_EQ(gemm.duration.count, 3);
  EXPECT_EQ(gemm.duration.sum, 60);
  EXPECT_EQ(gemm.duration.min, 10);
  EXPECT_EQ(gemm.duration.max, 30);
  EXPECT_DOUBLE_EQ(gemm.duration.mean, 20);
  EXPECT_DOUBLE_EQ(gemm.duration.stddev(), 10);  // sample std of 10, 30, 20
  EXPECT_EQ(k.kernels[1].name, "relu");
  EXPECT_EQ(k.kernels[2].type, KernelType::kOther);  // sync records are listed under OTHER
}

TEST(KernelBreakdown, TopKernelsFoldTheRestWithTheirOwnStatistics) {
  RankTraceBuilder b;
  b.kernel("a", 0, 100);
  b.kernel("b", 200, 40);
  b.kernel("b", 300, 40);
  b.kernel("c", 400, 10);
  b.kernel("c", 500, 30);
  b.kernel("d", 600, 5);
  b.kernel("ncclKernel_x", 700, 1);
  const KernelBreakdown k = kernel_breakdown(b.trace(), b.all_rows());
  const std::vector<KernelStats> top = top_kernels(k.kernels, KernelType::kComputation, 2);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].name, "a");
  EXPECT_EQ(top[1].name, "b");
  const KernelStats& others = top[2];
  EXPECT_TRUE(others.others);
  EXPECT_EQ(others.name, "others");
  EXPECT_EQ(others.kernels, 2);  // c and d
  EXPECT_EQ(others.duration.count, 3);
  EXPECT_EQ(others.duration.sum, 45);
  EXPECT_EQ(others.duration.min, 5);
  EXPECT_EQ(others.duration.max, 30);
  EXPECT_DOUBLE_EQ(others.duration.mean, 15);
  // The sum per type is kept whatever k is.
  EXPECT_EQ(top_kernels(k.kernels, KernelType::kComputation, 0).size(), 4u);
  EXPECT_EQ(top_kernels(k.kernels, KernelType::kCommunication, 2).size(), 1u);
  EXPECT_TRUE(top_kernels(k.kernels, KernelType::kMemory, 2).empty());
}

// HTA's duration_ratio: with more than k names, a name whose running sum passes the ratio-quantile
// of the running sums is folded too. Sums 100, 80, 40, 5: running 100, 180, 220, 225; the median of
// those is 200, so a and b stay (100, 180) and c (220) joins d in "others".
TEST(KernelBreakdown, DurationRatioFoldsPastTheQuantileOfRunningSums) {
  RankTraceBuilder b;
  b.kernel("a", 0, 100);
  b.kernel("b", 200, 80);
  b.kernel("c", 300, 30);
  b.kernel("c", 400, 10);
  b.kernel("d", 500, 5);
  const KernelBreakdown k = kernel_breakdown(b.trace(), b.all_rows());
  const std::vector<KernelStats> half = top_kernels(k.kernels, KernelType::kComputation, 3, 0.5);
  ASSERT_EQ(half.size(), 3u);
  EXPECT_EQ(half[0].name, "a");
  EXPECT_EQ(half[1].name, "b");
  EXPECT_TRUE(half[2].others);
  EXPECT_EQ(half[2].kernels, 2);
  EXPECT_EQ(half[2].duration.count, 3);
  EXPECT_EQ(half[2].duration.sum, 45);
  EXPECT_EQ(half[2].duration.max, 30);  // the folded events' own statistics, not the sums'
  // 1.0 (the CLI's default) folds by k alone; 0 keeps the largest only (its running sum is the minimum).
  EXPECT_EQ(top_kernels(k.kernels, KernelType::kComputation, 3, 1.0).size(), 4u);
  const std::vector<KernelStats> least = top_kernels(k.kernels, KernelType::kComputation, 3, 0.0);
  ASSERT_EQ(least.size(), 2u);
  EXPECT_EQ(least[1].duration.sum, 125);
  // As in HTA, no rule applies when the type has no more than k names.
  EXPECT_EQ(top_kernels(k.kernels, KernelType::kComputation, 4, 0.1).size(), 4u);
}

TEST(KernelBreakdown, PartitionsAddAcrossRanks) {
  const std::vector<std::vector<TypeShare>> ranks = {{{kComputationBit, 10}, {kCommunicationBit, 4}},
                                                     {{kCommunicationBit, 20}, {kMemoryBit, 1}}};
  const std::vector<TypeShare> merged = merge_type_partitions(ranks);
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].types, kCommunicationBit);
  EXPECT_EQ(merged[0].ns, 24);
  EXPECT_EQ(merged[1].ns, 10);
  EXPECT_EQ(merged[2].ns, 1);
}

}  // namespace
}  // namespace scaleprof::analysis

#include "analysis/computation_fraction.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "host_trace_builder.h"

namespace scaleprof::analysis {
namespace {

using testing::HostTraceBuilder;
using trace::Category;

TEST(ComputationFraction, NameRuleIsItwinaisRegex) {
  EXPECT_TRUE(is_computation_op_name("aten::mm"));
  EXPECT_TRUE(is_computation_op_name("autograd::engine::evaluate_function: AddmmBackward0"));
  EXPECT_TRUE(is_computation_op_name("c10::foo"));
  EXPECT_TRUE(is_computation_op_name("void at::native::vectorized_elementwise_kernel<4, ...>"));
  EXPECT_FALSE(is_computation_op_name("at::native::x"));  // `\sat::` needs a space before at::
  EXPECT_FALSE(is_computation_op_name("flat::x"));
  EXPECT_FALSE(is_computation_op_name("c10d::allreduce_"));
  EXPECT_FALSE(is_computation_op_name("nccl:all_reduce"));
  EXPECT_FALSE(is_computation_op_name("ampere_sgemm_32x32"));
  EXPECT_FALSE(is_computation_op_name("ProfilerStep*"));
}

TEST(ComputationFraction, CommunicationRuleIsItwinaisDeprecatedRegex) {
  for (const char* name :
       {"nccl:all_reduce", "nccl:broadcast", "nccl:reduce", "nccl:reduce_scatter", "nccl:all_gather", "nccl:gather",
        "nccl:all_reduce_coalesced", "cudaStreamWaitEvent", "cudaStreamSynchronize"}) {
    EXPECT_TRUE(is_communication_op_name(name)) << name;
  }
  for (const char* name : {"ncclKernel_AllReduce_RING_LL_Sum_float", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                           "gloo:all_reduce", "c10d::allreduce_", "record_param_comms", "nccl:send", "nccl:recv",
                           "nccl:all_to_all", "cudaStreamQuery", "aten::mm"}) {
    EXPECT_FALSE(is_communication_op_name(name)) << name;
  }
}

// Both rules are applied to every row: the communication sum is kept beside the others.
TEST(ComputationFraction, CommunicationSumFollowsTheDeprecatedRule) {
  HostTraceBuilder b;
  b.op("aten::mm", 100, 100, 1, 2);
  b.op("nccl:all_reduce", 300, 100, 1, 3);
  b.kernel("void at::native::gemm", 500, 30, 2);
  b.kernel("ncclKernel_AllReduce", 600, 40, 3);  // 40 on nccl:all_reduce (communication), 40 on its own row
  ComputationFraction f = computation_fraction(compute_operator_table(b.take()));
  EXPECT_EQ(f.basis, tables::FractionBasis::kDeviceSelf);
  EXPECT_EQ(f.computation_ns, 60);
  EXPECT_EQ(f.communication_ns, 40);
  EXPECT_EQ(f.total_ns, 140);
}

// Device basis: rows are torch's, so an op's kernel time counts on the op row and the kernel row.
TEST(ComputationFraction, DeviceSelfTimeExcludesProfilerStepFromTheDenominator) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 1000, 1, 1);
  b.op("aten::mm", 100, 100, 1, 2);
  b.op("nccl_op", 300, 100, 1, 3);
  b.kernel("void at::native::gemm", 500, 30, 2);  // 30 on aten::mm and 30 on its own row
  b.kernel("ncclKernel_AllReduce", 600, 40, 3);   // 40 on nccl_op, 40 on its own row
  b.kernel("ProfilerStep#1", 500, 200, 1, trace::kNone, Category::kGpuUserAnnotation);
  ComputationFraction f = computation_fraction(compute_operator_table(b.take()));
  EXPECT_EQ(f.basis, tables::FractionBasis::kDeviceSelf);
  EXPECT_EQ(f.total_ns, 30 + 30 + 40 + 40 + 200);
  EXPECT_EQ(f.profiler_step_ns, 200);
  EXPECT_EQ(f.computation_ns, 60);
  EXPECT_DOUBLE_EQ(f.fraction, 60.0 / 140.0);
}

TEST(ComputationFraction, CpuOnlyTracesFallBackToSelfCpuTime) {
  HostTraceBuilder b;
  b.annotation("ProfilerStep#1", 0, 1000);
  b.op("aten::addmm", 100, 300);
  b.op("c10d::allreduce_", 500, 100);
  ComputationFraction f = computation_fraction(compute_operator_table(b.take()));
  EXPECT_EQ(f.basis, tables::FractionBasis::kCpuSelf);
  EXPECT_EQ(fraction_basis_name(f.basis), "cpu_self_time");
  EXPECT_EQ(f.total_ns, 1000);
  EXPECT_EQ(f.profiler_step_ns, 600);
  EXPECT_EQ(f.computation_ns, 300);
  EXPECT_DOUBLE_EQ(f.fraction, 0.75);
}

TEST(ComputationFraction, PoolsRanksLikeItwinai) {
  HostTraceBuilder a, b;
  a.op("aten::mm", 0, 100);
  a.op("other", 200, 100);
  b.op("aten::mm", 0, 300);
  OperatorTable ta = compute_operator_table(a.take());
  OperatorTable tb = compute_operator_table(b.take());
  ComputationFraction f = computation_fraction({&ta, &tb});
  EXPECT_EQ(f.computation_ns, 400);
  EXPECT_EQ(f.total_ns, 500);
  EXPECT_DOUBLE_EQ(f.fraction, 0.8);  // not the mean of 0.5 and 1.0
}

// Issue 7 item 7: each rank's self times are within the reader's bounds, pooled they pass int64 ns:
// the result says it is not exact (NaN fraction) instead of carrying a wrapped, negative sum.
TEST(ComputationFraction, PooledSumsPastInt64AreNotExact) {
  OperatorTable t;
  OperatorRow row;
  row.name = "aten::mm";
  row.self_cpu_ns = INT64_C(5'000'000'000'000'000'000);
  t.rows.push_back(row);
  const ComputationFraction one = computation_fraction(t);
  EXPECT_TRUE(one.exact);
  EXPECT_DOUBLE_EQ(one.fraction, 1.0);
  const ComputationFraction both = computation_fraction({&t, &t});
  EXPECT_FALSE(both.exact);
  EXPECT_TRUE(std::isnan(both.fraction));
}

TEST(ComputationFraction, NothingMeasuredIsNaN) {
  OperatorTable empty;
  ComputationFraction f = computation_fraction(empty);
  EXPECT_TRUE(std::isnan(f.fraction));
}

// The four sums are one struct (tables::SelfTimeSums) in a rank's sums, the pooled fraction and a run's
// stored sums: adding is all or nothing, and the ratio is the one every caller shows.
TEST(ComputationFraction, SelfTimeSumsAddAllOrNothing) {
  tables::SelfTimeSums a;
  a.computation_ns = 30;
  a.total_ns = 100;
  a.profiler_step_ns = 40;
  a.communication_ns = 5;
  EXPECT_DOUBLE_EQ(a.computation_ratio(), 0.5);
  tables::SelfTimeSums past;
  past.computation_ns = 1;
  past.communication_ns = INT64_MAX;  // the last field overflows: nothing is added
  tables::SelfTimeSums b = a;
  EXPECT_FALSE(b.add_checked(past));
  EXPECT_EQ(b.computation_ns, 30);
  EXPECT_EQ(b.communication_ns, 5);
  EXPECT_TRUE(b.add_checked(a));
  EXPECT_EQ(b.total_ns, 200);
  EXPECT_EQ(b.communication_ns, 10);
  b.profiler_step_ns = b.total_ns;  // nothing left but ProfilerStep*: no fraction
  EXPECT_TRUE(std::isnan(b.computation_ratio()));
}

}  // namespace
}  // namespace scaleprof::analysis

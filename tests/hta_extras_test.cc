// HTA's frequent kernel sequences (analysis/kernel_sequences.h) and potential stragglers
// (analysis/potential_stragglers.h) on small hand-written traces whose answers are known by
// construction.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/kernel_sequences.h"
#include "analysis/potential_stragglers.h"
#include "host_trace_builder.h"

namespace scaleprof::analysis {
namespace {

using testing::HostTraceBuilder;

// Four ProfilerSteps of 1000 ns on thread 1 (the last is left out by the analysis window). In steps 1
// and 2, aten::linear (300 ns) launches gemm (40 ns), bias (10 ns) and relu (5 ns), the relu through
// a nested aten::linear_inner; in step 3 it launches only gemm and bias. Thread 2 runs the backward:
// autograd::engine::evaluate_function launching bwd_gemm (30 ns) after the forward kernels.
trace::RankTrace training() {
  HostTraceBuilder b;
  int64_t corr = 100;
  for (int k = 1; k <= 4; ++k) {
    const int64_t t = (k - 1) * 1000;
    b.annotation("ProfilerStep#" + std::to_string(k), t, 1000);
    b.op("aten::linear", t + 10, 300);
    b.runtime("cudaLaunchKernel", t + 20, 5, corr);
    b.kernel("gemm", t + 400, 40, trace::kNone, corr++);
    b.runtime("cudaLaunchKernel", t + 30, 5, corr);
    b.kernel("bias", t + 450, 10, trace::kNone, corr++);
    if (k != 3) {
      b.op("aten::linear_inner", t + 40, 50);
      b.runtime("cudaLaunchKernel", t + 50, 5, corr);
      b.kernel("relu", t + 470, 5, trace::kNone, corr++);
    }
    b.op("autograd::engine::evaluate_function: AddmmBackward0", t + 500, 100, 2);
    b.runtime("cudaLaunchKernel", t + 510, 5, corr, trace::kNone, 2);
    b.kernel("bwd_gemm", t + 700, 30, trace::kNone, corr++);
  }
  return b.take();
}

TEST(KernelSequences, ShallowestOperatorsWithEnoughKernelsAreCounted) {
  const trace::RankTrace t = training();
  KernelSequenceOptions options;
  options.operator_name = "aten::linear";
  const RankKernelSequences r = frequent_kernel_sequences(t, options);
  // aten::linear in steps 1-3 and aten::linear_inner in steps 1 and 2 match; step 4 is outside the window.
  EXPECT_EQ(r.candidates, 5);
  // The inner calls are deeper; step 3's linear launched 2 kernels, fewer than 3.
  EXPECT_EQ(r.roots, 2);
  ASSERT_EQ(r.sequences.size(), 1u);
  const KernelSequence& s = r.sequences[0];
  EXPECT_EQ(s.pattern(), "aten::linear|gemm|bias|relu");
  EXPECT_EQ(s.count, 2);
  EXPECT_EQ(s.gpu_ns, 2 * (40 + 10 + 5));
  EXPECT_EQ(s.cpu_ns, 2 * 300);

  options.min_pattern_len = 2;  // step 3's linear now counts too
  const RankKernelSequences two = frequent_kernel_sequences(t, options);
  ASSERT_EQ(two.sequences.size(), 2u);
  EXPECT_EQ(two.sequences[0].pattern(), "aten::linear|gemm|bias|relu");  // count 2 first
  EXPECT_EQ(two.sequences[1].pattern(), "aten::linear|gemm|bias");
  EXPECT_EQ(two.sequences[1].count, 1);
}

TEST(KernelSequences, BackwardThreadIsUnderItsStep) {
  KernelSequenceOptions options;
  options.operator_name = "ProfilerStep";
  const RankKernelSequences r = frequent_kernel_sequences(training(), options);
  // Every step name is its own pattern; the backward thread's kernel is in its step (HTA's link).
  ASSERT_EQ(r.sequences.size(), 3u);
  EXPECT_EQ(r.sequences[0].pattern(), "ProfilerStep#1|gemm|bias|relu|bwd_gemm");
  EXPECT_EQ(r.sequences[1].pattern(), "ProfilerStep#2|gemm|bias|relu|bwd_gemm");
  EXPECT_EQ(r.sequences[2].pattern(), "ProfilerStep#3|gemm|bias|bwd_gemm");
  EXPECT_EQ(r.sequences[2].gpu_ns, 40 + 10 + 30);
  EXPECT_EQ(r.sequences[2].cpu_ns, 1000);

  options.operator_name = "no such operator";
  EXPECT_TRUE(frequent_kernel_sequences(training(), options).sequences.empty());
}

// A rank with four ProfilerSteps of 1000 ns (the last left out), each with one ncclKernel_AllReduce on
// stream 20 starting `late[k]` ns into step k (length 200 - late[k], so all end at +300), and a short
// ncclKernel_AllGather (5 ns, under 1 % of the step) on stream 21.
trace::RankTrace comm_rank(int64_t rank, std::vector<int64_t> late) {
  HostTraceBuilder b;
  int64_t corr = 1;
  for (int k = 0; k < 4; ++k) {
    const int64_t t = k * 1000;
    b.annotation("ProfilerStep#" + std::to_string(k), t, 1000);
    b.runtime("cudaLaunchKernel", t + 10, 5, corr);
    b.kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
             t + 100 + late[static_cast<size_t>(k % 3)], 200 - late[static_cast<size_t>(k % 3)], trace::kNone, corr++);
    b.runtime("cudaLaunchKernel", t + 20, 5, corr);
    b.kernel("ncclKernel_AllGather_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", t + 400, 5, trace::kNone,
             corr++);
  }
  trace::RankTrace out = b.take();
  out.rank = rank;
  return out;
}

TEST(PotentialStragglers, LatestStartersOfTheDominantKernelAreNamed) {
  // Rank 2 starts last in steps 0 and 1, rank 1 in step 2.
  std::vector<RankStragglerEvents> ranks = {
      summarize_for_potential_stragglers(comm_rank(0, {0, 0, 0})),
      summarize_for_potential_stragglers(comm_rank(1, {10, 20, 90})),
      summarize_for_potential_stragglers(comm_rank(2, {50, 60, 30})),
  };
  ASSERT_EQ(ranks[0].steps.size(), 3u);
  PotentialStragglerOptions options;
  options.num_candidates = 1;
  auto found = find_potential_stragglers(ranks, options);
  ASSERT_TRUE(found.ok()) << found.error().message;
  const PotentialStragglers& p = found.value();
  EXPECT_EQ(p.steps, (std::vector<int64_t>{0, 1, 2}));
  // Events from 0 (step 0's start) to 3000 (step 2's annotation's end) over 3 steps.
  EXPECT_EQ(p.t_min_ns, 0);
  EXPECT_DOUBLE_EQ(p.mean_step_ns, 1000.0);
  EXPECT_DOUBLE_EQ(p.min_duration_ns, 10.0);
  EXPECT_EQ(p.stream, 7);  // the builder's stream; the AllGather (5 ns < 1 %) is no candidate
  EXPECT_EQ(p.kernel.substr(0, 20), "ncclKernel_AllReduce");
  ASSERT_EQ(p.metric.size(), 9u);
  // Step 1, rank 2: (1000 + 100 + 60 - 0) / 1000.
  EXPECT_EQ(p.metric[5].step, 1);
  EXPECT_EQ(p.metric[5].rank, 2);
  EXPECT_DOUBLE_EQ(p.metric[5].normalized_start, 1.16);
  EXPECT_TRUE(p.metric[5].flagged);
  ASSERT_EQ(p.ranks.size(), 3u);
  EXPECT_EQ(p.ranks[0].rank, 2);
  EXPECT_EQ(p.ranks[0].flagged_steps, 2);
  EXPECT_EQ(p.ranks[1].rank, 1);
  EXPECT_EQ(p.ranks[1].flagged_steps, 1);
  EXPECT_EQ(p.stragglers, (std::vector<int64_t>{2}));

  options.num_candidates = 2;  // the two latest of each step: rank 2 three times, rank 1 three times
  const PotentialStragglers two = find_potential_stragglers(ranks, options).value();
  EXPECT_EQ(two.stragglers, (std::vector<int64_t>{1, 2}));  // equal counts: by rank

  options.profiler_steps = {2};  // only step 2: rank 1 is last
  options.num_candidates = 1;
  EXPECT_EQ(find_potential_stragglers(ranks, options).value().stragglers, (std::vector<int64_t>{1}));
  options.profiler_steps = {3};  // the last step is not analysed
  const auto missing = find_potential_stragglers(ranks, options);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kUsage);
}

TEST(PotentialStragglers, OneRankHasNoSpreadAndNoStraggler) {
  const std::vector<RankStragglerEvents> one = {summarize_for_potential_stragglers(comm_rank(0, {0, 0, 0}))};
  const PotentialStragglers p = find_potential_stragglers(one, {}).value();
  EXPECT_TRUE(p.stragglers.empty());
  EXPECT_FALSE(p.note.empty());
}

}  // namespace
}  // namespace scaleprof::analysis

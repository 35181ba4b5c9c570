// `scaleprof trace diff`: the per-rank summary (analysis/diff_summary.h) and the comparison
// (analysis/trace_diff.h) on small hand-written traces whose figures are known.
#include "analysis/trace_diff.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>

#include "host_trace_builder.h"

namespace scaleprof::analysis {
namespace {

using testing::HostTraceBuilder;

struct TrainingShape {
  int steps = 5;
  int64_t scale = 1;          // every time multiplied by this
  int64_t relu_extra_ns = 0;  // added to the relu kernel of every step
  std::string gemm = "sm80_gemm_128x64";
  bool profiler_steps = true;
};

// A training loop of `steps` ProfilerSteps on one thread; step k lasts 1000 + 10k ns and holds
// aten::linear > aten::addmm > cudaLaunchKernel (a GEMM, 300 + 5(k%2) ns) and aten::relu >
// cudaLaunchKernel (relu_kernel, 50 ns plus relu_extra_ns), and a memcpy launched outside any op.
trace::RankTrace training(const TrainingShape& shape, int64_t rank = 0) {
  HostTraceBuilder b;
  const int64_t s = shape.scale;
  int64_t t = 0;
  int64_t id = 1;
  for (int k = 0; k < shape.steps; ++k) {
    const int64_t len = 1000 + 10 * k;
    if (shape.profiler_steps) b.annotation("ProfilerStep#" + std::to_string(k + 10), t * s, len * s, 1, id++);
    b.op("aten::linear", (t + 100) * s, 300 * s, 1, id++);
    const int64_t addmm = id++;
    b.op("aten::addmm", (t + 150) * s, 200 * s, 1, addmm);
    b.runtime("cudaLaunchKernel", (t + 200) * s, 10 * s, 1000 + 10 * k, addmm);
    b.kernel(shape.gemm, (t + 220) * s, (300 + 5 * (k % 2)) * s, addmm, 1000 + 10 * k);
    const int64_t relu = id++;
    b.op("aten::relu", (t + 500) * s, 100 * s, 1, relu);
    b.runtime("cudaLaunchKernel", (t + 520) * s, 10 * s, 1001 + 10 * k, relu);
    b.kernel("relu_kernel", (t + 600) * s, (50 + shape.relu_extra_ns) * s, relu, 1001 + 10 * k);
    b.runtime("cudaMemcpyAsync", (t + 700) * s, 20 * s, 1002 + 10 * k);
    b.kernel("Memcpy HtoD (Pinned -> Device)", (t + 720) * s, 40 * s, trace::kNone, 1002 + 10 * k,
             trace::Category::kGpuMemcpy);
    t += len;
  }
  trace::RankTrace out = b.take();
  out.rank = rank;
  out.path = "rank" + std::to_string(rank) + ".json";
  return out;
}

DiffSide side_of(std::initializer_list<trace::RankTrace> traces, double samples = 0,
                 const DiffSummaryOptions& options = {}) {
  DiffSide side;
  for (const trace::RankTrace& t : traces) side.ranks.push_back(summarize_for_diff(t, options));
  side.samples_per_step = samples;
  return side;
}

const DiffRow* find_row(const std::vector<DiffRow>& rows, const std::string& name) {
  for (const DiffRow& r : rows) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

TEST(DiffSummary, WarmupAndLastStepAreLeftOut) {
  const DiffRankSummary s = summarize_for_diff(training({}));
  // Steps 10..14: the last (14) is the analysis window's, the first (10) is warm-up.
  EXPECT_EQ(s.steps, (std::vector<int64_t>{11, 12, 13}));
  EXPECT_EQ(s.step_ns, (std::vector<int64_t>{1010, 1020, 1030}));
  EXPECT_EQ(s.warmup_skipped, 1);
  EXPECT_TRUE(s.has_steps);
  // A rank with no more steps than the warm-up keeps them all.
  TrainingShape two;
  two.steps = 2;  // one analysed step
  const DiffRankSummary short_rank = summarize_for_diff(training(two));
  EXPECT_EQ(short_rank.steps, (std::vector<int64_t>{10}));
  EXPECT_EQ(short_rank.warmup_skipped, 0);
}

TEST(DiffSummary, SelfTimesAddUpToTheStep) {
  const DiffRankSummary s = summarize_for_diff(training({}));
  for (size_t k = 0; k < s.steps.size(); ++k) {
    int64_t sum = 0;
    for (const DiffOperator& op : s.operators) sum += op.per_step.ns[k];
    EXPECT_EQ(sum, s.step_ns[k]) << "step " << s.steps[k];
  }
  // aten::linear's self time leaves out aten::addmm: 300 - 200.
  for (const DiffOperator& op : s.operators) {
    if (op.name == "aten::linear") {
      EXPECT_EQ(op.per_step.ns, (std::vector<int64_t>{100, 100, 100}));
    }
    if (op.name == "aten::addmm") {
      EXPECT_EQ(op.per_step.ns, (std::vector<int64_t>{190, 190, 190}));
    }
    if (op.name == "ProfilerStep*") {
      EXPECT_EQ(op.per_step.ns[0], 1010 - 300 - 100 - 20);
    }
  }
}

TEST(DiffSummary, KernelsAreKeyedByWhatLaunchedThem) {
  const DiffRankSummary s = summarize_for_diff(training({}));
  ASSERT_EQ(s.kernels.size(), 3U);
  EXPECT_EQ(s.kernels[0].path, "aten::linear > aten::addmm");
  EXPECT_EQ(s.kernels[0].type, KernelType::kComputation);
  EXPECT_EQ(s.kernels[0].per_step.ns, (std::vector<int64_t>{305, 300, 305}));
  EXPECT_EQ(s.kernels[1].path, "aten::relu");
  EXPECT_EQ(s.kernels[2].path, "");  // the memcpy's runtime call is inside no operator
  EXPECT_EQ(s.kernels[2].type, KernelType::kMemory);
  EXPECT_EQ(s.kernels[2].per_step.count, (std::vector<int64_t>{1, 1, 1}));
}

TEST(TraceDiff, IdenticalCopiesHaveNoSignificantChange) {
  const TraceDiff d =
      diff_traces(side_of({training({}, 0), training({}, 1)}), side_of({training({}, 0), training({}, 1)}));
  EXPECT_TRUE(d.problems.empty());
  ASSERT_EQ(d.steps.size(), 2U);  // step, gpu_busy
  EXPECT_DOUBLE_EQ(d.steps[0].a.median, 1020);
  for (const auto* rows : {&d.steps, &d.operators, &d.kernels}) {
    for (const DiffRow& r : *rows) {
      EXPECT_FALSE(r.significant) << r.name;
      EXPECT_EQ(r.delta, 0) << r.name;
      EXPECT_EQ(r.match, DiffMatch::kSame) << r.name;
    }
  }
}

TEST(TraceDiff, SlowedKernelIsNamedFirst) {
  TrainingShape slowed;
  slowed.relu_extra_ns = 40;
  const TraceDiff d = diff_traces(side_of({training({})}), side_of({training(slowed)}));
  ASSERT_FALSE(d.kernels.empty());
  EXPECT_EQ(d.kernels[0].name, "relu_kernel");
  EXPECT_TRUE(d.kernels[0].significant);
  EXPECT_DOUBLE_EQ(d.kernels[0].delta, 40);
  EXPECT_DOUBLE_EQ(d.kernels[0].change_pct, 80);
  // The GEMM's durations vary by 5 ns between steps: unchanged, and not significant.
  const DiffRow* gemm = find_row(d.kernels, "sm80_gemm_128x64");
  ASSERT_NE(gemm, nullptr);
  EXPECT_FALSE(gemm->significant);
  for (const DiffRow& r : d.operators) EXPECT_FALSE(r.significant) << r.name;
}

TEST(TraceDiff, ChangeInsideTheSpreadIsNotSignificant) {
  // The GEMM alternates 300/305 ns (spread over steps 11..13: p75 - p25 = 2.5 ns); 2 ns more on
  // every step is inside it.
  TraceDiff d = diff_traces(side_of({training({})}), side_of({training({})}));
  DiffSide b = side_of({training({})});
  for (int64_t& ns : b.ranks[0].kernels[0].per_step.ns) ns += 2;
  d = diff_traces(side_of({training({})}), b);
  const DiffRow* gemm = find_row(d.kernels, "sm80_gemm_128x64");
  ASSERT_NE(gemm, nullptr);
  EXPECT_DOUBLE_EQ(gemm->a.spread, 2.5);
  EXPECT_DOUBLE_EQ(gemm->delta, 2);
  EXPECT_FALSE(gemm->significant);
  for (int64_t& ns : b.ranks[0].kernels[0].per_step.ns) ns += 2;  // 4 ns: beyond it
  d = diff_traces(side_of({training({})}), b);
  EXPECT_TRUE(find_row(d.kernels, "sm80_gemm_128x64")->significant);
}

TEST(TraceDiff, SameGemmUnderAnotherNameIsMatchedByItsLaunch) {
  TrainingShape other;
  other.gemm = "ampere_sgemm_64x64_nn";
  const TraceDiff d = diff_traces(side_of({training({})}), side_of({training(other)}));
  const DiffRow* gemm = find_row(d.kernels, "sm80_gemm_128x64");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->match, DiffMatch::kLaunch);
  EXPECT_EQ(gemm->name_b, "ampere_sgemm_64x64_nn");
  EXPECT_EQ(gemm->path, "aten::linear > aten::addmm");
  EXPECT_EQ(gemm->delta, 0);
  for (const DiffRow& r : d.kernels) {
    EXPECT_NE(r.match, DiffMatch::kOnlyA) << r.name;
    EXPECT_NE(r.match, DiffMatch::kOnlyB) << r.name;
  }
}

TEST(TraceDiff, TimesArePerSampleWhenTheSidesProcessDifferentSamples) {
  // B runs twice the samples per step in twice the time: per sample, nothing changed.
  TrainingShape doubled;
  doubled.scale = 2;
  const TraceDiff d = diff_traces(side_of({training({})}, 32), side_of({training(doubled)}, 64));
  EXPECT_TRUE(d.per_sample);
  EXPECT_DOUBLE_EQ(d.steps[0].a.median, 1020.0 / 32);
  EXPECT_DOUBLE_EQ(d.steps[0].b.median, 2040.0 / 64);
  for (const auto* rows : {&d.steps, &d.operators, &d.kernels}) {
    for (const DiffRow& r : *rows) EXPECT_FALSE(r.significant) << r.name;
  }
  // The same sides per step: everything of B twice as long.
  const TraceDiff per_step = diff_traces(side_of({training({})}), side_of({training(doubled)}));
  EXPECT_FALSE(per_step.per_sample);
  EXPECT_DOUBLE_EQ(per_step.steps[0].delta, 1020);
  EXPECT_TRUE(per_step.steps[0].significant);
}

TEST(TraceDiff, SideWithoutProfilerStepsIsNamedAndStillCompared) {
  TrainingShape plain;
  plain.profiler_steps = false;
  const TraceDiff d = diff_traces(side_of({training({})}), side_of({training(plain)}));
  ASSERT_EQ(d.problems.size(), 1U);
  EXPECT_EQ(d.problems[0].severity, Severity::kError);
  EXPECT_NE(d.problems[0].message.find("B: rank 0 (rank0.json) has no ProfilerStep"), std::string::npos)
      << d.problems[0].message;
  EXPECT_FALSE(d.kernels.empty());
  EXPECT_FALSE(d.operators.empty());
}

TEST(TraceDiff, DifferentRanksAreNamed) {
  const TraceDiff d = diff_traces(side_of({training({}, 0), training({}, 1)}), side_of({training({}, 0)}));
  ASSERT_EQ(d.problems.size(), 1U);
  EXPECT_EQ(d.problems[0].severity, Severity::kWarning);
  EXPECT_NE(d.problems[0].message.find("B lacks rank(s) 1"), std::string::npos) << d.problems[0].message;
  for (const DiffRow& r : d.kernels) EXPECT_FALSE(r.significant) << r.name;
}

}  // namespace
}  // namespace scaleprof::analysis

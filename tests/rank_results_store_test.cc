// The per-rank results of a streamed report go to a temporary file past a byte budget and come back
// one rank at a time (engine/rank_results_store.h): every field must come back as it went in, in rank
// order, and a damaged record must be refused, never read as other numbers.
#include "engine/rank_results_store.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "report/trace_report.h"
#include "test_paths.h"
#include "trace/trace_set.h"

namespace scaleprof {
namespace {

namespace fs = std::filesystem;
using engine::RankResults;

const fs::path kStoreTestTraces = fs::path(SCALEPROF_SHARED_DIR) / "traces" / "hta";

// Every section filled, no field at its default, strings with a NUL and longer than the small-string
// buffer.
RankResults sample(int64_t rank) {
  RankResults r;
  r.rank = rank;
  r.inputs.path = "/runs/a/rank-" + std::to_string(rank) + ".json";
  r.inputs.stats.events_total = 1000 + rank;
  r.inputs.stats.repairs = 3;
  r.inputs.stats.json_bytes = 123456789;
  r.inputs.stats.fractional_timestamps = true;
  r.inputs.devices = std::string("NVIDIA H100\0 80GB, NVIDIA H100 80GB", 35);
  r.breakdown.emplace();
  r.breakdown->idle_ns = 17 + rank;
  r.breakdown->kernel_time_ns = 99;
  r.kernels.emplace();
  r.kernels->partition = {{1, 500}, {3, 25}};
  analysis::KernelStats k;
  k.name = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>";
  k.type = analysis::KernelType::kCommunication;
  k.others = true;
  k.kernels = 7;
  k.duration.add(10);
  k.duration.add(31);
  r.kernels->top[1] = {k, k};
  r.idle.emplace(2);
  (*r.idle)[1].stream = 7;
  (*r.idle)[1].idle_ns[2] = 42;
  (*r.idle)[1].gaps[2].p75 = 2.5;
  r.overlap.emplace();
  r.overlap->overlap_ns = 5;
  r.launch.emplace();
  r.launch->summary.launch_delay.p99 = 8.25;
  r.launch->slowest = {{11, 12, 13, 14, "cudaLaunchKernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)"}};
  r.ops.emplace();
  analysis::OperatorRow op;
  op.name = "aten::convolution_backward_overrideable";
  op.side = analysis::OpSide::kDevice;
  op.user_annotation = true;
  op.async = true;
  op.calls = 4;
  op.self_device_memory_bytes = -512;
  op.self_device_pct = 12.5;
  r.ops->top = {op};
  r.ops->has_memory = true;
  r.ops->unattributed_device_events = 6;
  r.ops->fraction.computation_ns = 77;
  r.ops->fraction.basis = tables::FractionBasis::kCpuSelf;
  r.ops->fraction_parts.cpu.communication_ns = 88;
  r.ops->fraction_parts.has_device_self = true;
  r.steps.emplace();
  r.steps->steps.resize(3);
  r.steps->steps[2].step = 9;
  r.steps->steps[2].last_kernel_end_ns = 1'000'000 + rank;
  r.steps->has_kernels = true;
  r.steps->kernels_outside_steps = 2;
  r.phases.emplace();
  r.phases->path = "/runs/a/phases-rank-" + std::to_string(rank) + ".json";
  r.phases->has_kernels = true;
  r.phases->steps.resize(2);
  r.phases->steps[1].step = 5;
  r.phases->steps[1].host_ns[3] = 123;
  r.phases->steps[1].device_ns[4] = 456;
  r.phases->steps[1].regions = {{"", 0, 0, 2, 20}, {"Optimizer.step#AdamW.step (a name longer than SSO)", 1, 7, 8, 9}};
  r.decomposition.emplace();
  r.decomposition->path = "d.json";
  r.decomposition->device = true;
  r.decomposition->steps.resize(1);
  r.decomposition->steps[0].step = 11;
  r.decomposition->steps[0].part_ns[2] = 33 + rank;
  r.flops.emplace();
  r.flops->device = "NVIDIA H100 80GB HBM3";
  r.flops->flops.operators = {{"aten::addmm (a name longer than the small-string buffer)", analysis::FlopClass::kMatmul,
                               analysis::FlopDtype::kBf16, 3, 4096, 50, 20, 3}};
  r.flops->flops.kernels = {{"sm90_gemm", analysis::FlopClass::kMatmul, analysis::FlopDtype::kBf16, 2, 2048, 12}};
  r.flops->flops.steps.resize(2);
  r.flops->flops.steps[1].step = 7;
  r.flops->flops.steps[1].compute_flops[3] = 99;
  r.flops->flops.has_device = true;
  r.flops->flops.unmodelled_calls = 5;
  r.flops->flops.compute_flops[3] = 4096;
  r.flops->flops.span_ns = 1234 + rank;
  r.pipeline.emplace();  // issue 33: pipeline bubbles
  r.pipeline->rank = rank;
  r.pipeline->path = "/runs/a/pipeline-rank-" + std::to_string(rank) + ".json";
  r.pipeline->steps = {{3, 10, 1000, 250 + rank, 4, 4, -1, 700 + rank}};
  r.pipeline->peers = {{3, 1, 4, 0}, {3, 5, 0, 4}};
  r.pipeline->calls_without_peer = 2;
  r.pipeline->calls_peer_outside_group = 3;
  r.pipeline->calls_peer_unmapped = 5;
  r.pipeline->subgroups = true;
  r.pipeline->device = true;
  return r;
}

TEST(RankResultsStore, EveryFieldComesBack) {
  const RankResults in = sample(4);
  const std::string bytes = engine::encode_rank_results(in);
  RankResults out;
  ASSERT_TRUE(engine::decode_rank_results(bytes, &out));
  EXPECT_EQ(engine::encode_rank_results(out), bytes);
  EXPECT_EQ(out.rank, 4);
  EXPECT_EQ(out.inputs.path, in.inputs.path);
  EXPECT_EQ(out.inputs.devices, in.inputs.devices);
  EXPECT_EQ(out.inputs.stats.json_bytes, 123456789U);
  EXPECT_TRUE(out.inputs.stats.fractional_timestamps);
  EXPECT_EQ(out.breakdown->idle_ns, 21);
  ASSERT_EQ(out.kernels->partition.size(), 2U);
  EXPECT_EQ(out.kernels->partition[1].ns, 25);
  ASSERT_EQ(out.kernels->top[1].size(), 2U);
  EXPECT_TRUE(out.kernels->top[0].empty());
  const analysis::KernelStats& k = out.kernels->top[1][1];
  EXPECT_EQ(k.name, in.kernels->top[1][1].name);
  EXPECT_EQ(k.type, analysis::KernelType::kCommunication);
  EXPECT_TRUE(k.others);
  EXPECT_EQ(k.kernels, 7);
  EXPECT_EQ(k.duration.max, 31);
  EXPECT_DOUBLE_EQ(k.duration.stddev(), in.kernels->top[1][1].duration.stddev());
  EXPECT_EQ((*out.idle)[1].stream, 7);
  EXPECT_EQ((*out.idle)[1].idle_ns[2], 42);
  EXPECT_EQ((*out.idle)[1].gaps[2].p75, 2.5);
  EXPECT_EQ(out.overlap->overlap_ns, 5);
  EXPECT_EQ(out.launch->summary.launch_delay.p99, 8.25);
  ASSERT_EQ(out.launch->slowest.size(), 1U);
  EXPECT_EQ(out.launch->slowest[0].gpu_duration_ns, 14);
  EXPECT_EQ(out.launch->slowest[0].kernel, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)");
  ASSERT_EQ(out.ops->top.size(), 1U);
  const analysis::OperatorRow& op = out.ops->top[0];
  EXPECT_EQ(op.name, "aten::convolution_backward_overrideable");
  EXPECT_EQ(op.side, analysis::OpSide::kDevice);
  EXPECT_TRUE(op.user_annotation);
  EXPECT_TRUE(op.async);
  EXPECT_EQ(op.calls, 4);
  EXPECT_EQ(op.self_device_memory_bytes, -512);
  EXPECT_EQ(op.self_device_pct, 12.5);
  EXPECT_TRUE(std::isnan(op.self_cpu_pct));
  EXPECT_TRUE(out.ops->has_memory);
  EXPECT_FALSE(out.ops->has_device_time);
  EXPECT_EQ(out.ops->unattributed_device_events, 6);
  EXPECT_EQ(out.ops->fraction.computation_ns, 77);
  EXPECT_EQ(out.ops->fraction.basis, tables::FractionBasis::kCpuSelf);
  EXPECT_EQ(out.ops->fraction_parts.cpu.communication_ns, 88);
  EXPECT_TRUE(out.ops->fraction_parts.has_device_self);
  ASSERT_EQ(out.steps->steps.size(), 3U);
  EXPECT_EQ(out.steps->steps[2].step, 9);
  EXPECT_EQ(out.steps->steps[2].last_kernel_end_ns, 1'000'004);
  EXPECT_TRUE(out.steps->has_kernels);
  EXPECT_EQ(out.steps->kernels_outside_steps, 2);
  EXPECT_EQ(out.phases->path, "/runs/a/phases-rank-4.json");
  EXPECT_TRUE(out.phases->has_kernels);
  ASSERT_EQ(out.phases->steps.size(), 2U);
  EXPECT_EQ(out.phases->steps[1].step, 5);
  EXPECT_EQ(out.phases->steps[1].host_ns[3], 123);
  EXPECT_EQ(out.phases->steps[1].device_ns[4], 456);
  ASSERT_EQ(out.phases->steps[1].regions.size(), 2U);
  EXPECT_EQ(out.phases->steps[1].regions[1].name, "Optimizer.step#AdamW.step (a name longer than SSO)");
  EXPECT_EQ(out.phases->steps[1].regions[1].device_ns, 9);
  EXPECT_EQ(out.phases->steps[1].regions[0].kernels, 2);
  EXPECT_EQ(out.decomposition->path, "d.json");
  EXPECT_EQ(out.flops->device, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(out.flops->flops.operators.size(), 1U);
  EXPECT_EQ(out.flops->flops.operators[0].name, in.flops->flops.operators[0].name);
  EXPECT_EQ(out.flops->flops.operators[0].dtype, analysis::FlopDtype::kBf16);
  EXPECT_EQ(out.flops->flops.operators[0].device_ns, 20);
  ASSERT_EQ(out.flops->flops.kernels.size(), 1U);
  EXPECT_EQ(out.flops->flops.kernels[0].flops, 2048);
  ASSERT_EQ(out.flops->flops.steps.size(), 2U);
  EXPECT_EQ(out.flops->flops.steps[1].step, 7);
  EXPECT_EQ(out.flops->flops.steps[1].compute_flops[3], 99);
  EXPECT_TRUE(out.flops->flops.has_device);
  EXPECT_EQ(out.flops->flops.unmodelled_calls, 5);
  EXPECT_EQ(out.flops->flops.compute_flops[3], 4096);
  EXPECT_EQ(out.flops->flops.span_ns, 1238);
  EXPECT_TRUE(out.decomposition->device);
  ASSERT_EQ(out.decomposition->steps.size(), 1U);
  EXPECT_EQ(out.decomposition->steps[0].part_ns[2], 37);

  EXPECT_EQ(out.pipeline->path, "/runs/a/pipeline-rank-4.json");
  ASSERT_EQ(out.pipeline->steps.size(), 1U);
  EXPECT_EQ(out.pipeline->steps[0].wait_ns, 254);
  EXPECT_EQ(out.pipeline->steps[0].device_wait_ns, 704);
  EXPECT_EQ(out.pipeline->calls_peer_outside_group, 3);
  EXPECT_EQ(out.pipeline->calls_peer_unmapped, 5);
  EXPECT_TRUE(out.pipeline->subgroups);
  EXPECT_EQ(out.pipeline->steps[0].first_p2p, -1);
  ASSERT_EQ(out.pipeline->peers.size(), 2U);
  EXPECT_EQ(out.pipeline->peers[1].peer, 5);
  EXPECT_EQ(out.pipeline->peers[1].recvs, 4);
  EXPECT_EQ(out.pipeline->calls_without_peer, 2);
  EXPECT_TRUE(out.pipeline->device);

  RankResults empty;  // no section: every optional stays empty
  ASSERT_TRUE(engine::decode_rank_results(engine::encode_rank_results(RankResults{}), &empty));
  EXPECT_FALSE(empty.kernels || empty.idle || empty.launch || empty.ops || empty.steps || empty.breakdown ||
               empty.phases || empty.decomposition || empty.pipeline);
}

TEST(RankResultsStore, DamagedRecordsAreRefused) {
  const std::string bytes = engine::encode_rank_results(sample(2));
  RankResults out;
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(engine::decode_rank_results(bytes.substr(0, n), &out)) << n;
  }
  EXPECT_FALSE(engine::decode_rank_results(bytes + "x", &out));
}

// The ranks of every file are final only once all are read: results are renumbered, unselected ones
// dropped, the rest visited in rank order, as often as a table asks, spilled or in memory alike.
TEST(RankResultsStore, RenumberedSelectedAndInRankOrder) {
  for (bool spill : {true, false}) {
    SCOPED_TRACE(spill);
    auto store = spill ? engine::RankResultsStore::spilling(0) : std::make_shared<engine::RankResultsStore>();
    store->add(sample(-1));
    store->add(sample(9));
    store->add(sample(0));
    store->set_rank(0, 6);
    store->set_rank(1, 2);
    store->set_rank(2, 0);
    EXPECT_EQ(store->spilled(), spill);
    store->keep_sorted([](int64_t rank) { return rank != 0; });
    ASSERT_EQ(store->size(), 2U);
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<int64_t> ranks;
      std::vector<std::string> paths;
      store->for_each([&](const RankResults& r) {
        ranks.push_back(r.rank);
        paths.push_back(r.inputs.path);
      });
      EXPECT_EQ(ranks, (std::vector<int64_t>{2, 6}));
      EXPECT_EQ(paths, (std::vector<std::string>{"/runs/a/rank-9.json", "/runs/a/rank--1.json"}));
    }
  }
}

// A spilling store holds results in memory until they pass its budget, then moves them all to its
// file, and later ones go there directly; what comes back is what a store in memory gives, in the
// same order. The budget here is two ranks' results.
TEST(RankResultsStore, SpillsOnlyPastItsBudgetAndGivesTheSameResults) {
  const size_t two = engine::resident_bytes(sample(10)) + engine::resident_bytes(sample(11));
  auto spilling = engine::RankResultsStore::spilling(two);
  auto in_memory = std::make_shared<engine::RankResultsStore>();
  auto default_budget = engine::RankResultsStore::spilling();
  for (int64_t rank = 10; rank < 16; ++rank) {
    for (const auto& store : {spilling, in_memory, default_budget}) store->add(sample(rank));
    // Two ranks are exactly the budget, not past it.
    EXPECT_EQ(spilling->spilled(), rank >= 12) << rank;
    EXPECT_EQ(spilling->bytes_in_memory(), rank >= 12 ? 0 : engine::resident_bytes(sample(rank)) * (rank - 9)) << rank;
  }
  EXPECT_FALSE(in_memory->spilled());
  EXPECT_FALSE(default_budget->spilled());  // six ranks of a few KB are far below the default
  EXPECT_GT(default_budget->bytes_in_memory(), two);
  for (const auto& store : {spilling, in_memory}) {
    for (size_t k = 0; k < 6; ++k) store->set_rank(k, 5 - static_cast<int64_t>(k));  // reversed
    store->keep_sorted([](int64_t rank) { return rank != 3; });
  }
  // Compared field by field, not as encoded bytes: the encoding copies structs whole, padding
  // included, and padding is not a value (it differs between two sample() calls under ASan).
  auto fields = [](const RankResults& r) {
    return std::tuple(r.rank, r.inputs.path, r.inputs.stats.events_total, r.inputs.devices, r.breakdown->idle_ns,
                      r.kernels->top[1].size(), r.kernels->top[1][1].name, (*r.idle)[1].idle_ns[2],
                      r.launch->slowest[0].kernel, r.ops->top[0].name, r.ops->top[0].self_device_memory_bytes);
  };
  std::vector<decltype(fields(sample(0)))> from_file;
  std::vector<decltype(fields(sample(0)))> from_memory;
  std::vector<std::string> paths;
  spilling->for_each([&](const RankResults& r) {
    from_file.push_back(fields(r));
    paths.push_back(r.inputs.path);
  });
  in_memory->for_each([&](const RankResults& r) { from_memory.push_back(fields(r)); });
  ASSERT_EQ(from_file.size(), 5U);
  EXPECT_EQ(from_file, from_memory);
  EXPECT_EQ(paths, (std::vector<std::string>{"/runs/a/rank-15.json", "/runs/a/rank-14.json", "/runs/a/rank-13.json",
                                             "/runs/a/rank-11.json", "/runs/a/rank-10.json"}));
}

// Real results: every section of `summary` reduced from the shared two-rank trace comes back whole.
TEST(RankResultsStore, RealRanksComeBackWhole) {
  if (!fs::is_directory(kStoreTestTraces / "trace_filter")) GTEST_SKIP() << "shared traces not found";
  auto loaded = trace::load_traces({(kStoreTestTraces / "trace_filter").string()});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  // The per-rank analyses of `summary`.
  engine::RankAnalyses analyses;
  analyses.inputs = analyses.breakdown = analyses.kernels = analyses.idle = analyses.overlap = analyses.launch = true;
  analyses.ops = analyses.steps = analyses.memory = analyses.critical_path = analyses.counters = analyses.flops = true;
  for (const trace::RankTrace& t : loaded.value().ranks) {
    const std::string bytes = engine::encode_rank_results(engine::reduce_rank(t, analyses, {}));
    RankResults out;
    ASSERT_TRUE(engine::decode_rank_results(bytes, &out));
    EXPECT_EQ(engine::encode_rank_results(out), bytes);
    EXPECT_FALSE(out.ops->top.empty());
    EXPECT_FALSE(out.kernels->top[0].empty());
    EXPECT_FALSE(out.launch->slowest.empty());
  }
}

}  // namespace
}  // namespace scaleprof

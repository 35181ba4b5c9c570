// Pipeline bubbles on GPU traces (analysis/pipeline_bubbles.h): the device basis (the step's time without
// device computation, where NCCL's host calls return at once and the host's wait says nothing), and peers
// mapped through process groups (record_param_comms or the NCCL kernels' Dst/Src Rank and Process Group
// Ranks), on traces written by construction as Kineto writes an NCCL pipeline. No real GPU pipeline trace
// was available: these are the only tests of both rules.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/pipeline_bubbles.h"
#include "trace/kineto_reader.h"

namespace scaleprof::analysis {
namespace {

// One GPipe stage of p with m micro-batches, every forward and backward kernel `t_us` long, on the
// device schedule of equal stages: forward i of stage k at (k + i) t, backward j (last micro-batch first)
// at (m + p - 1 + p - 1 - k + j) t; the step ends when stage 0's last backward does, at 2 (m + p - 1) t.
struct PpgStage {
  int rank = 0;
  int stage = 0;
  int stages = 2;
  int micro_batches = 4;
  int t_us = 10'000;
  int prev_local = -1, next_local = -1;  // the neighbours' ranks within the group (Dst/Src Rank)
  std::string group_ranks = "[0, 1]";    // Process Group Ranks
  bool metadata_on_kernel = false;       // the group metadata on the SendRecv kernels, not record_param_comms
  std::string pg_config{};               // distributedInfo.pg_config's JSON, "" none
  int world_size = 2;
};

std::string ppg_event(const std::string& cat, const std::string& name, int pid, int tid, int ts, int dur,
                      const std::string& args) {
  return R"({"ph":"X","cat":")" + cat + R"(","name":")" + name + R"(","pid":)" + std::to_string(pid) + R"(,"tid":)" +
         std::to_string(tid) + R"(,"ts":)" + std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + R"(,"args":)" +
         args + "}";
}

std::string ppg_comm_args(bool send, int local_peer, const std::string& group_ranks) {
  return R"("Collective name":")" + std::string(send ? "send" : "recv") +
         R"(","dtype":"Float","In msg nelems":4096,"Out msg nelems":4096,"Group size":2,"Process Group Name":"1",)"
         R"("Process Group Description":"undefined","Process Group Ranks":")" +
         group_ranks + R"(",")" + (send ? "Dst Rank" : "Src Rank") + R"(":)" + std::to_string(local_peer);
}

trace::RankTrace ppg_stage_trace(const PpgStage& s) {
  const int t = s.t_us, m = s.micro_batches, p = s.stages, k = s.stage;
  const int step_us = 2 * (m + p - 1) * t;
  std::vector<std::string> ev;
  ev.push_back(ppg_event("user_annotation", "ProfilerStep#1", 1, 1, 0, step_us, "{}"));
  int host = 1;  // the host issues everything at once: each call a few µs
  int correlation = 1;
  auto launch = [&](int kernel_ts, int kernel_dur, const std::string& name, int stream,
                    const std::string& kernel_extra) {
    ev.push_back(ppg_event("cuda_runtime", "cudaLaunchKernel", 1, 1, host + 1, 3,
                           R"({"correlation":)" + std::to_string(correlation) + "}"));
    ev.push_back(ppg_event("kernel", name, 0, stream, kernel_ts, kernel_dur,
                           R"({"device":0,"stream":)" + std::to_string(stream) + R"(,"correlation":)" +
                               std::to_string(correlation) + kernel_extra + "}"));
    ++correlation;
  };
  auto compute = [&](int start) {
    ev.push_back(ppg_event("cpu_op", "aten::mm", 1, 1, host, 5, "{}"));
    launch(start, t, "sm90_xmma_gemm_f16f16_f32", 7, "");
    host += 6;
  };
  // A send or receive: the c10d op, record_param_comms inside it (or the metadata on the kernel), and the
  // SendRecv kernel on the communication stream, from `kernel_start` until the data is through.
  auto p2p = [&](bool send, int local_peer, int kernel_start, int kernel_end) {
    ev.push_back(ppg_event("cpu_op", send ? "c10d::send" : "c10d::recv_", 1, 1, host, 10, "{}"));
    const std::string meta = ppg_comm_args(send, local_peer, s.group_ranks);
    if (!s.metadata_on_kernel) ev.push_back(ppg_event("cpu_op", "record_param_comms", 1, 1, host, 8, "{" + meta + "}"));
    launch(kernel_start, kernel_end - kernel_start, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 20,
           s.metadata_on_kernel ? "," + meta : "");
    host += 11;
  };
  for (int i = 0; i < m; ++i) {
    const int start = (k + i) * t;
    if (k > 0) p2p(false, s.prev_local, i == 0 ? 0 : start - 100, start);  // the first waits for the fill
    compute(start);
    if (k + 1 < p) p2p(true, s.next_local, start + t, start + t + 100);
  }
  for (int j = 0; j < m; ++j) {
    const int start = (m + p - 1 + p - 1 - k + j) * t;
    if (k + 1 < p) p2p(false, s.next_local, j == 0 ? m * t : start - 100, start);
    compute(start);
    if (k > 0) p2p(true, s.prev_local, start + t, start + t + 100);
  }
  ev.push_back(ppg_event("cuda_runtime", "cudaDeviceSynchronize", 1, 1, host, step_us - host, "{}"));

  std::string text = R"({"distributedInfo":{"backend":"nccl","rank":)" + std::to_string(s.rank) + R"(,"world_size":)" +
                     std::to_string(s.world_size) + (s.pg_config.empty() ? "" : R"(,"pg_config":)" + s.pg_config) +
                     R"(},"traceEvents":[)";
  for (size_t i = 0; i < ev.size(); ++i) text += (i ? ",\n" : "\n") + ev[i];
  text += "]}";
  auto parsed = trace::parse_kineto_trace("rank" + std::to_string(s.rank) + ".json", simdjson::padded_string(text));
  EXPECT_TRUE(parsed.ok()) << parsed.error().message;
  trace::RankTrace out = std::move(parsed.value());
  out.rank = s.rank;
  return out;
}

TEST(PipelineGpu, DeviceBubbleOfGpipeIsTheIdealWhileTheHostWaitsNothing) {
  PpgStage first{.rank = 0, .stage = 0, .next_local = 1};
  PpgStage second{.rank = 1, .stage = 1, .prev_local = 0};
  const std::vector<RankPipeline> ranks = {rank_pipeline(ppg_stage_trace(second), true),
                                           rank_pipeline(ppg_stage_trace(first), true)};
  const int64_t step_ns = 2 * (4 + 2 - 1) * 10'000'000LL;  // 100 ms
  for (const RankPipeline& r : ranks) {
    EXPECT_TRUE(r.device);
    ASSERT_EQ(r.steps.size(), 1u);
    EXPECT_EQ(r.steps[0].duration_ns(), step_ns);
    EXPECT_EQ(r.steps[0].device_wait_ns, 20'000'000);  // (p-1)/(m+p-1) = 1/5 of 100 ms: 2 (p-1) t
    EXPECT_LT(r.steps[0].wait_ns, 100'000);            // the host returns from every call at once
    EXPECT_EQ(r.calls_without_peer, 0);
    EXPECT_EQ(r.calls_peer_unmapped, 0);
  }
  const PipelineAnalysis a = analyse_pipeline(ranks);
  EXPECT_TRUE(a.notes.empty()) << a.notes.front();
  ASSERT_EQ(a.pipelines.size(), 1u);
  EXPECT_EQ(a.pipelines[0].ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(a.pipelines[0].micro_batches, 4);
  EXPECT_DOUBLE_EQ(a.pipelines[0].ideal_fraction, 0.2);
  ASSERT_EQ(a.stages.size(), 2u);
  ASSERT_EQ(a.rows.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a.stages[i].basis, PipelineBasis::kDevice);
    EXPECT_NEAR(a.stages[i].bubble_fraction, a.stages[i].ideal_fraction, 1e-9);
    EXPECT_NEAR(a.stages[i].busy_ns, 80'000'000, 1'000);
    EXPECT_EQ(a.rows[i].basis, PipelineBasis::kDevice);
    EXPECT_NEAR(static_cast<double>(a.rows[i].bubble_ns), 20'000'000, 1'000);
    EXPECT_LT(a.rows[i].host_wait_ns, 100'000);
  }
  EXPECT_STREQ(pipeline_basis_name(a.rows[0].basis), "device");
}

std::string ppg_mesh_pg_config() {
  return R"([{"pg_name":"0","pg_desc":"default_pg","backend_config":"cuda:nccl","pg_size":4,"ranks":[0,1,2,3]},)"
         R"({"pg_name":"1","pg_desc":"undefined","backend_config":"cuda:nccl","pg_size":2,"ranks":[0,2]},)"
         R"({"pg_name":"2","pg_desc":"undefined","backend_config":"cuda:nccl","pg_size":2,"ranks":[1,3]}])";
}

TEST(PipelineGpu, TwoPipelinesOverSubgroupsOfAFourRankMesh) {
  // Pipeline {0, 2}: rank 0 first. Pipeline {1, 3}: rank 3 first (group-local 1 sends to group-local 0).
  // Taken as global ranks, rank 3's peer 0 would join the two pipelines into one wrong chain.
  const std::string config = ppg_mesh_pg_config();
  std::vector<PpgStage> stages = {
      {.rank = 0, .stage = 0, .next_local = 1, .group_ranks = "[0, 2]"},
      {.rank = 2, .stage = 1, .prev_local = 0, .group_ranks = "[0, 2]"},
      {.rank = 3, .stage = 0, .next_local = 0, .group_ranks = "[1, 3]"},
      {.rank = 1, .stage = 1, .prev_local = 1, .group_ranks = "[1, 3]"},
  };
  std::vector<RankPipeline> ranks;
  for (size_t i = 0; i < stages.size(); ++i) {
    PpgStage& s = stages[i];
    s.pg_config = config;
    s.world_size = 4;
    s.metadata_on_kernel = i % 2 == 1;  // both carriers of the metadata: the op and the kernel
    ranks.push_back(rank_pipeline(ppg_stage_trace(s), true));
    EXPECT_EQ(ranks.back().calls_peer_unmapped, 0);
    EXPECT_TRUE(ranks.back().subgroups);
  }
  const PipelineAnalysis a = analyse_pipeline(ranks);
  EXPECT_TRUE(a.notes.empty()) << a.notes.front();
  ASSERT_EQ(a.pipelines.size(), 2u);
  EXPECT_EQ(a.pipelines[0].ranks, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(a.pipelines[1].ranks, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(a.pipelines[1].micro_batches, 4);
  ASSERT_EQ(a.stages.size(), 4u);
  EXPECT_EQ(a.stages[2].rank, 3);
  EXPECT_EQ(a.stages[2].next_rank, 1);
  EXPECT_EQ(a.stages[3].prev_rank, 3);
  EXPECT_NEAR(a.stages[3].bubble_fraction, 0.2, 1e-9);
}

TEST(PipelineGpu, MalformedGroupAndUnmappedPeersGiveNotes) {
  // Rank 2's Dst Rank 5 is no position in [0, 2]: its sends have no peer, and a note says why.
  PpgStage first{.rank = 0, .stage = 0, .next_local = 1, .group_ranks = "[0, 2]"};
  PpgStage bad{.rank = 2, .stage = 1, .prev_local = 5, .group_ranks = "[0, 2]"};
  const std::vector<RankPipeline> ranks = {rank_pipeline(ppg_stage_trace(first), true),
                                           rank_pipeline(ppg_stage_trace(bad), true)};
  EXPECT_EQ(ranks[1].calls_peer_outside_group, 8);  // its 4 receives and 4 sends
  const PipelineAnalysis a = analyse_pipeline(ranks);
  ASSERT_FALSE(a.notes.empty());
  EXPECT_NE(a.notes[0].find("ranks 2: 8 send/recv calls whose Dst/Src Rank is not a position"), std::string::npos)
      << a.notes[0];

  // gloo-like: only Concrete Inputs, while pg_config lists subgroups: the peers are taken as global ranks,
  // and a note says they may be group ranks.
  const std::string text = R"({"distributedInfo":{"backend":"gloo","rank":1,"world_size":4,"pg_config":)" +
                           ppg_mesh_pg_config() +
                           R"(},"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100,"args":{}},
{"ph":"X","cat":"cpu_op","name":"c10d::send","pid":1,"tid":1,"ts":10,"dur":10,
 "args":{"Input Dims":[[[64]],[],[],[]],"Concrete Inputs":["","","1","0"]}}]})";
  auto t = trace::parse_kineto_trace("gloo.json", simdjson::padded_string(text));
  ASSERT_TRUE(t.ok()) << t.error().message;
  trace::RankTrace gloo = std::move(t.value());
  gloo.rank = 3;
  const RankPipeline g = rank_pipeline(gloo, true);
  EXPECT_TRUE(g.subgroups);
  EXPECT_FALSE(g.device);
  EXPECT_EQ(g.calls_peer_unmapped, 1);
  ASSERT_EQ(g.peers.size(), 1u);
  EXPECT_EQ(g.peers[0].peer, 1);
  const std::vector<RankPipeline> alone = {g};
  const PipelineAnalysis n = analyse_pipeline(alone);
  ASSERT_FALSE(n.notes.empty());
  EXPECT_NE(n.notes[0].find("ranks 3: their traces list process groups smaller than the world"), std::string::npos)
      << n.notes[0];
}

}  // namespace
}  // namespace scaleprof::analysis

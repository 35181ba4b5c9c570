// Pipeline bubbles (analysis/pipeline_bubbles.h): the wait per step read from trace text as Kineto
// writes it for gloo's send/recv (c10d ops with their peer in Concrete Inputs, gloo's spans), the
// stage order and m across ranks, the bubble arithmetic, the slowest stage, and malformed input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/pipeline_bubbles.h"
#include "trace/kineto_reader.h"

namespace scaleprof::analysis {
namespace {

// One complete event on thread 1 (µs as Kineto writes them).
std::string pp_event(const std::string& cat, const std::string& name, int ts, int dur, const std::string& args = "{}") {
  return R"({"ph":"X","cat":")" + cat + R"(","name":")" + name + R"(","pid":1,"tid":1,"ts":)" + std::to_string(ts) +
         R"(,"dur":)" + std::to_string(dur) + R"(,"args":)" + args + "}";
}
std::string pp_op(const std::string& name, int ts, int dur) {
  return pp_event("cpu_op", name, ts, dur);
}
std::string pp_p2p(const std::string& name, int ts, int dur, int peer) {
  return pp_event(
      "cpu_op", name, ts, dur,
      R"({"Input Dims":[[[64]],[],[],[]],"Concrete Inputs":["","",")" + std::to_string(peer) + R"(","0"]})");
}
std::string pp_span(const std::string& name, int ts, int dur) {
  return pp_event("user_annotation", name, ts, dur);
}

trace::RankTrace pp_parse(int rank, const std::vector<std::string>& events) {
  std::string text =
      R"({"distributedInfo":{"backend":"gloo","rank":)" + std::to_string(rank) + R"(,"world_size":2},"traceEvents":[)";
  for (size_t i = 0; i < events.size(); ++i) text += (i ? ",\n" : "\n") + events[i];
  text += "]}";
  auto t = trace::parse_kineto_trace("rank" + std::to_string(rank) + ".json", simdjson::padded_string(text));
  EXPECT_TRUE(t.ok()) << t.error().message;
  trace::RankTrace out = std::move(t.value());
  out.rank = rank;
  return out;
}

// Two stages, two micro-batches, one step [0, 1000) µs each (GPipe-like).
trace::RankTrace pp_first_stage() {
  return pp_parse(0,
                  {pp_span("ProfilerStep#1", 0, 1000), pp_op("aten::mm", 0, 100),  // forward 1
                   pp_p2p("c10d::send", 100, 10, 1),                               // activations to rank 1
                   pp_span("gloo:send", 110, 140),  // an isend's span over forward 2 and the next calls
                   pp_op("aten::mm", 110, 100),     // forward 2
                   pp_p2p("c10d::send", 210, 10, 1), pp_p2p("c10d::recv_", 220, 10, 1),  // gradient 2 from rank 1 ...
                   pp_span("gloo:recv", 225, 275),                                       // ... waited for until 500
                   pp_op("aten::mm", 500, 100),                                          // backward 2
                   pp_p2p("c10d::recv_", 600, 100, 1),                                   // waited for in the call
                   pp_op("aten::mm", 700, 100),            // backward 1; 800-1000 no operator (Python)
                   pp_span("ProfilerStep#2", 1000, 10)});  // cut by the profiler's stop: left out
}

trace::RankTrace pp_last_stage() {
  return pp_parse(1, {pp_span("ProfilerStep#1", 0, 1000),
                      pp_op("wrapper::recv", 0, 100),  // encloses the receive: not compute beside it
                      pp_p2p("c10d::recv_", 0, 100, 0), pp_op("aten::mm", 100, 100),    // forward 1
                      pp_p2p("c10d::recv_", 200, 20, 0), pp_op("aten::mm", 220, 100),   // forward 2
                      pp_op("aten::mm", 320, 100),                                      // backward 2
                      pp_p2p("c10d::send", 420, 10, 0), pp_op("aten::mm", 430, 200),    // backward 1
                      pp_p2p("c10d::send", 630, 10, 0), pp_span("gloo:send", 640, 10),  // blocked until rank 0 took it
                      pp_span("gloo:recv", 650, 250),                                   // an early receive's span ...
                      pp_op("aten::mm", 700, 100),  // ... with compute inside it: 150 waited
                      pp_span("ProfilerStep#2", 1000, 10)});
}

TEST(PipelineBubbles, WaitPerStepFromKinetoText) {
  const RankPipeline r0 = rank_pipeline(pp_first_stage());
  ASSERT_EQ(r0.steps.size(), 1u);  // the last step is left out, as in every step report
  EXPECT_EQ(r0.steps[0].step, 1);
  // 10 + [210, 500) + 100 µs: the part of the send's span over forward 2 is compute.
  EXPECT_EQ(r0.steps[0].wait_ns, 400'000);
  EXPECT_EQ(r0.steps[0].sends, 2);
  EXPECT_EQ(r0.steps[0].recvs, 2);
  EXPECT_EQ(r0.steps[0].first_p2p, 1);
  ASSERT_EQ(r0.peers.size(), 1u);
  EXPECT_EQ(r0.peers[0].peer, 1);
  EXPECT_EQ(r0.calls_without_peer, 0);

  const RankPipeline r1 = rank_pipeline(pp_last_stage());
  ASSERT_EQ(r1.steps.size(), 1u);
  EXPECT_EQ(r1.steps[0].wait_ns, 300'000);  // 100 + 20 + 10 + 10 + 10 + (250 - 100)
  EXPECT_EQ(r1.steps[0].first_p2p, -1);
}

TEST(PipelineBubbles, StagesMicroBatchesAndBubbleFromTwoRanks) {
  // Given last stage first: the order comes from who sends first, not from the input's order.
  const std::vector<RankPipeline> ranks = {rank_pipeline(pp_last_stage()), rank_pipeline(pp_first_stage())};
  const PipelineAnalysis a = analyse_pipeline(ranks);
  EXPECT_TRUE(a.notes.empty()) << a.notes.front();
  ASSERT_EQ(a.pipelines.size(), 1u);
  EXPECT_EQ(a.pipelines[0].ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(a.pipelines[0].micro_batches, 2);
  EXPECT_DOUBLE_EQ(a.pipelines[0].ideal_fraction, 1.0 / 3.0);
  ASSERT_EQ(a.stages.size(), 2u);
  EXPECT_EQ(a.stages[0].rank, 0);
  EXPECT_EQ(a.stages[0].next_rank, 1);
  EXPECT_EQ(a.stages[1].prev_rank, 0);
  EXPECT_DOUBLE_EQ(a.stages[0].bubble_ns, 400'000);
  EXPECT_DOUBLE_EQ(a.stages[0].busy_ns, 600'000);
  EXPECT_DOUBLE_EQ(a.stages[0].bubble_fraction, 0.4);
  EXPECT_DOUBLE_EQ(a.stages[1].busy_ns, 700'000);
  // 700 / 600 > 1.10: stage 1 is the slow one.
  EXPECT_EQ(a.pipelines[0].slowest_rank, 1);
  EXPECT_TRUE(a.stages[1].slowest);
  ASSERT_EQ(a.rows.size(), 2u);
  EXPECT_EQ(a.rows[1].micro_batches, 2);
  // CPU-only traces: the host basis, the bubble being the host's wait.
  EXPECT_EQ(a.stages[0].basis, PipelineBasis::kHost);
  EXPECT_EQ(a.rows[0].basis, PipelineBasis::kHost);
  EXPECT_EQ(a.rows[0].host_wait_ns, a.rows[0].bubble_ns);
  EXPECT_STREQ(pipeline_basis_name(a.rows[0].basis), "host");
}

// A rank of a chain with `m` micro-batches: sends to `next`, receives from `prev`, both directions
// (activations one way, gradients the other), one step of 1000 µs with `wait_us` waited.
RankPipeline pp_chain_rank(int64_t rank, int64_t prev, int64_t next, int64_t m, int64_t wait_us) {
  RankPipeline r;
  r.rank = rank;
  r.path = "rank" + std::to_string(rank);
  PipelineStepWait s;
  s.step = 5;
  s.end_ns = 1'000'000;
  s.wait_ns = wait_us * 1000;
  s.first_p2p = prev < 0 ? 1 : -1;
  r.steps.push_back(s);
  for (int64_t peer : {prev, next}) {
    if (peer >= 0) r.peers.push_back({5, peer, m, m});
  }
  return r;
}

TEST(PipelineBubbles, FourStagesInAnyRankOrderAndTheSlowStage) {
  // Stage order 3 -> 1 -> 0 -> 2, m = 4; rank 0 computes longest (waits least).
  const std::vector<RankPipeline> ranks = {pp_chain_rank(0, 1, 2, 4, 100), pp_chain_rank(1, 3, 0, 4, 400),
                                           pp_chain_rank(2, 0, -1, 4, 400), pp_chain_rank(3, -1, 1, 4, 400)};
  const PipelineAnalysis a = analyse_pipeline(ranks);
  ASSERT_EQ(a.pipelines.size(), 1u);
  EXPECT_EQ(a.pipelines[0].ranks, (std::vector<int64_t>{3, 1, 0, 2}));
  EXPECT_EQ(a.pipelines[0].micro_batches, 4);
  EXPECT_DOUBLE_EQ(a.pipelines[0].ideal_fraction, 3.0 / 7.0);
  EXPECT_EQ(a.pipelines[0].slowest_rank, 0);
  EXPECT_DOUBLE_EQ(a.pipelines[0].busy_ratio, 900.0 / 600.0);
  // Balanced: no stage named.
  const std::vector<RankPipeline> balanced = {pp_chain_rank(0, 1, 2, 4, 400), pp_chain_rank(1, 3, 0, 4, 400),
                                              pp_chain_rank(2, 0, -1, 4, 420), pp_chain_rank(3, -1, 1, 4, 400)};
  const PipelineAnalysis b = analyse_pipeline(balanced);
  ASSERT_EQ(b.pipelines.size(), 1u);
  EXPECT_EQ(b.pipelines[0].slowest_rank, -1);
  for (const PipelineStage& s : b.stages) EXPECT_FALSE(s.slowest);
}

TEST(PipelineBubbles, MalformedInputGivesNotesNotACrash) {
  // One rank only: it sends to rank 1, which has no trace.
  const std::vector<RankPipeline> alone = {pp_chain_rank(0, -1, 1, 4, 100)};
  const PipelineAnalysis a = analyse_pipeline(alone);
  EXPECT_TRUE(a.pipelines.empty());
  ASSERT_EQ(a.notes.size(), 2u);
  EXPECT_NE(a.notes[0].find("rank 1, which has no trace"), std::string::npos) << a.notes[0];
  EXPECT_NE(a.notes[1].find("every stage's trace is needed"), std::string::npos) << a.notes[1];

  // A send without its receive: rank 0 sent 4, rank 1 received 3.
  std::vector<RankPipeline> unmatched = {pp_chain_rank(0, -1, 1, 4, 100), pp_chain_rank(1, 0, -1, 4, 100)};
  unmatched[1].peers[0].recvs = 3;
  const PipelineAnalysis u = analyse_pipeline(unmatched);
  ASSERT_EQ(u.pipelines.size(), 1u);  // still ordered, with a note
  ASSERT_EQ(u.notes.size(), 1u);
  EXPECT_NE(u.notes[0].find("rank 0 sent 4 messages to rank 1, which received 3"), std::string::npos) << u.notes[0];

  // A ring of three ranks is no chain of stages.
  const std::vector<RankPipeline> ring = {pp_chain_rank(0, 2, 1, 1, 0), pp_chain_rank(1, 0, 2, 1, 0),
                                          pp_chain_rank(2, 1, 0, 1, 0)};
  const PipelineAnalysis c = analyse_pipeline(ring);
  EXPECT_TRUE(c.pipelines.empty());
  ASSERT_FALSE(c.notes.empty());
  EXPECT_NE(c.notes[0].find("not as one chain"), std::string::npos) << c.notes[0];

  // No P2P at all, and nothing at all.
  RankPipeline quiet;
  quiet.steps.push_back({});
  const std::vector<RankPipeline> none = {quiet};
  const PipelineAnalysis d = analyse_pipeline(none);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("not a pipeline-parallel run"), std::string::npos);
  EXPECT_TRUE(analyse_pipeline({}).notes.empty());

  // Calls without a peer (no record_shapes): counted, and a note.
  std::string text = R"({"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":100,"args":{}},
{"ph":"X","cat":"cpu_op","name":"c10d::send","pid":1,"tid":1,"ts":10,"dur":10,"args":{}}]})";
  auto t = trace::parse_kineto_trace("t.json", simdjson::padded_string(text));
  ASSERT_TRUE(t.ok()) << t.error().message;
  const RankPipeline r = rank_pipeline(t.value(), /*include_last_step=*/true);
  EXPECT_EQ(r.calls_without_peer, 1);
  const std::vector<RankPipeline> no_peer = {r};
  const PipelineAnalysis e = analyse_pipeline(no_peer);
  ASSERT_FALSE(e.notes.empty());
  EXPECT_NE(e.notes[0].find("record_shapes=True"), std::string::npos) << e.notes[0];
}

}  // namespace
}  // namespace scaleprof::analysis

// Issue 29: the what-if model (analysis/whatif.h, whatif_gains.h) on timelines built by hand, with
// answers known by construction (times in ms).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "analysis/named_intervals.h"
#include "analysis/scalability.h"
#include "analysis/whatif.h"
#include "analysis/whatif_gains.h"
#include "engine/step_timeline_build.h"
#include "host_trace_builder.h"

namespace {

using scaleprof::analysis::apply_what_if;
using scaleprof::analysis::parse_what_if;
using scaleprof::analysis::replay;
using scaleprof::analysis::ScaleLoss;
using scaleprof::analysis::WhatIf;
using scaleprof::analysis::WhatIfScale;
using scaleprof::analysis::WhatIfSpec;
using scaleprof::tables::RunTimeline;
using scaleprof::tables::TimelineJoin;
using scaleprof::tables::TimelineParts;
using scaleprof::tables::TimelineStep;

constexpr int64_t kMs = 1'000'000;
constexpr size_t kCompute = 0, kExposed = 1, kDataLoading = 3;

TimelineParts parts(int64_t compute, int64_t exposed, int64_t data = 0) {
  TimelineParts p{};
  p[kCompute] = compute * kMs;
  p[kExposed] = exposed * kMs;
  p[kDataLoading] = data * kMs;
  return p;
}

// Two ranks, `steps` steps back to back, one all-reduce per step. In each step rank 0 computes 10 ms
// and arrives, rank 1 computes 10 + late ms; the transfer takes 5 ms after the last arrival; both then
// compute 2 ms. Rank 0 waits late + 5 ms blocked, rank 1 5 ms.
RunTimeline two_ranks(int64_t late, int steps = 1) {
  RunTimeline t;
  const int64_t step_ms = 10 + late + 5 + 2;
  for (int s = 0; s < steps; ++s) {
    const int64_t start = s * step_ms;
    const int64_t last = start + 10 + late;
    scaleprof::tables::TimelineCall call;
    call.type = "allreduce";
    call.ranks = {{0, (start + 10) * kMs, (last + 5) * kMs}, {1, last * kMs, (last + 5) * kMs}};
    const auto index = static_cast<int64_t>(t.calls.size());
    t.calls.push_back(call);
    TimelineStep r0{0, s, start * kMs, {}};
    r0.joins = {TimelineJoin{index, (start + 10) * kMs, parts(10, 0), {}},
                TimelineJoin{-1, (start + step_ms) * kMs, parts(2, late + 5), {}}};
    TimelineStep r1{1, s, start * kMs, {}};
    r1.joins = {TimelineJoin{index, last * kMs, parts(10 + late, 0), {}},
                TimelineJoin{-1, (start + step_ms) * kMs, parts(2, 5), {}}};
    t.steps.push_back(r0);
    t.steps.push_back(r1);
  }
  return t;
}

TEST(WhatIfReplay, NothingChangedReplaysTheTraceExactly) {
  const RunTimeline t = two_ranks(20, 3);
  const auto r = replay(t, WhatIf{});
  ASSERT_TRUE(r.ok);
  EXPECT_DOUBLE_EQ(r.measured_ns, 6.0 * 37 * kMs);
  EXPECT_DOUBLE_EQ(r.predicted_ns, r.measured_ns);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_DOUBLE_EQ(r.steps[1].predicted_ns, 37.0 * kMs);
}

TEST(WhatIfReplay, TheLateRankAtTheMedianRemovesOnlyItsLateness) {
  // Rank 1 capped at rank 0's 10 ms: both arrive at 10, the transfer still takes 5 ms: 17 ms steps.
  WhatIf w;
  w.ranks_at_median = {1};
  const auto r = replay(two_ranks(20, 3), w);
  EXPECT_DOUBLE_EQ(r.predicted_ns, 6.0 * 17 * kMs);
  // Chained: the second step starts where the first now ends.
  EXPECT_DOUBLE_EQ(r.steps[2].predicted_ns, 17.0 * kMs);
}

// Rank 1 sleeps `late` ms at the end of every step (host overhead): it starts every step `late` after
// rank 0, which waits for it at the all-reduce; each step lasts late + 17 ms on both ranks.
RunTimeline sleeps_at_the_end(int64_t late, int steps) {
  RunTimeline t;
  const int64_t period = late + 17;
  for (int s = 0; s < steps; ++s) {
    const int64_t start = s * period;
    scaleprof::tables::TimelineCall call;
    call.ranks = {{0, (start + 10) * kMs, (start + late + 15) * kMs},
                  {1, (start + late + 10) * kMs, (start + late + 15) * kMs}};
    const auto index = static_cast<int64_t>(t.calls.size());
    t.calls.push_back(call);
    TimelineStep r0{0, s, start * kMs, {}};
    r0.joins = {TimelineJoin{index, (start + 10) * kMs, parts(10, 0), {}},
                TimelineJoin{-1, (start + period) * kMs, parts(2, late + 5), {}}};
    TimelineParts tail = parts(2, 5);
    tail[5] = late * kMs;  // host overhead: the sleep
    TimelineStep r1{1, s, (start + late) * kMs, {}};
    r1.joins = {TimelineJoin{index, (start + late + 10) * kMs, parts(10, 0), {}},
                TimelineJoin{-1, (start + late + period) * kMs, tail, {}}};
    t.steps.push_back(r0);
    t.steps.push_back(r1);
  }
  return t;
}

TEST(WhatIfReplay, ACallRecordedEndingAfterTheWaitersStepStillEndsItsWait) {
  // Rank 0's all-reduce is recorded ending 2 ms after its step did (the call's thread was descheduled
  // after releasing it): its blocked time is still the wait for that call, not work of its own.
  RunTimeline t = two_ranks(20, 3);
  for (size_t s = 0; s < t.calls.size(); ++s) t.calls[s].ranks[0].completion_ns = t.steps[2 * s].end_ns() + 2 * kMs;
  WhatIf w;
  w.ranks_at_median = {1};
  const auto r = replay(t, w);
  ASSERT_TRUE(r.ok);
  // As when recorded in time: rank 1 capped, 17 ms steps (10 + the transfer and 2 ms up to the join).
  EXPECT_DOUBLE_EQ(r.predicted_ns, 6.0 * 17 * kMs);
  EXPECT_DOUBLE_EQ(replay(t, WhatIf{}).predicted_ns, 6.0 * 37 * kMs);
}

TEST(WhatIfReplay, ACappedRankFasterElsewhereKeepsItsCapsAtEachPosition) {
  // Rank 1 sleeps 20 ms at the end of the step but computes 4 ms less before the all-reduce: at the
  // median it loses the 20 ms (its lead before the all-reduce only makes it wait there), never 16.
  RunTimeline t;
  scaleprof::tables::TimelineCall call;
  call.type = "allreduce";
  call.ranks = {{0, 10 * kMs, 15 * kMs}, {1, 6 * kMs, 15 * kMs}};
  t.calls.push_back(call);
  // Rank 0: 10 ms, the all-reduce (5 ms after the last arrival), 2 ms: 17 ms. Rank 1: 6 ms, 9 ms blocked,
  // 22 ms (2 ms and the sleep): 37 ms. Its step exceeds rank 0's work by 16 ms, its last segment by 20.
  TimelineStep r0{0, 0, 0, {}};
  r0.joins = {TimelineJoin{0, 10 * kMs, parts(10, 0), {}}, TimelineJoin{-1, 17 * kMs, parts(2, 5), {}}};
  TimelineStep r1{1, 0, 0, {}};
  r1.joins = {TimelineJoin{0, 6 * kMs, parts(6, 0), {}}, TimelineJoin{-1, 37 * kMs, parts(22, 9), {}}};
  t.steps = {r0, r1};
  WhatIf w;
  w.ranks_at_median = {1};
  const auto r = replay(t, w);
  ASSERT_TRUE(r.ok);
  // Both arrive by 10, the transfer 5 ms, then 2 ms each: 17 ms on both ranks.
  EXPECT_DOUBLE_EQ(r.predicted_ns, 2.0 * 17 * kMs);
}

TEST(WhatIfReplay, ALateRankCappedAlsoStartsItsFirstStepWithTheOthers) {
  // Its lateness at the first profiled step comes from the step before, unprofiled: without starting
  // it with the others, rank 0 would still wait in the first step and the gain be 1/3 short here.
  const RunTimeline t = sleeps_at_the_end(20, 3);
  EXPECT_DOUBLE_EQ(replay(t, WhatIf{}).predicted_ns, 6.0 * 37 * kMs);
  WhatIf w;
  w.ranks_at_median = {1};
  EXPECT_DOUBLE_EQ(replay(t, w).predicted_ns, 6.0 * 17 * kMs);
  EXPECT_EQ(scaleprof::analysis::slowest_rank(t).rank, 1);
}

TEST(WhatIfReplay, ACauseFixScalesTheTypicalRanksPartNeverAnotherRanksExcess) {
  // Rank 1's 20 ms sleep is host overhead on its own timeline; rank 0 has none. Host overhead "free"
  // as the cause's fix (typical only) removes rank 0's none: nothing; the literal what-if removes the
  // sleep too (17 ms steps, but for rank 0's first, where rank 1 starts late as measured: 37 ms).
  const RunTimeline t = sleeps_at_the_end(20, 3);
  WhatIf w;
  w.part_scale[5] = 0.0;
  EXPECT_DOUBLE_EQ(replay(t, w).predicted_ns, (37.0 + 5 * 17) * kMs);
  w.scale_typical_only = true;
  EXPECT_DOUBLE_EQ(replay(t, w).predicted_ns, 6.0 * 37 * kMs);
}

TEST(WhatIfReplay, FreeCommunicationKeepsTheWait) {
  // The transfer's 5 ms go; rank 0 still waits 20 ms for rank 1: 32 ms steps, never less.
  WhatIf w;
  w.transfer_scale = 0;
  const auto r = replay(two_ranks(20), w);
  EXPECT_DOUBLE_EQ(r.predicted_ns, 2.0 * 32 * kMs);
  // Half as slow a transfer: 2.5 ms saved.
  w.transfer_scale = 0.5;
  EXPECT_DOUBLE_EQ(replay(two_ranks(20), w).predicted_ns, 2.0 * 34.5 * kMs);
}

TEST(WhatIfReplay, FasterComputationShrinksTheWorkBeforeAndAfterTheCollective) {
  // Compute halved: rank 0 arrives at 5, rank 1 at 15, transfer to 20, 1 ms after: 21 ms.
  WhatIf w;
  w.part_scale[kCompute] = 0.5;
  EXPECT_DOUBLE_EQ(replay(two_ranks(20), w).predicted_ns, 2.0 * 21 * kMs);
}

TEST(WhatIfReplay, HiddenCommunicationGainsNothingWhenFree) {
  // One rank computing 30 ms past its arrival while the 5 ms transfer runs: never blocked.
  RunTimeline t;
  scaleprof::tables::TimelineCall call;
  call.ranks = {{0, 10 * kMs, 15 * kMs}, {1, 10 * kMs, 15 * kMs}};
  t.calls.push_back(call);
  for (int64_t rank : {0, 1}) {
    TimelineStep s{rank, 0, 0, {}};
    s.joins = {TimelineJoin{0, 10 * kMs, parts(10, 0), {}}, TimelineJoin{-1, 40 * kMs, parts(30, 0), {}}};
    t.steps.push_back(s);
  }
  WhatIf w;
  w.transfer_scale = 0;
  EXPECT_DOUBLE_EQ(replay(t, w).predicted_ns, replay(t, WhatIf{}).measured_ns);
}

TEST(WhatIfReplay, TheSlowestRankIsTheOneWhoseWorkExceedsTheOthers) {
  const auto slow = scaleprof::analysis::slowest_rank(two_ranks(20, 2));
  EXPECT_EQ(slow.rank, 1);
  EXPECT_DOUBLE_EQ(slow.excess_ns, 2.0 * 20 * kMs);
}

TEST(WhatIfSpecs, TheDocumentedTextsParse) {
  auto spec = [](const char* text) {
    auto s = parse_what_if(text);
    EXPECT_TRUE(s.ok()) << text;
    return s.ok() ? s.value() : WhatIfSpec{};
  };
  EXPECT_EQ(spec("rank 1 at median").kind, WhatIfSpec::Kind::kRankAtMedian);
  EXPECT_EQ(spec("Rank 12 at median").rank, 12);
  EXPECT_EQ(spec("stragglers at median").kind, WhatIfSpec::Kind::kStragglersAtMedian);
  EXPECT_EQ(spec("communication free").scale, 0.0);
  EXPECT_EQ(spec("comm x2 faster").scale, 0.5);
  EXPECT_EQ(spec("communication 4x faster").scale, 0.25);
  EXPECT_EQ(spec("data loading at base").kind, WhatIfSpec::Kind::kPartAtBase);
  EXPECT_EQ(spec("optimizer 2x faster").part, 4);
  EXPECT_EQ(spec("host overhead free").part, 5);
  for (const char* bad : {"", "rank x at median", "rank -1 at median", "communication 0.5x faster",
                          "communication 0x faster", "gpu 2x", "computation nanx faster", "optimizer faster"}) {
    auto s = parse_what_if(bad);
    EXPECT_FALSE(s.ok()) << bad;
    if (!s.ok()) {
      EXPECT_EQ(s.error().kind, scaleprof::ErrorKind::kUsage);
    }
  }
}

// A scale of `runs` copies of `t`, `seconds` per epoch, all of it in the profiled steps.
WhatIfScale scale_of(int64_t workers, double seconds, const std::vector<const RunTimeline*>& runs) {
  WhatIfScale s;
  s.workers = workers;
  s.seconds = seconds;
  s.runs = runs;
  return s;
}

TEST(WhatIfGains, TheStragglerIsWorthWhatRemovingItSaves) {
  // One worker: a 20 ms step of computation alone; two workers: each rank computes 10 ms (it shrank),
  // rank 1 20 ms more, then the 5 ms transfer and 2 ms. An epoch is 10 such steps.
  RunTimeline one;
  one.steps.push_back(TimelineStep{0, 0, 0, {TimelineJoin{-1, 24 * kMs, parts(24, 0), {}}}});
  const RunTimeline two = two_ranks(20);
  const WhatIfScale base = scale_of(1, 0.24, {&one});
  const WhatIfScale at = scale_of(2, 0.37, {&two});
  ScaleLoss loss;
  loss.n0 = 1;
  loss.n1 = 2;
  loss.t0 = 0.24;
  loss.t1 = 0.37;
  loss.lost = 1.0 - 0.24 / (2 * 0.37);
  scaleprof::analysis::add_what_if_gains(base, at, &loss);
  auto gain = [&](const char* name) {
    for (const auto& g : loss.gains) {
      if (g.name == name) return g;
    }
    ADD_FAILURE() << name;
    return scaleprof::analysis::CauseGain{};
  };
  // The straggler: 20 ms of every 37 ms step.
  EXPECT_NEAR(gain("waiting for stragglers").points, 20.0 / 37.0, 1e-9);
  EXPECT_EQ(gain("waiting for stragglers").rank, 1);
  // Communication: free at one worker, so its whole transfer (5 ms a step) is the gain.
  EXPECT_NEAR(gain("communication").points, 5.0 / 37.0, 1e-9);
  // Computation (12 ms per step on the typical rank, rank 0; 24 ms at one worker): it shrank exactly.
  EXPECT_NEAR(gain("computation").points, 0.0, 1e-9);
  // All at once: 12 ms steps, 25 ms saved: the gains add up (no overlap), the rest what is left.
  EXPECT_NEAR(loss.interaction, 0.0, 1e-9);
  EXPECT_NEAR(loss.all_fixed_epoch_s, 0.12, 1e-9);
  EXPECT_NEAR(loss.gains_rest, loss.lost - 0.25 / 0.37, 1e-9);
  EXPECT_EQ(loss.gains.front().name, "waiting for stragglers");
}

TEST(WhatIfGains, DataLoadingAtTheBaseShrinksByTheSamplesPerWorker) {
  // One rank, one step: 8 ms data loading of 16 ms at one worker; 8 ms of 12 at two, where it should
  // have halved with the samples per worker: fixing it saves 4 ms of the 12.
  RunTimeline one, two;
  one.steps.push_back(TimelineStep{0, 0, 0, {TimelineJoin{-1, 16 * kMs, parts(8, 0, 8), {}}}});
  two.steps.push_back(TimelineStep{0, 0, 0, {TimelineJoin{-1, 12 * kMs, parts(4, 0, 8), {}}}});
  WhatIfScale base = scale_of(1, 0.16, {&one});
  WhatIfScale at = scale_of(2, 0.12, {&two});
  base.samples_per_worker = 100;
  at.samples_per_worker = 50;
  auto spec = parse_what_if("data loading at base");
  ASSERT_TRUE(spec.ok());
  const auto out = apply_what_if(spec.value(), base, at, false);
  ASSERT_TRUE(out.ok);
  EXPECT_NEAR(out.predicted_epoch_s, 0.08, 1e-12);
  EXPECT_NEAR(out.predicted_step_ms, 8.0, 1e-9);
  EXPECT_NEAR(out.step_ms, 12.0, 1e-9);
}

TEST(WhatIfProjection, EachPartIsFittedOnItsOwnAndTheWaitIsKeptPerStep) {
  // One worker: 24 ms computation and 4 ms data loading a step. Two workers: computation halved
  // (10 ms before the all-reduce, 2 after), data loading doubled (8 ms: it slows with its readers),
  // rank 1 20 ms late, a 5 ms transfer: 45 ms steps. Ten steps an epoch at both scales.
  RunTimeline one, two;
  one.steps.push_back(TimelineStep{0, 0, 0, {TimelineJoin{-1, 28 * kMs, parts(24, 0, 4), {}}}});
  for (int s = 0; s < 10; ++s) {
    const int64_t start = s * 45;
    scaleprof::tables::TimelineCall call;
    call.type = "allreduce";
    call.ranks = {{0, (start + 18) * kMs, (start + 43) * kMs}, {1, (start + 38) * kMs, (start + 43) * kMs}};
    two.calls.push_back(call);
    const auto index = static_cast<int64_t>(two.calls.size() - 1);
    two.steps.push_back(TimelineStep{0,
                                     s,
                                     start * kMs,
                                     {TimelineJoin{index, (start + 18) * kMs, parts(10, 0, 8), {}},
                                      TimelineJoin{-1, (start + 45) * kMs, parts(2, 25), {}}}});
    two.steps.push_back(TimelineStep{1,
                                     s,
                                     start * kMs,
                                     {TimelineJoin{index, (start + 38) * kMs, parts(30, 0, 8), {}},
                                      TimelineJoin{-1, (start + 45) * kMs, parts(2, 5), {}}}});
  }
  const auto p = scaleprof::analysis::project_epoch(scale_of(1, 0.28, {&one}), scale_of(2, 0.45, {&two}), 4, false);
  ASSERT_TRUE(p.ok);
  // At four workers, ten steps: computation 0.24 / 4 = 0.06 s (a + b/n through 0.24 and 0.12), data
  // loading 0.16 s (a + b n through 0.04 and 0.08), the 20 ms wait a step kept (0.20 s), the 5 ms
  // transfer x 1.5 (the ring's 2(n-1)/n: 1 at two workers, 1.5 at four) = 0.075 s.
  EXPECT_NEAR(p.predicted_epoch_s, 0.06 + 0.16 + 0.20 + 0.075, 1e-9);
}

TEST(WhatIfNamed, ANamedTargetsTimeInEachSegmentIsWhatItScales) {
  // Rank 1's 30 ms before the all-reduce hold 20 ms of "slow_op": at 2x faster it arrives 10 ms
  // earlier, and the steps (37 ms) end 10 ms earlier on both ranks (rank 0 waited for it).
  RunTimeline t = two_ranks(20, 2);
  t.targets = {"slow_op"};
  for (TimelineStep& st : t.steps) {
    for (TimelineJoin& j : st.joins) j.target_ns = {st.rank == 1 && j.call >= 0 ? 20 * kMs : 0};
  }
  WhatIf w;
  w.target = "slow_op";
  w.target_scale = 0.5;
  EXPECT_DOUBLE_EQ(replay(t, w).predicted_ns, 4.0 * 27 * kMs);
  // Free: never more than the segment's work (40 ms of a 30 ms segment count 30).
  for (TimelineStep& st : t.steps) {
    for (TimelineJoin& j : st.joins) j.target_ns = {st.rank == 1 && j.call >= 0 ? 40 * kMs : 0};
  }
  w.target_scale = 0.0;
  // Rank 1 arrives at once, rank 0 at 10: 10 + 5 + 2 = 17 ms steps.
  EXPECT_DOUBLE_EQ(replay(t, w).predicted_ns, 4.0 * 17 * kMs);
  // A target the timeline does not time changes nothing.
  w.target = "other";
  EXPECT_DOUBLE_EQ(replay(t, w).predicted_ns, replay(t, WhatIf{}).predicted_ns);
}

TEST(WhatIfNamed, NamesParseAsWrittenAndPartsStayParts) {
  auto mm = parse_what_if("aten::mm 2x faster");
  ASSERT_TRUE(mm.ok()) << mm.error().message;
  EXPECT_EQ(mm.value().kind, WhatIfSpec::Kind::kNamed);
  EXPECT_EQ(mm.value().name, "aten::mm");
  EXPECT_DOUBLE_EQ(mm.value().scale, 0.5);
  auto fwd = parse_what_if("  '## forward ##' free ");
  ASSERT_TRUE(fwd.ok());
  EXPECT_EQ(fwd.value().name, "## forward ##");
  EXPECT_DOUBLE_EQ(fwd.value().scale, 0.0);
  auto gemm = parse_what_if("sm90_xmma_gemm_f16 x4 faster");
  ASSERT_TRUE(gemm.ok());
  EXPECT_EQ(gemm.value().name, "sm90_xmma_gemm_f16");
  EXPECT_DOUBLE_EQ(gemm.value().scale, 0.25);
  EXPECT_EQ(parse_what_if("computation 2x faster").value().kind, WhatIfSpec::Kind::kPart);
  EXPECT_EQ(parse_what_if("communication free").value().kind, WhatIfSpec::Kind::kCommunication);
  for (const char* bad : {"aten::mm", "aten::mm 0.5x faster", "'' free", " 2x faster", "aten::mm at base"}) {
    EXPECT_FALSE(parse_what_if(bad).ok()) << bad;
  }
  EXPECT_EQ(
      scaleprof::analysis::what_if_targets({mm.value(), fwd.value(), mm.value(), parse_what_if("idle free").value()}),
      (std::vector<std::string>{"aten::mm", "## forward ##"}));
}

TEST(WhatIfNamed, NamedIntervalsAreTheUnionOfEveryMatchingEvent) {
  scaleprof::testing::HostTraceBuilder b;
  b.annotation("## forward ##", 0, 100);
  b.op("aten::mm", 10, 20);
  b.op("aten::mm", 25, 20);     // overlaps the first: counted once
  b.op("aten::addmm", 60, 10);  // does not contain "aten::mm"
  b.kernel("void gemm_kernel<float>", 50, 30);
  b.op("aten::mm", 85, 5);
  const auto t = b.take();
  const auto iv = scaleprof::analysis::named_intervals(t, {"aten::mm", "gemm", "nothing"});
  ASSERT_EQ(iv.size(), 3u);
  EXPECT_EQ(iv[0], (scaleprof::analysis::Intervals{{10, 45}, {85, 90}}));
  EXPECT_EQ(iv[1], (scaleprof::analysis::Intervals{{50, 80}}));
  EXPECT_TRUE(iv[2].empty());
  EXPECT_EQ(scaleprof::analysis::covered_ns(iv[0], 0, 100), 40);
  EXPECT_EQ(scaleprof::analysis::covered_ns(iv[0], 40, 88), 8);
  EXPECT_EQ(scaleprof::analysis::covered_ns(iv[0], 90, 100), 0);
  EXPECT_EQ(scaleprof::analysis::covered_ns(iv[0], 65, 40), 0);
}

TEST(WhatIfNamed, ATargetThatRanNowhereIsRefused) {
  RunTimeline ran = two_ranks(20, 1), idle = two_ranks(20, 1);
  ran.targets = idle.targets = {"slow_op", "typo_op"};
  for (TimelineStep& st : ran.steps) {
    for (TimelineJoin& j : st.joins) j.target_ns = {st.rank == 1 ? 5 * kMs : 0, 0};
  }
  EXPECT_TRUE(scaleprof::analysis::check_targets_ran({"slow_op"}, {&idle, &ran}).ok());
  const auto typo = scaleprof::analysis::check_targets_ran({"slow_op", "typo_op"}, {&idle, &ran});
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().kind, scaleprof::ErrorKind::kBadInput);
  EXPECT_NE(typo.error().message.find("'typo_op'"), std::string::npos) << typo.error().message;
}

// "all-to-all balanced": two_ranks' collective as an all-to-all whose mean / max bytes per peer pair is
// `balance` (-1: its split sizes not in the trace).
RunTimeline all_to_all(double balance, int steps = 1) {
  RunTimeline t = two_ranks(20, steps);
  for (scaleprof::tables::TimelineCall& c : t.calls) {
    c.type = "alltoall";
    c.alltoall_balance = balance;
  }
  return t;
}

TEST(WhatIfAlltoall, ABalancedAllToAllChangesNothing) {
  WhatIf w;
  w.balance_alltoall = true;
  EXPECT_FALSE(w.changes_nothing());
  const RunTimeline t = all_to_all(1.0, 3);
  const auto r = replay(t, w);
  ASSERT_TRUE(r.ok);
  EXPECT_DOUBLE_EQ(r.predicted_ns, r.measured_ns);
  EXPECT_DOUBLE_EQ(r.predicted_ns, 6.0 * 37 * kMs);
  // Nor does one whose split sizes are unknown, however uneven its messages: nothing to spread.
  EXPECT_DOUBLE_EQ(replay(all_to_all(-1, 3), w).predicted_ns, 6.0 * 37 * kMs);
}

TEST(WhatIfAlltoall, AnImbalancedAllToAllsTransferScalesByMeanOverMax) {
  // Mean / max 0.4: the 5 ms after the last arrival become 2 ms on both ranks; rank 0 still waits the
  // 20 ms for rank 1 (a late arrival is not the split's doing): 34 ms steps, chained.
  WhatIf w;
  w.balance_alltoall = true;
  const auto r = replay(all_to_all(0.4, 3), w);
  ASSERT_TRUE(r.ok);
  EXPECT_DOUBLE_EQ(r.predicted_ns, 6.0 * 34 * kMs);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_DOUBLE_EQ(r.steps[2].predicted_ns, 34.0 * kMs);
  // With communication 2x faster on top, the two scales multiply: 5 x 0.4 x 0.5 = 1 ms.
  w.transfer_scale = 0.5;
  EXPECT_DOUBLE_EQ(replay(all_to_all(0.4, 3), w).predicted_ns, 6.0 * 33 * kMs);
  // Only the all-to-all with splits: the same call as an all-reduce (its balance unset) keeps its 5 ms.
  RunTimeline mixed = all_to_all(0.4, 2);
  mixed.calls[1].type = "allreduce";
  mixed.calls[1].alltoall_balance = -1;
  w.transfer_scale = 1.0;
  EXPECT_DOUBLE_EQ(replay(mixed, w).predicted_ns, 2.0 * (34 + 37) * kMs);
  // Through the spec, on one scale whose epoch is its steps: 3 ms of every 37 ms step.
  auto spec = parse_what_if("all-to-all balanced");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const RunTimeline t = all_to_all(0.4, 3);
  const WhatIfScale one = scale_of(2, 0.37, {&t});
  const auto out = apply_what_if(spec.value(), one, one, false);
  ASSERT_TRUE(out.ok);
  EXPECT_NEAR(out.predicted_epoch_s, 0.34, 1e-12);
  EXPECT_NEAR(out.predicted_step_ms, 34.0, 1e-9);
}

TEST(WhatIfAlltoall, TheSpecParsesAndNeedsAnAllToAllWithSplits) {
  for (const char* text : {"all-to-all balanced", "Alltoall Balanced", " all-to-all balanced "}) {
    auto s = parse_what_if(text);
    ASSERT_TRUE(s.ok()) << text;
    EXPECT_EQ(s.value().kind, WhatIfSpec::Kind::kAlltoallBalanced);
    EXPECT_EQ(s.value().text, std::string(text).find("Alltoall") == 0 ? "Alltoall Balanced" : "all-to-all balanced");
  }
  EXPECT_FALSE(parse_what_if("all-to-all").ok());
  const WhatIfSpec balanced = parse_what_if("all-to-all balanced").value();
  const RunTimeline reduce = two_ranks(20, 1), unknown = all_to_all(-1), even = all_to_all(1.0);
  // No all-to-all, or none whose splits are in the trace: refused, naming the spec.
  for (const std::vector<const RunTimeline*>& runs :
       {std::vector<const RunTimeline*>{&reduce}, {&reduce, &unknown}, {}}) {
    const auto none = scaleprof::analysis::check_what_ifs_apply({balanced}, runs);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().kind, scaleprof::ErrorKind::kBadInput);
    EXPECT_NE(none.error().message.find("'all-to-all balanced'"), std::string::npos) << none.error().message;
  }
  // One balanced all-to-all with splits in any run is enough (it predicts no gain, which is the answer).
  EXPECT_TRUE(scaleprof::analysis::check_what_ifs_apply({balanced}, {&reduce, &even}).ok());
  // Other specs need no all-to-all; a named target still has to have run.
  EXPECT_TRUE(scaleprof::analysis::check_what_ifs_apply({parse_what_if("communication free").value()}, {&reduce}).ok());
  RunTimeline named = two_ranks(20, 1);
  named.targets = {"typo_op"};
  EXPECT_FALSE(scaleprof::analysis::check_what_ifs_apply({parse_what_if("typo_op free").value()}, {&named}).ok());
}

TEST(WhatIfAlltoall, TheTimelineTakesEachAllToAllsBalanceFromItsSplits) {
  // Two ranks, one step of 20 ms cut at 10 ms, where three calls are joins: an all-to-all whose splits
  // were in the trace (max 9000 B to one peer, mean 3000), one whose splits were not, and an all-reduce.
  namespace an = scaleprof::analysis;
  an::CollectiveAnalysis matched;
  auto call = [](const char* type, int64_t at, bool splits) {
    an::MatchedCollective m;
    m.type = type;
    m.group = "0";
    m.status = an::MatchStatus::kMatched;
    m.ranks = {{0, at, at + 2}, {1, at, at + 2}};
    if (std::string(type) == "alltoall") {
      m.peer_max = 9000;
      m.peer_mean = 3000;
      m.peer_splits = splits;
    }
    return m;
  };
  matched.calls = {call("alltoall", 4, true), call("alltoall", 8, false), call("allreduce", 12, false)};
  std::vector<an::RankDecomposition> d(2);
  for (an::RankDecomposition& r : d) {
    r.steps = {an::StepDecomposition{0, 0, 20, {}}};
    for (int64_t at : {4, 8, 12}) r.cuts.push_back(an::StepCut{at, 0, {}});
  }
  const std::vector<scaleprof::engine::RankSteps> ranks = {{0, &d[0], nullptr}, {1, &d[1], nullptr}};
  const RunTimeline t = scaleprof::engine::build_step_timeline(ranks, matched);
  ASSERT_EQ(t.calls.size(), 3u);
  EXPECT_DOUBLE_EQ(t.calls[0].alltoall_balance, 3000.0 / 9000.0);
  EXPECT_DOUBLE_EQ(t.calls[1].alltoall_balance, -1);
  EXPECT_DOUBLE_EQ(t.calls[2].alltoall_balance, -1);
}

}  // namespace

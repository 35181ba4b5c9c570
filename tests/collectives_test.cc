// Collectives across ranks: type and size rules, matching (Seq, steps, order; never by guess), clock
// alignment, and the real GPU traces in ../shared/traces/hta (NCCL kernels with and without metadata).
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "analysis/all_to_all_cost.h"
#include "analysis/alltoall_peers.h"
#include "analysis/collective_calls.h"
#include "analysis/collective_match.h"
#include "analysis/collective_rows.h"
#include "analysis/stragglers.h"
#include "core/time_bounds.h"
#include "engine/partial_results.h"
#include "report/table.h"
#include "report/trace_report.h"
#include "test_paths.h"
#include "trace/trace_set.h"

namespace scaleprof::analysis {
namespace {

namespace fs = std::filesystem;
const fs::path kTraces = fs::path(SCALEPROF_SHARED_DIR) / "traces" / "hta";

TEST(CollectiveTypes, NamesFromKernelsOpsAndMetadata) {
  EXPECT_EQ(canonical_collective_type("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long)"),
            "allreduce");
  EXPECT_EQ(canonical_collective_type("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            "allgather");
  EXPECT_EQ(canonical_collective_type("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)"), "reduce_scatter");
  EXPECT_EQ(canonical_collective_type("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)"), "sendrecv");
  EXPECT_EQ(canonical_collective_type("ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)"), "unknown");
  EXPECT_EQ(canonical_collective_type("gloo:all_reduce"), "allreduce");
  EXPECT_EQ(canonical_collective_type("gloo:broadcast"), "broadcast");
  EXPECT_EQ(canonical_collective_type("_allgather_base"), "allgather");
  EXPECT_EQ(canonical_collective_type("reduce_scatter_tensor_coalesced"), "reduce_scatter");
  EXPECT_EQ(canonical_collective_type("all_to_allv"), "alltoall");
  EXPECT_EQ(canonical_collective_type("reduce"), "reduce");
  EXPECT_EQ(canonical_collective_type("aten::mm"), "");
  EXPECT_EQ(dtype_bytes("Float"), 4);
  EXPECT_EQ(dtype_bytes("BFloat16"), 2);
  EXPECT_EQ(dtype_bytes("c10::Half"), 2);
  EXPECT_EQ(dtype_bytes("long int"), 8);
  EXPECT_EQ(dtype_bytes("unsigned char"), 1);
  EXPECT_FALSE(dtype_bytes("Quaternion").has_value());
  EXPECT_DOUBLE_EQ(busbw_factor("allreduce", 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor("allgather", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor("alltoall", 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busbw_factor("broadcast", 8), 1.0);
}

// Shard files carry the canonical group key; the listed pg_config ranks come back as the same key and
// are written as a list again, byte for byte. A key in another form, or a negative rank, is an error.
TEST(CollectiveCalls, ShardGroupRanksRoundTripAndAreChecked) {
  auto shard = [](const std::string& key, const std::string& pg_ranks) {
    return "{\"format\":\"scaleprof-partial\",\"version\":1,\"report\":\"collectives\",\"ranks\":[\n"
           "{\"rank\":0,\"path\":\"r0.json\",\"host\":\"h\",\"world_size\":4,\"gpu\":false,\"groups\":[[\"0\","
           "\"default_pg\",4,[" +
           pg_ranks + "]]],\"calls\":[\n[\"allreduce\",\"0\",\"" + key +
           "\",4,-1,1,4096,\"float\",1000,21000,false,[],[]]],\"steps\":[]}\n]}\n";
  };
  const std::string good = shard("0-3", "0,1,2,3");
  auto parsed = engine::parse_partial("s.json", good);
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed.value().ranks.size(), 1u);
  EXPECT_EQ(parsed.value().ranks[0].groups.at(0).ranks, "0-3");
  EXPECT_EQ(parsed.value().ranks[0].calls.at(0).group_ranks, "0-3");
  EXPECT_EQ(engine::write_partial(parsed.value()), good);
  for (const auto& [key, pg] :
       {std::pair<std::string, std::string>{"0,1,2,3", "0,1,2,3"}, {"3-0", "0,1,2,3"}, {"0-3", "0,-1"}}) {
    auto bad = engine::parse_partial("s.json", shard(key, pg));
    ASSERT_FALSE(bad) << key << " " << pg;
    EXPECT_NE(bad.error().message.find("s.json: ranks[0]."), std::string::npos) << bad.error().message;
  }
}

// Group rank lists are one short key whatever the group size: runs of consecutive ranks as ranges.
TEST(CollectiveCalls, RankListsAreCompact) {
  std::vector<int64_t> all(1024);
  for (int64_t r = 0; r < 1024; ++r) all[static_cast<size_t>(r)] = r;
  EXPECT_EQ(format_rank_list(all), "0-1023");
  EXPECT_EQ(format_rank_list({0, 1, 2, 5, 8, 9}), "0-2,5,8-9");
  EXPECT_EQ(format_rank_list({3}), "3");
  EXPECT_EQ(format_rank_list({}), "");
  EXPECT_EQ(parse_rank_list("0-1023")->size(), 1024u);
  EXPECT_EQ(*parse_rank_list("0-2,5,8-9"), (std::vector<int64_t>{0, 1, 2, 5, 8, 9}));
  EXPECT_TRUE(parse_rank_list("")->empty());
  for (const char* bad : {"5-3", "0,,1", "0,", ",0", "a", "0-", "-1", "0-99999999999", "1099511627776"}) {
    EXPECT_FALSE(parse_rank_list(bad).has_value()) << bad;
  }
}

CollectiveCall call(std::string type, int64_t start, int64_t end, int64_t seq = -1, int64_t step = -1) {
  CollectiveCall c;
  c.type = std::move(type);
  c.group = "0";
  c.group_ranks = "0-1";
  c.group_size = 2;
  c.seq = seq;
  c.step = step;
  c.bytes = 4000;
  c.start_ns = start;
  c.end_ns = end;
  c.device = true;
  return c;
}

RankCollectives rank(int64_t r, std::vector<CollectiveCall> calls, std::string host = "") {
  RankCollectives out;
  out.rank = r;
  out.host = std::move(host);
  out.gpu = true;
  out.calls = std::move(calls);
  return out;
}

TEST(CollectiveMatch, LatencySkewWaitAndBandwidth) {
  // Rank 1 arrives 300 ns late; both leave together at 1400.
  const CollectiveAnalysis a =
      match_collectives({rank(0, {call("allreduce", 0, 1400)}), rank(1, {call("allreduce", 300, 1400)})});
  ASSERT_EQ(a.calls.size(), 1u);
  const MatchedCollective& m = a.calls[0];
  EXPECT_EQ(m.status, MatchStatus::kMatched);
  EXPECT_EQ(m.latency_ns, 1100);
  EXPECT_EQ(m.skew_ns, 300);
  EXPECT_EQ(m.last_rank, 1);
  EXPECT_EQ(m.ranks[0].wait_ns, 300);
  EXPECT_EQ(m.ranks[1].wait_ns, 0);
  EXPECT_DOUBLE_EQ(m.algbw_gbps, 4000.0 / 1100.0);
  EXPECT_DOUBLE_EQ(m.busbw_gbps, 4000.0 / 1100.0);  // 2(n-1)/n = 1 for n = 2
}

TEST(CollectiveMatch, SeqBeatsCallOrder) {
  // Rank 0's profile missed Seq 7: Seq pairs 8 with 8 although the call orders differ.
  const CollectiveAnalysis a =
      match_collectives({rank(0, {call("allreduce", 100, 200, 8)}),
                         rank(1, {call("allreduce", 0, 50, 7), call("allreduce", 110, 200, 8)})});
  int matched = 0, unmatched = 0;
  for (const auto& m : a.calls) {
    if (m.status == MatchStatus::kMatched) {
      ++matched;
      EXPECT_EQ(m.seq, 8);
      EXPECT_EQ(m.skew_ns, 10);
    } else {
      ++unmatched;
      EXPECT_EQ(m.seq, 7);
    }
  }
  EXPECT_EQ(matched, 1);
  EXPECT_EQ(unmatched, 1);
}

TEST(CollectiveMatch, DifferentCallCountsWithoutSeqOrStepsAreNotPaired) {
  const CollectiveAnalysis a = match_collectives(
      {rank(0, {call("allreduce", 100, 200)}), rank(1, {call("allreduce", 0, 50), call("allreduce", 110, 200)})});
  for (const auto& m : a.calls) {
    EXPECT_EQ(m.status, MatchStatus::kUnmatched);
    EXPECT_EQ(m.latency_ns, -1);
  }
}

TEST(CollectiveMatch, StepsAlignProfilerWindowsThatStartApart) {
  // Rank 1 recorded one more step (5) than rank 0: step 6's calls still pair.
  const CollectiveAnalysis a =
      match_collectives({rank(0, {call("allreduce", 1000, 1200, -1, 6)}),
                         rank(1, {call("allreduce", 0, 100, -1, 5), call("allreduce", 1050, 1200, -1, 6)})});
  int matched = 0;
  for (const auto& m : a.calls) {
    if (m.status == MatchStatus::kMatched) {
      ++matched;
      EXPECT_EQ(m.step, 6);
      EXPECT_EQ(m.latency_ns, 150);
    }
  }
  EXPECT_EQ(matched, 1);
}

TEST(CollectiveMatch, TypeDisagreementIsReportedNotPaired) {
  const CollectiveAnalysis a =
      match_collectives({rank(0, {call("allreduce", 0, 100)}), rank(1, {call("broadcast", 0, 100)})});
  ASSERT_EQ(a.calls.size(), 1u);
  EXPECT_EQ(a.calls[0].status, MatchStatus::kUnmatched);
  EXPECT_NE(a.calls[0].reason.find("disagree"), std::string::npos);
}

TEST(CollectiveMatch, HostClocksAlignOnEndTimes) {
  // Host b's clock runs 5 ms ahead; the calls end together in true time.
  std::vector<CollectiveCall> a_calls, b_calls;
  for (int i = 0; i < 5; ++i) {
    const int64_t t = i * 1'000'000;
    a_calls.push_back(call("allreduce", t, t + 500'000, i));
    b_calls.push_back(call("allreduce", t + 5'000'000 + 200'000, t + 5'000'000 + 500'000 + 7, i));
  }
  const CollectiveAnalysis a = match_collectives({rank(0, a_calls, "host-a"), rank(1, b_calls, "host-b")});
  ASSERT_EQ(a.clocks.size(), 2u);
  EXPECT_EQ(a.clocks[1].node, "host-b");
  EXPECT_EQ(a.clocks[1].offset_ns, 5'000'007);
  EXPECT_EQ(a.alignment_error_ns, 0);
  for (const auto& m : a.calls) {
    EXPECT_EQ(m.locality, "inter-node");
    EXPECT_EQ(m.skew_ns, 200'000 - 7);
    EXPECT_EQ(m.last_rank, 1);
  }
}

// Each call's host-b end minus host-a end is 5 ms plus a jitter of -300, 0, 100, 200 or 900 ns: the
// offset is the median (5,000,100), the spread the interquartile range of the differences (200), the
// bounds those causality sets (b started 200 us after a ended at the latest, a 500 us before b ended).
TEST(CollectiveMatch, HostOffsetComesWithItsUncertainty) {
  const int64_t jitter[] = {-300, 0, 100, 200, 900};
  std::vector<CollectiveCall> a_calls, b_calls;
  for (int i = 0; i < 5; ++i) {
    const int64_t t = i * 1'000'000;
    a_calls.push_back(call("allreduce", t, t + 500'000, i));
    b_calls.push_back(call("allreduce", t + 5'200'000, t + 5'500'000 + jitter[i], i));
  }
  for (bool align : {true, false}) {
    MatchOptions options;
    options.align = align;
    const CollectiveAnalysis a = match_collectives({rank(0, a_calls, "host-a"), rank(1, b_calls, "host-b")}, options);
    ASSERT_EQ(a.clocks.size(), 2u);
    const HostClock& b = a.clocks[1];
    EXPECT_EQ(b.estimate_ns, 5'000'100);
    EXPECT_EQ(b.spread_ns, 200);  // quartiles 0 and 200
    EXPECT_EQ(b.samples, 5);
    EXPECT_EQ(b.lowest_ns, 5'200'000 - 500'000);
    EXPECT_EQ(b.highest_ns, 5'500'000 - 300);
    EXPECT_FALSE(b.bounds_conflict);
    EXPECT_EQ(b.offset_ns, align ? 5'000'100 : 0);
    EXPECT_EQ(a.aligned, align);
    // Skew: aligned, b starts 200 us after a less the 100 ns of the estimate; raw, 5.2 ms later.
    for (const auto& m : a.calls) EXPECT_EQ(m.skew_ns, align ? 200'000 - 100 : 5'200'000);
  }
}

// Ends that are not simultaneous (gloo's ring: host b's rank always ends 2 us after host a's) would
// put the offset at 2 us; a call where a started late shows b cannot be ahead by more than 150 ns.
TEST(CollectiveMatch, HostOffsetStaysWithinCausalBounds) {
  const CollectiveAnalysis a = match_collectives(
      {rank(0,
            {call("allreduce", 0, 1000, 0), call("allreduce", 10'000, 11'000, 1), call("allreduce", 22'000, 22'100, 2)},
            "host-a"),
       rank(1,
            {call("allreduce", 900, 3000, 0), call("allreduce", 10'900, 13'000, 1),
             call("allreduce", 20'000, 22'150, 2)},
            "host-b")});
  ASSERT_EQ(a.clocks.size(), 2u);
  EXPECT_EQ(a.clocks[1].lowest_ns, -100);
  EXPECT_EQ(a.clocks[1].highest_ns, 150);
  EXPECT_EQ(a.clocks[1].estimate_ns, 150);  // the median, 2000, clamped
  EXPECT_EQ(a.clocks[1].offset_ns, 150);
}

TEST(CollectiveMatch, MethodPerGroupAndOrderAloneIsUncertain) {
  auto in_group = [](CollectiveCall c, std::string group) {
    c.group = std::move(group);
    return c;
  };
  // Group "s": Seq; "p": steps; "o": order alone, equal counts (paired, uncertain); "u": order alone,
  // different counts (not paired, so nothing uncertain).
  const CollectiveAnalysis a = match_collectives(
      {rank(0, {in_group(call("allreduce", 0, 10, 3), "s"), in_group(call("allreduce", 20, 30, -1, 1), "p"),
                in_group(call("allreduce", 40, 50), "o"), in_group(call("allreduce", 60, 70), "u")}),
       rank(1, {in_group(call("allreduce", 0, 10, 3), "s"), in_group(call("allreduce", 20, 30, -1, 1), "p"),
                in_group(call("allreduce", 40, 50), "o"), in_group(call("allreduce", 55, 58), "u"),
                in_group(call("allreduce", 60, 70), "u")})});
  ASSERT_EQ(a.groups.size(), 4u);
  std::map<std::string, const GroupMatching*> by_name;
  for (const auto& g : a.groups) by_name[g.group] = &g;
  EXPECT_EQ(match_method_name(by_name.at("s")->method), "seq");
  EXPECT_EQ(match_method_name(by_name.at("p")->method), "step position");
  EXPECT_EQ(match_method_name(by_name.at("o")->method), "order");
  EXPECT_EQ(match_method_name(by_name.at("u")->method), "order");
  EXPECT_FALSE(by_name.at("s")->uncertain);
  EXPECT_FALSE(by_name.at("p")->uncertain);
  EXPECT_TRUE(by_name.at("o")->uncertain);
  EXPECT_FALSE(by_name.at("u")->uncertain);
  EXPECT_EQ(by_name.at("o")->matched, 1);
  EXPECT_EQ(by_name.at("u")->matched, 0);
  EXPECT_EQ(by_name.at("u")->calls, 2);
  EXPECT_EQ(by_name.at("o")->ranks_loaded, 2);
  for (const auto& m : a.calls) {
    EXPECT_EQ(m.uncertain, m.group == "o") << m.group;
    EXPECT_EQ(m.method == MatchMethod::kOrder, m.group == "o" || m.group == "u") << m.group;
  }
}

// A group whose other members were not loaded is still placed by its member list and the node map:
// rank 1 shares rank 0's node with 2 ranks per node, not with 1. A loaded member placed by its host
// name leaves the call unlabelled ("node 0" and a host name cannot be compared).
TEST(CollectiveMatch, IncompleteCallsPlacedByTheMemberList) {
  auto locality = [](int64_t gpus_per_node, const std::string& host) {
    MatchOptions options;
    options.gpus_per_node = gpus_per_node;
    const CollectiveAnalysis a = match_collectives({rank(0, {call("allreduce", 0, 100)}, host)}, options);
    EXPECT_EQ(a.calls.at(0).status, MatchStatus::kIncomplete);
    return a.calls.at(0).locality;
  };
  EXPECT_EQ(locality(2, ""), "intra-node");
  EXPECT_EQ(locality(1, ""), "inter-node");
  EXPECT_EQ(locality(0, ""), "");
  EXPECT_EQ(locality(2, "host-a"), "");
}

// The CLI makes each rank's rows compact as soon as the rank is read, in whatever order reading
// finishes, and learns some ranks' numbers only at the end. That must give the report of the whole
// rows taken in rank order, byte for byte.
TEST(CollectiveRowsCompact, StreamedInAnyOrderGiveTheSameReport) {
  static_assert(sizeof(CompactCall) == 48, "the per-call-per-rank row kept for thousands of ranks");
  std::vector<RankCollectives> in_order;
  for (int64_t r = 0; r < 4; ++r) {
    std::vector<CollectiveCall> calls;
    for (int64_t k = 0; k < 6; ++k) {
      const int64_t late = r == 2 ? 40'000 : r * 300;  // rank 2 is the straggler
      CollectiveCall c =
          call(k % 3 == 2 ? "alltoall" : "allreduce", k * 100'000 + late, k * 100'000 + 60'000, -1, k / 2);
      c.group_ranks = "0-3";
      c.group_size = 4;
      if (c.type == "alltoall") {
        c.in_split_bytes = {1000, 1000, 1000, 1000 + 500 * r};
        c.out_split_bytes = {1000, 2000, 1000, 1000};
      }
      calls.push_back(c);
    }
    calls.push_back(call("sendrecv", 900'000, 950'000));
    RankCollectives rc = rank(r, calls, r < 2 ? "host-a" : "host-b");
    for (int64_t st = 0; st < 3; ++st) {
      StepRow row;
      row.step = st;
      row.start_ns = st * 200'000;
      row.end_ns = row.start_ns + 200'000;
      row.host_busy_ns = 1000 * (r + 1);
      rc.steps.push_back(row);
    }
    in_order.push_back(std::move(rc));
  }
  CollectiveRows streamed;
  const std::vector<size_t> arrival = {2, 0, 3, 1};
  for (size_t i : arrival) {
    RankCollectives r = in_order[i];
    r.rank = -1;  // numbered once every file is read
    streamed.add(r);
  }
  for (size_t k = 0; k < arrival.size(); ++k) streamed.set_rank(k, in_order[arrival[k]].rank);
  streamed.keep_sorted([](int64_t) { return true; });
  ASSERT_EQ(streamed.call_rows(), 28u);

  report::TraceReportOptions options;
  report::RenderOptions json;
  json.format = report::Format::kJson;
  for (bool stragglers : {false, true}) {
    const report::TraceReport whole =
        stragglers ? report::stragglers_tables(in_order, options) : report::collectives_tables(in_order, options);
    const report::TraceReport compact =
        stragglers ? report::stragglers_tables(streamed, options) : report::collectives_tables(streamed, options);
    const std::string a = report::render_many(whole.tables, whole.keys, json);
    const std::string b = report::render_many(compact.tables, compact.keys, json);
    EXPECT_EQ(a, b);
    // Not vacuous: rank 2 is the straggler; rank 3 sends the most in the all-to-alls.
    EXPECT_NE(a.find(stragglers ? "{\"rank\": 2, \"calls\": 6, \"arrived_last\": 6" : "\"send_max\": 5500"),
              std::string::npos)
        << a;
  }
}

// All-to-all per peer (all_to_all_cost.h): the pairs of distinct ranks, a rank's split to itself left
// out, a rank without splits counted as message size / n per member, and the cost latency x (1 - mean / max).
TEST(AlltoallCost, PeerImbalanceAndItsCost) {
  auto a2a = [](int64_t start, std::vector<int64_t> to_peer, int64_t bytes) {
    CollectiveCall c = call("alltoall", start, 10'000, 7, 3);
    c.group = "ep";
    c.group_ranks = "4-6";  // a subgroup: rank 4 is member 0
    c.group_size = 3;
    c.bytes = bytes;
    c.in_split_bytes = std::move(to_peer);
    c.annotation = "moe.layers.0";
    return c;
  };
  // Rank 4 sends rank 5 9000 B and itself 100 000 (a local copy, not a peer); rank 5 sends 3000 to each;
  // rank 6's splits are not in the trace: 6000 B / 3 = 2000 per member.
  const std::vector<RankCollectives> ranks = {rank(4, {a2a(0, {100'000, 9000, 1000}, 110'000)}),
                                              rank(5, {a2a(1000, {3000, 3000, 3000}, 9000)}),
                                              rank(6, {a2a(2000, {}, 6000)})};
  const CollectiveAnalysis a = match_collectives(ranks);
  ASSERT_EQ(a.calls.size(), 1u);
  const MatchedCollective& m = a.calls[0];
  ASSERT_EQ(m.status, MatchStatus::kMatched) << m.reason;
  EXPECT_EQ(m.latency_ns, 8000);
  EXPECT_EQ(m.peer_max, 9000);
  EXPECT_DOUBLE_EQ(m.peer_mean, (9000 + 1000 + 3000 + 3000 + 2000 + 2000) / 6.0);
  EXPECT_DOUBLE_EQ(m.peer_imbalance, 9000 / m.peer_mean);
  EXPECT_TRUE(m.peer_rows.empty());  // rank 6's row is unknown
  EXPECT_EQ(m.annotation, "moe.layers.0");
  // Splits were in the trace (two of three ranks): what balancing would scale the call by is mean / max.
  EXPECT_TRUE(m.peer_splits);
  EXPECT_DOUBLE_EQ(alltoall_balanced_share(m), m.peer_mean / 9000);
  {
    // No rank's splits: nothing seen to balance.
    std::vector<RankCollectives> sizes_only = ranks;
    for (RankCollectives& r : sizes_only) r.calls[0].in_split_bytes.clear();
    const CollectiveAnalysis c = match_collectives(sizes_only);
    ASSERT_EQ(c.calls.size(), 1u);
    EXPECT_FALSE(c.calls[0].peer_splits);
  }
  const AlltoallCosts costs = alltoall_costs(a);
  ASSERT_EQ(costs.calls.size(), 1u);
  EXPECT_EQ(costs.calls[0].cost_ns, std::llround(8000 * (1 - m.peer_mean / 9000)));
  ASSERT_EQ(costs.by_step.size(), 1u);
  EXPECT_EQ(costs.by_step[0].step, 3);
  EXPECT_EQ(costs.by_step[0].cost_ns, costs.calls[0].cost_ns);
  ASSERT_EQ(costs.by_annotation.size(), 1u);
  EXPECT_EQ(costs.by_annotation[0].key, "moe.layers.0");

  // Every row known: the matrix is kept, by rank then member; balanced splits cost nothing.
  std::vector<RankCollectives> even = ranks;
  even[0].calls[0].in_split_bytes = {5, 3000, 3000};
  even[2].calls[0].in_split_bytes = {3000, 3000, 0};
  const CollectiveAnalysis b = match_collectives(even);
  const MatchedCollective& e = b.calls[0];
  EXPECT_TRUE(e.peer_rows_whole);
  EXPECT_EQ(e.peer_rows, (std::vector<AlltoallPeerRow>{{4, 4, 5},
                                                       {4, 5, 3000},
                                                       {4, 6, 3000},
                                                       {5, 4, 3000},
                                                       {5, 5, 3000},
                                                       {5, 6, 3000},
                                                       {6, 4, 3000},
                                                       {6, 5, 3000},
                                                       {6, 6, 0}}));
  EXPECT_DOUBLE_EQ(e.peer_imbalance, 1.0);
  EXPECT_EQ(alltoall_costs(b).calls[0].cost_ns, 0);

  // Shards carry the split bytes and the annotation.
  engine::PartialResults partial;
  partial.report = "collectives";
  partial.ranks = ranks;
  const std::string text = engine::write_partial(partial);
  auto parsed = engine::parse_partial("s.json", text);
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value().ranks.at(2).calls.at(0).annotation, "moe.layers.0");
  EXPECT_EQ(parsed.value().ranks.at(0).calls.at(0).in_split_bytes, (std::vector<int64_t>{100'000, 9000, 1000}));
  EXPECT_EQ(engine::write_partial(parsed.value()), text);
}

// Sums over calls and ranks of values from input (waits, skews, bytes, split sizes) that would pass
// int64 are left out with a note, never wrapped. Each time lies within the bounds every input keeps.
TEST(CollectiveSums, PastInt64AreLeftOutNotWrapped) {
  std::vector<CollectiveCall> early, late;
  for (int64_t k = 0; k < 2; ++k) {
    // Rank 1 arrives about 7 * 2^59 ns after rank 0 at both calls: the two waits sum past 2^63.
    CollectiveCall a = call("allreduce", kMinTimeNs + k, kMaxTimeNs - 100 + k * 10, k);
    CollectiveCall b = call("allreduce", kMaxTimeNs - 200 + k, kMaxTimeNs - 100 + k * 10, k);
    a.bytes = b.bytes = int64_t{1} << 62;  // two of them pass int64 bytes, and 2^62 B in 100 ns is past int64 MB/s
    early.push_back(a);
    late.push_back(b);
  }
  CollectiveCall split_a = call("alltoall", 0, 1000, 2), split_b = call("alltoall", 0, 1000, 2);
  split_a.in_split_bytes = {int64_t{1} << 62, int64_t{1} << 62};  // past int64 on rank 0
  split_a.out_split_bytes = split_b.in_split_bytes = split_b.out_split_bytes = {10, 10};
  early.push_back(split_a);
  late.push_back(split_b);
  const std::vector<RankCollectives> ranks = {rank(0, early), rank(1, late)};

  const CollectiveAnalysis a = match_collectives(ranks);
  ASSERT_EQ(a.calls.size(), 3u);
  EXPECT_EQ(a.calls[0].status, MatchStatus::kMatched);
  EXPECT_EQ(a.calls[0].skew_ns, kMaxTimeNs - 200 - kMinTimeNs);  // one call's figures are exact
  const MatchedCollective& all_to_all = a.calls[2];
  EXPECT_EQ(all_to_all.type, "alltoall");
  EXPECT_NE(all_to_all.reason.find("split sizes of rank 0 add up past int64 bytes"), std::string::npos)
      << all_to_all.reason;
  EXPECT_EQ(all_to_all.send_min, 20);  // rank 0's sent bytes are left out, rank 1's are kept
  EXPECT_EQ(all_to_all.send_max, 20);

  const StragglerAnalysis s = find_stragglers(ranks, a);
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_FALSE(s.ranks[0].own_wait_exact);  // rank 0 waited twice ~7 * 2^59 ns
  EXPECT_TRUE(s.ranks[1].own_wait_exact);
  EXPECT_FALSE(s.ranks[1].wait_imposed_exact);
  EXPECT_EQ(s.worst_rank, 1);  // the sum past int64 still ranks first

  report::TraceReportOptions options;
  const report::TraceReport c = report::collectives_tables(ranks, options);
  const report::Table& summary = c.tables.at(0);
  EXPECT_NE(summary.title.find("would pass int64"), std::string::npos) << summary.title;
  report::RenderOptions json;
  json.format = report::Format::kJson;
  const std::string summary_json = report::render(summary, json);
  // The allreduce row: mean bytes, skew and wait sums and bandwidths null; the latency sum (100 + 109
  // ns) is exact.
  EXPECT_NE(summary_json.find("\"type\": \"allreduce\""), std::string::npos) << summary_json;
  EXPECT_NE(summary_json.find("\"mean_bytes\": null, \"latency_us\": 0.209, \"skew_us\": null, \"wait_us\": null, "
                              "\"algbw_p50_gbps\": null"),
            std::string::npos)
      << summary_json;
  const report::TraceReport st = report::stragglers_tables(ranks, options);
  const std::string per_rank = report::render(st.tables.at(0), json);
  EXPECT_NE(
      per_rank.find("{\"rank\": 0, \"calls\": 3, \"arrived_last\": 1, \"wait_imposed_us\": 0, \"own_wait_us\": null"),
      std::string::npos)
      << per_rank;
  EXPECT_NE(
      per_rank.find("{\"rank\": 1, \"calls\": 3, \"arrived_last\": 2, \"wait_imposed_us\": null, \"own_wait_us\": 0"),
      std::string::npos)
      << per_rank;
  EXPECT_NE(st.tables.at(0).title.find("would pass int64"), std::string::npos);
}

// Shard files are held to the trace reader's time bounds, so merged rows cannot wrap either.
TEST(CollectiveSums, ShardTimesOutsideTheInputBoundsAreRefused) {
  auto shard = [](int64_t start) {
    return "{\"format\":\"scaleprof-partial\",\"version\":1,\"report\":\"collectives\",\"ranks\":[\n"
           "{\"rank\":0,\"path\":\"r0.json\",\"host\":\"h\",\"world_size\":2,\"gpu\":false,\"groups\":[],"
           "\"calls\":[\n[\"allreduce\",\"0\",\"0-1\",2,-1,1,4096,\"float\"," +
           std::to_string(start) + ",21000,false,[],[]]],\"steps\":[]}\n]}\n";
  };
  EXPECT_TRUE(engine::parse_partial("s.json", shard(kMinTimeNs)));
  auto bad = engine::parse_partial("s.json", shard(kMinTimeNs - 1));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("s.json: ranks[0].calls[0]: a time outside"), std::string::npos)
      << bad.error().message;
}

// Traces in the real Kineto shape (record_param_comms carrying the metadata, the NCCL kernel linked
// by External id, as PyTorch 2.x writes them), written by the test: the reader keeps `Seq` and the
// all-to-all split sizes. Rank 0's profile starts one call later than rank 1's and there are no
// ProfilerSteps, so only Seq can pair the calls; the all-to-all-v sends unequal volumes.
TEST(CollectivesFromKinetoArgs, SeqPairsCallsAndSplitSizesGiveAllToAllVolumes) {
  const fs::path dir = fs::temp_directory_path() / ("scaleprof-seq-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct Call {
    int64_t seq;
    const char* name;  // Collective name
    int64_t in_nelems, out_nelems;
    const char *in_split, *out_split;
    int64_t start_us, end_us;
  };
  auto write_rank = [&](int rank, const std::vector<Call>& calls) {
    std::string events;
    int64_t id = 100;
    for (const Call& c : calls) {
      ++id;
      events += fmt::format(
          R"({{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": {}, "dur": 5,)"
          R"( "args": {{"External id": {}, "Collective name": "{}", "dtype": "Float", "In msg nelems": {},)"
          R"( "Out msg nelems": {}, "In split size": "{}", "Out split size": "{}", "Group size": 2,)"
          R"( "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]",)"
          R"( "Seq": {}}}}},
)",
          c.start_us - 10, id, c.name, c.in_nelems, c.out_nelems, c.in_split, c.out_split, c.seq);
      events += fmt::format(
          R"k({{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0,)k"
          R"k( "tid": 7, "ts": {}, "dur": {}, "args": {{"External id": {}, "device": 0, "stream": 7, "correlation": {}}}}},
)k",
          c.start_us, c.end_us - c.start_us, id, id);
    }
    events.resize(events.size() - 2);  // the last ",\n"
    const std::string text =
        fmt::format(R"({{"schemaVersion": 1, "distributedInfo": {{"backend": "nccl", "rank": {}, "world_size": 2}},)"
                    R"( "traceEvents": [
{}
]}})",
                    rank, events);
    std::ofstream(dir / fmt::format("rank-{}.json", rank)) << text;
  };
  // Rank 0 missed Seq 7. Seq 8: all-reduce of 1,024 floats. Seq 9: all-to-all-v of rows of 8 floats,
  // rank 0 sending one row to each, rank 1 3 rows to rank 0 and 1 to itself.
  write_rank(0, {{8, "allreduce", 1024, 1024, "[]", "[]", 1000, 1100},
                 {9, "all_to_allv", 16, 32, "[1, 1]", "[1, 3]", 2000, 2300}});
  write_rank(1, {{7, "allreduce", 1024, 1024, "[]", "[]", 500, 600},
                 {8, "allreduce", 1024, 1024, "[]", "[]", 1040, 1100},
                 {9, "all_to_allv", 32, 16, "[3, 1]", "[1, 1]", 2100, 2300}});
  auto set = trace::load_traces({dir.string()});
  fs::remove_all(dir);
  ASSERT_TRUE(set.ok()) << set.error().message;
  ASSERT_EQ(set.value().ranks.size(), 2u);
  const trace::RankTrace& r0 = set.value().ranks[0];
  ASSERT_EQ(r0.collectives.size(), 2u);
  EXPECT_EQ(r0.collectives.seq[1], 9);
  EXPECT_EQ(r0.strings.view(r0.collectives.in_split_sizes[1]), "[1, 1]");
  EXPECT_EQ(r0.strings.view(r0.collectives.out_split_sizes[1]), "[1, 3]");

  std::vector<RankCollectives> ranks;
  for (const auto& r : set.value().ranks) ranks.push_back(extract_collectives(r));
  ASSERT_EQ(ranks[0].calls.size(), 2u);
  EXPECT_EQ(ranks[0].calls[0].seq, 8);
  EXPECT_EQ(ranks[0].calls[1].type, "alltoall");
  EXPECT_EQ(ranks[0].calls[1].in_split_bytes, (std::vector<int64_t>{32, 32}));  // rows of 8 floats
  EXPECT_EQ(ranks[0].calls[1].out_split_bytes, (std::vector<int64_t>{32, 96}));
  EXPECT_EQ(ranks[1].calls[2].in_split_bytes, (std::vector<int64_t>{96, 32}));
  EXPECT_EQ(ranks[1].calls[2].out_split_bytes, (std::vector<int64_t>{32, 32}));

  const CollectiveAnalysis a = match_collectives(ranks);
  int matched = 0;
  for (const MatchedCollective& m : a.calls) {
    if (m.seq == 7) {
      EXPECT_EQ(m.status, MatchStatus::kUnmatched);
      continue;
    }
    EXPECT_EQ(m.status, MatchStatus::kMatched) << m.seq << " " << m.reason;
    ++matched;
    if (m.seq == 8) {
      EXPECT_EQ(m.position, 8);
      EXPECT_EQ(m.skew_ns, 40'000);
      EXPECT_EQ(m.latency_ns, 60'000);
      EXPECT_EQ(m.bytes, 4096);
    } else {
      EXPECT_EQ(m.type, "alltoall");
      EXPECT_EQ(m.bytes, 128);     // the largest message (rank 1's), not the first rank's
      EXPECT_EQ(m.send_min, 64);   // rank 0: 2 rows
      EXPECT_EQ(m.send_max, 128);  // rank 1: 4 rows
      EXPECT_EQ(m.recv_min, 64);
      EXPECT_EQ(m.recv_max, 128);
      EXPECT_DOUBLE_EQ(m.imbalance, 128.0 / 96.0);
    }
  }
  EXPECT_EQ(matched, 2);
}

class CollectivesOnRealTraces : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::is_directory(kTraces)) GTEST_SKIP() << "shared traces not found at " << kTraces;
  }
  static std::vector<RankCollectives> load(const std::string& dir) {
    auto set = trace::load_traces({(kTraces / dir).string()});
    EXPECT_TRUE(set.ok());
    std::vector<RankCollectives> out;
    for (const auto& r : set.value().ranks) out.push_back(extract_collectives(r));
    return out;
  }
};

// One rank of a two-rank NCCL job whose kernels carry the collective metadata: the group is
// incomplete, the rank's own kernel durations give the bandwidth. TraceLens 1.0 reports the
// 6,637,568-float all-reduce as 25.32 MiB in 2,636.669 us -> 9.378 GiB/s bus bandwidth.
TEST_F(CollectivesOnRealTraces, NcclParserConfigBandwidth) {
  const std::vector<RankCollectives> ranks = load("nccl_parser_config");
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_TRUE(ranks[0].gpu);
  EXPECT_EQ(ranks[0].calls.size(), 21u);  // 15 all-reduce + 6 broadcast kernels
  const CollectiveAnalysis a = match_collectives(ranks);
  bool found = false;
  for (const MatchedCollective& m : a.calls) {
    EXPECT_EQ(m.status, MatchStatus::kIncomplete) << m.reason;
    EXPECT_EQ(m.group_size, 2);
    if (m.type == "allreduce" && m.bytes == 6637568 * 4 && m.latency_ns == 2'636'669) {
      found = true;
      EXPECT_NEAR(static_cast<double>(m.bytes) / (1 << 20), 25.32, 0.005);
      EXPECT_NEAR(m.busbw_gbps * 1e9 / (1 << 30), 9.378, 0.0005);
      EXPECT_DOUBLE_EQ(m.busbw_gbps, m.algbw_gbps);  // n = 2
    }
  }
  EXPECT_TRUE(found);
}

// TraceLens' report (171dd747) labels every all-reduce of this rank intra_node: the group's members
// [0, 1] on one node of 8 GPUs (the count of the trace's deviceProperties). scaleprof, given the same
// node map, agrees for every call, although rank 1 was not loaded; 1 rank per node puts them apart.
TEST_F(CollectivesOnRealTraces, NcclParserConfigLocalityAsTraceLens) {
  const std::vector<RankCollectives> ranks = load("nccl_parser_config");
  MatchOptions eight;
  eight.gpus_per_node = 8;
  MatchOptions one;
  one.gpus_per_node = 1;
  const CollectiveAnalysis a = match_collectives(ranks, eight);
  ASSERT_EQ(a.calls.size(), 21u);
  for (const MatchedCollective& m : a.calls) EXPECT_EQ(m.locality, "intra-node") << m.position;
  for (const MatchedCollective& m : match_collectives(ranks, one).calls) EXPECT_EQ(m.locality, "inter-node");
  for (const MatchedCollective& m : match_collectives(ranks).calls) EXPECT_EQ(m.locality, "");  // no node map
}

// Ranks 0 and 1 of a 128-rank job: SendRecv kernels without metadata, different sequences on the
// two ranks. Nothing may be paired.
TEST_F(CollectivesOnRealTraces, TraceFilterSendRecvIsNeverPaired) {
  const std::vector<RankCollectives> ranks = load("trace_filter");
  ASSERT_EQ(ranks.size(), 2u);
  const CollectiveAnalysis a = match_collectives(ranks);
  ASSERT_EQ(a.calls.size(), 20u);
  for (const MatchedCollective& m : a.calls) {
    EXPECT_EQ(m.type, "sendrecv");
    EXPECT_EQ(m.status, MatchStatus::kUnmatched);
    EXPECT_EQ(m.ranks.size(), 1u);
    EXPECT_LT(m.latency_ns, 0);
  }
  const StragglerAnalysis s = find_stragglers(ranks, a);
  EXPECT_EQ(s.worst_rank, -1);
}

}  // namespace
}  // namespace scaleprof::analysis

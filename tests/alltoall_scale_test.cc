// All-to-all at many ranks (issue 33): what analysis/alltoall_peers.h retains per rank and call, and the
// per-peer figures it keeps, checked on synthetic groups of hundreds of ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "analysis/all_to_all_cost.h"
#include "analysis/alltoall_peers.h"
#include "analysis/collective_calls.h"
#include "analysis/collective_match.h"
#include "analysis/collective_rows.h"

namespace scaleprof::analysis {
namespace {
// All-to-all at many ranks (alltoall_peers.h): what is retained per rank and call does not grow with the
// group, and the per-peer figures stay those of the whole split matrices.
// Rank r sends `small` bytes to every member and alltoall_big_bytes(r) to member (r + 1) % n; calls of one step each.
int64_t alltoall_big_bytes(int64_t r) {
  return 1000 + 10 * r;
}

std::vector<RankCollectives> ranks_with_alltoalls(int64_t n, int64_t calls, int64_t small) {
  std::vector<RankCollectives> out;
  for (int64_t r = 0; r < n; ++r) {
    RankCollectives rank;
    rank.rank = r;
    rank.gpu = false;
    for (int64_t k = 0; k < calls; ++k) {
      CollectiveCall c;
      c.type = "alltoall";
      c.group = "0";
      c.group_ranks = format_rank_list([&] {
        std::vector<int64_t> all(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
        return all;
      }());
      c.group_size = n;
      c.step = k;
      c.start_ns = k * 1'000'000 + r;  // rank r arrives r ns late
      c.end_ns = k * 1'000'000 + 500'000;
      c.in_split_bytes.assign(static_cast<size_t>(n), small);
      c.in_split_bytes[static_cast<size_t>((r + 1) % n)] = alltoall_big_bytes(r);
      int64_t sent = 0;
      for (int64_t b : c.in_split_bytes) sent += b;
      c.bytes = sent;
      rank.calls.push_back(std::move(c));
    }
    out.push_back(std::move(rank));
  }
  return out;
}

TEST(AlltoallScale, RetainedPerRankAndCallNotPerPair) {
  constexpr int64_t kRanks = 512, kCalls = 6, kSmall = 7;
  const std::vector<RankCollectives> ranks = ranks_with_alltoalls(kRanks, kCalls, kSmall);
  const CollectiveRows rows = compact_rows(ranks);
  // Each rank and call keeps its 8 largest splits and three figures, not its kRanks split sizes: 11 values
  // per rank and call, 11 / 512 of the whole matrices (kRanks² × kCalls).
  const size_t kept = static_cast<size_t>(kRanks * kCalls) * (kAlltoallTopPeers + 3);
  EXPECT_EQ(rows.alltoall_peer_values(), kept);
  EXPECT_LT(rows.alltoall_peer_values() * 40, static_cast<size_t>(kRanks * kRanks * kCalls));

  const CollectiveAnalysis a = match_collectives(rows, MatchOptions{});
  ASSERT_EQ(a.calls.size(), static_cast<size_t>(kCalls));
  // The figures of the whole matrices: over the n(n-1) pairs of distinct ranks.
  int64_t sum = 0, max = 0;
  for (int64_t r = 0; r < kRanks; ++r) {
    sum += alltoall_big_bytes(r) + (kRanks - 2) * kSmall;
    max = std::max(max, alltoall_big_bytes(r));
  }
  const double mean = static_cast<double>(sum) / static_cast<double>(kRanks * (kRanks - 1));
  size_t peer_rows = 0;
  for (const MatchedCollective& m : a.calls) {
    ASSERT_EQ(m.status, MatchStatus::kMatched) << m.reason;
    EXPECT_EQ(m.peer_max, max);
    EXPECT_DOUBLE_EQ(m.peer_mean, mean);
    EXPECT_DOUBLE_EQ(m.peer_imbalance, static_cast<double>(max) / mean);
    // The per-peer rows: the largest of the call, not the kRanks² of the matrix.
    ASSERT_EQ(m.peer_rows.size(), kAlltoallPeerRows);
    EXPECT_FALSE(m.peer_rows_whole);
    for (const AlltoallPeerRow& p : m.peer_rows) {
      EXPECT_EQ(p.peer, (p.rank + 1) % kRanks);  // the big splits are the largest
      EXPECT_EQ(p.bytes, alltoall_big_bytes(p.rank));
    }
    EXPECT_EQ(m.peer_rows.front().rank, kRanks - kAlltoallPeerRows);  // the largest of the big ones
    peer_rows += m.peer_rows.size();
  }
  EXPECT_EQ(peer_rows, kAlltoallPeerRows * kCalls);
  const AlltoallCosts costs = alltoall_costs(a);
  ASSERT_EQ(costs.calls.size(), static_cast<size_t>(kCalls));
  for (const AlltoallCost& c : costs.calls) {
    const MatchedCollective& m = a.calls[c.call];
    EXPECT_EQ(c.cost_ns, std::llround(static_cast<double>(m.latency_ns) * (1.0 - mean / static_cast<double>(max))));
  }
}

// A rank whose number is known only once every file is read (CollectiveRows::set_rank) keeps its split
// sizes until then, and is placed with its final number.
TEST(AlltoallScale, SplitsOfAnUnnumberedRankArePlacedWithItsFinalRank) {
  constexpr int64_t kRanks = 16, kSmall = 7;
  std::vector<RankCollectives> ranks = ranks_with_alltoalls(kRanks, 1, kSmall);
  ranks[2].rank = -1;
  CollectiveRows rows;
  for (const RankCollectives& r : ranks) rows.add(r);
  const size_t summary = kAlltoallTopPeers + 3;
  EXPECT_EQ(rows.alltoall_peer_values(), (kRanks - 1) * summary + kRanks + 3);  // rank 2's 16 splits held
  rows.set_rank(2, 2);
  EXPECT_EQ(rows.alltoall_peer_values(), kRanks * summary);  // and reduced once it has its number
  const CollectiveAnalysis a = match_collectives(rows, MatchOptions{});
  ASSERT_EQ(a.calls.size(), 1u);
  const MatchedCollective& m = a.calls[0];
  int64_t sum = 0;
  for (int64_t r = 0; r < kRanks; ++r) sum += alltoall_big_bytes(r) + (kRanks - 2) * kSmall;
  EXPECT_EQ(m.peer_max, alltoall_big_bytes(kRanks - 1));
  // Rank 2's split to itself (7 bytes) left out: placed at position 2.
  EXPECT_DOUBLE_EQ(m.peer_mean, static_cast<double>(sum) / (kRanks * (kRanks - 1)));
  EXPECT_NE(std::find(m.peer_rows.begin(), m.peer_rows.end(), AlltoallPeerRow{2, 3, alltoall_big_bytes(2)}),
            m.peer_rows.end());
}

}  // namespace
}  // namespace scaleprof::analysis

// One rank's all-to-all split sizes, reduced to what the per-peer cost needs (all_to_all_cost.h).
//
// A rank's split sizes have one entry per member of the group: kept whole for every rank and call they
// are n² values per call (1,024 gloo ranks × 50 calls: 52 million, and a peers table as large). The cost
// needs only, per rank and call, the largest and the sum of its bytes to distinct peers and how many
// peers there were; the per-peer table keeps each rank's kAlltoallTopPeers largest entries (its split to
// itself included, as the table lists it). What is retained per rank and call is then bounded by a
// constant, whatever the group's size: O(ranks × calls) in all.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace scaleprof::analysis {

// Entries of a rank's split list kept for the per-peer table, per call: its largest.
inline constexpr size_t kAlltoallTopPeers = 8;

struct AlltoallPeerEntry {
  uint32_t member = 0;  // position in the group's member list
  int64_t bytes = 0;
};

struct AlltoallPeerSummary {
  // The split sizes were there and placed: as many as the members, the rank one of them.
  bool placed = false;
  bool overflow = false;  // the bytes to the peers add up past int64: no figure
  // Over the distinct peers (the entry at the rank's own position left out).
  int64_t max = -1;
  int64_t sum = 0;
  int64_t peers = 0;
  int64_t members = 0;                 // size of the member list the splits were placed against
  std::vector<AlltoallPeerEntry> top;  // the largest entries (ties: lower member first), by member
};

// The summary of rank `rank`'s bytes to each member (`to_peer`, empty: unknown) of a group whose members
// are `members` (empty: the default group 0..to_peer.size()−1).
AlltoallPeerSummary summarize_alltoall_splits(int64_t rank, std::span<const int64_t> to_peer,
                                              const std::vector<int64_t>& members);

}  // namespace scaleprof::analysis

// All-to-all(v): bytes per peer, imbalance per call and the time the imbalance costs.
//
// Bytes per peer. Kineto records the split sizes of an all-to-all(v) as dim-0 rows per peer: on the
// record_param_comms op (`In split size` / `Out split size`, GPU runs), and, on CPU (gloo) runs, only in
// the `Concrete Inputs` of the `c10d::alltoall_base_` op (all_to_all_single: output splits, then input
// splits) — record_shapes=True. A peer's bytes = its rows × the elements of a row (the tensor's
// elements / all rows) × the dtype's size. On gloo runs the k-th c10d::alltoall_base_ of a rank is the
// k-th gloo:all_to_all of that rank (gloo runs a group's work in the order it was queued); the pairing is
// made only when the two counts agree, never guessed.
//
// Per matched call, over the directed pairs (sender, receiver) of distinct ranks of the group (a rank's
// split to itself is a local copy, not communication, and is left out):
//   peer_max   = the largest bytes one rank sends one peer;
//   peer_mean  = the mean over the n(n−1) pairs (the balanced share: the same bytes spread evenly);
//   peer_imbalance = peer_max / peer_mean (1 = balanced);
//   imbalance_cost = latency × (1 − peer_mean / peer_max): the slowest pair's excess. Model: every pair
//   has its own link, so the call lasts as long as its most loaded pair, and with the same bytes spread
//   evenly it would last peer_mean / peer_max of that. It holds where links are per pair (NVLink, a NIC
//   per rank); where the ranks share one medium (gloo over one host's loopback on few cores, where the
//   CPUs that copy the bytes are the bottleneck) the call's time follows the total bytes and the cost is
//   an upper bound (docs/trace-json.md, "alltoall", says what was measured).
// A rank whose splits are not in the trace (equal splits, a list truncated past 30 peers) counts as
// sending its message size / n to each peer. Each rank's splits are reduced as they are read to their
// largest and sum over the distinct peers and a few largest entries (alltoall_peers.h): the figures
// above need no more, and memory stays O(ranks × calls) at any group size. Sums per step and per annotation (the
// innermost record_function or nn.Module enclosing the call's launch) are checked (core/checked_sum.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analysis/alltoall_peers.h"
#include "analysis/collective_calls.h"
#include "analysis/collective_match.h"
#include "trace/event_table.h"

namespace scaleprof::analysis {

// Fills, for a rank's all-to-all calls, the split bytes a gloo trace keeps only in c10d::alltoall_base_
// and the annotation enclosing each call. `launch_ns[i]`: when calls[i] was launched (a kernel's runtime
// call, else the call's start), parallel to `calls`.
void attach_alltoall_details(const trace::RankTrace& trace, std::span<const int64_t> launch_ns,
                             std::vector<CollectiveCall>* calls);

// One rank's part of a matched all-to-all: its rank, and its bytes to each member of the group reduced
// (alltoall_peers.h; null or not placed: unknown); `sent`: its total sent (-1 unknown).
struct AlltoallRankPart {
  int64_t rank = 0;
  const AlltoallPeerSummary* peers = nullptr;
  int64_t sent = -1;
};

// peer_* fields of `m` from its ranks' parts; `members`: the group's ranks in order ({} unknown: the
// default group 0..n-1 is assumed when every rank is below n).
void fill_alltoall_peers(std::span<const AlltoallRankPart> parts, const std::vector<int64_t>& members,
                         MatchedCollective* m);

// What balancing an all-to-all would multiply its time by: peer_mean / peer_max (<= 1; 1 balanced), the
// model above (every pair its own link: the slowest pair sets the time); -1 when not an all-to-all or
// its peer figures are unknown. The cost below is latency x (1 - this); the what-if model's "all-to-all
// balanced" scales the call's transfer by it where peer_splits (analysis/whatif.h).
double alltoall_balanced_share(const MatchedCollective& m);

struct AlltoallCost {
  size_t call = 0;       // index in CollectiveAnalysis::calls
  int64_t cost_ns = -1;  // latency × (1 − peer_mean / peer_max); -1 unknown
};

struct AlltoallSum {
  std::string key;  // step number as text, or the annotation ("" none)
  int64_t step = -1;
  int64_t calls = 0;
  int64_t latency_ns = 0;
  int64_t cost_ns = 0;
  int64_t bytes_max = 0;  // sum of peer_max over the calls
  bool exact = true;      // false: a sum would pass int64 and is left out
};

struct AlltoallCosts {
  std::vector<AlltoallCost> calls;         // matched or incomplete all-to-alls, in the analysis' order
  std::vector<AlltoallSum> by_step;        // by step number (-1: outside any step)
  std::vector<AlltoallSum> by_annotation;  // by annotation name
};

AlltoallCosts alltoall_costs(const CollectiveAnalysis& a);

}  // namespace scaleprof::analysis

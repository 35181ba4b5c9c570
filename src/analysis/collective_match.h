// Collectives matched across ranks, with their latency, skew, waits and bandwidth.
//
// Matching: the calls of each process group (Process Group Name + Ranks) are matched across the
// group's ranks by their position in the group's sequence — `Seq` where every call carries it (and no
// rank has one Seq twice), else
// the k-th call of the group within the same ProfilerStep#N (each rank's profiler window may start at
// a different call, the step numbers do not), else the k-th call in the trace. The method is reported
// per group (GroupMatching) and per call. Matched by order alone, the pairs are uncertain: nothing in
// the traces says the ranks' profiler windows began at the same call, and if they did not, every pair
// is off by the difference (with equal counts, types and sizes nothing shows it). A position is matched
// only when every present rank has a call there of the same type and size; otherwise its calls are
// reported as unmatched with the reason, never paired by guess. Calls with no process group (old
// traces, NCCL kernels without metadata) and point-to-point calls (no peer in the trace) are never
// matched. When some ranks of a group were not loaded, its calls are matched among the ranks present
// and marked incomplete: their latency is then only an upper bound.
//
// Per matched call (times in ns on the aligned clock):
//   latency = min over ranks of the duration (the transfer itself: the last rank to arrive waits for
//             nobody); skew = latest start − earliest start; wait of rank r = latest start − start_r;
//   algbw = bytes / latency; busbw = algbw × nccl-tests' factor for n ranks: allreduce 2(n−1)/n,
//           allgather, reduce_scatter, alltoall (n−1)/n, broadcast, reduce and others 1.
// Bandwidths are in GB/s (10^9 bytes/s), as nccl-tests prints them.
//
// Clock alignment: Kineto timestamps are each host's wall clock. Ranks on one host share it and are
// never shifted. With several hosts (host_name in the traces, else --gpus-per-node), each host's
// offset to the host of the lowest rank is the median, over matched all-reduce / all-gather /
// reduce-scatter / all-to-all / barrier calls spanning both, of the difference between their
// earliest end times (these collectives complete together on every rank, nearly: NCCL's kernels do,
// gloo's ring ends rank after rank), kept within the bounds causality sets — no rank ends such a call
// before the last rank started it, so offset >= start_b − end_a and offset <= end_b − start_a for
// every rank a of the reference host and b of the other, over every call. It is subtracted. Its
// uncertainty: those bounds (the true offset lies within them), the spread of the per-call
// differences (their interquartile range) and the number of calls (the evidence). With MatchOptions::align false
// (--no-align) the offsets are estimated and reported the same way but not subtracted: every figure is then on each
// host's raw clock. The alignment error reported is the median end spread of those calls after the shift. A shift that
// would move a time out of the bounds every input keeps (core/time_bounds.h: 18 years before the
// epoch to the year 2189) is not made, and the clocks table says so.
//
// Sums over calls and ranks (all-to-all bytes sent) are checked (core/checked_sum.h): one that would
// pass int64 is left out with a note, never wrapped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/collective_calls.h"
#include "analysis/collective_rows.h"

namespace scaleprof::analysis {

struct MatchOptions {
  int64_t gpus_per_node = 0;  // > 0: node = rank / gpus_per_node when the traces give no host names
  bool align = true;          // false: host offsets estimated and reported, not subtracted (--no-align)
};

enum class MatchStatus : uint8_t { kMatched, kIncomplete, kUnmatched };
std::string_view match_status_name(MatchStatus s);  // "matched", "incomplete", "unmatched"

// How a group's calls were lined up across its ranks: by Seq, by the k-th call within the same
// ProfilerStep#N, or by the k-th call in the trace; kNone for calls never matched (no group, p2p).
enum class MatchMethod : uint8_t { kNone, kSeq, kStepPosition, kOrder };
std::string_view match_method_name(MatchMethod m);  // "", "seq", "step position", "order"

struct RankTiming {
  int64_t rank = 0;
  int64_t start_ns = 0;  // aligned clock
  int64_t end_ns = 0;
  int64_t wait_ns = 0;  // latest start of the call − this rank's start
};

struct AlltoallPeerRow {
  int64_t rank = 0;
  int64_t peer = 0;
  int64_t bytes = 0;
  bool operator==(const AlltoallPeerRow&) const = default;
};
// Per-peer rows kept per call: the per-peer table is bounded by calls, not by ranks².
inline constexpr size_t kAlltoallPeerRows = 64;

struct MatchedCollective {
  std::string type;
  std::string group;        // "" unknown
  int64_t group_size = -1;  // n used for busbw
  int64_t position = 0;     // 0-based call number in the group (Seq when known)
  int64_t seq = -1;
  int64_t step = -1;
  int64_t bytes = -1;
  bool device = false;
  MatchStatus status = MatchStatus::kUnmatched;
  MatchMethod method = MatchMethod::kNone;
  bool uncertain = false;         // paired by order alone across ranks (see above)
  std::string reason;             // why incomplete or unmatched
  std::vector<RankTiming> ranks;  // present ranks, by rank
  int64_t latency_ns = -1;        // -1 when unmatched
  int64_t skew_ns = -1;
  int64_t end_spread_ns = -1;
  int64_t last_rank = -1;  // latest to arrive
  double algbw_gbps = -1;  // < 0: unknown
  double busbw_gbps = -1;
  std::string locality;  // "intra-node", "inter-node" or "" unknown
  // all-to-all(v): bytes sent / received per rank, when split sizes are in the trace.
  int64_t send_min = -1, send_max = -1, recv_min = -1, recv_max = -1;
  double imbalance = -1;  // max / mean of the bytes sent by the ranks (1 = balanced)
  // all-to-all(v) per peer (all_to_all_cost.h): over the pairs of distinct ranks, the largest bytes one
  // rank sent one peer, the mean, and their ratio; -1 unknown.
  int64_t peer_max = -1;
  double peer_mean = -1;
  double peer_imbalance = -1;
  // Some rank's split sizes were in the trace (the others, if any, counted as equal splits): the peer
  // figures describe the call's real splits, not an assumption of equal ones.
  bool peer_splits = false;
  // Bytes a rank sent a peer (itself included), when every rank's splits are known: of each rank's
  // kAlltoallTopPeers largest entries (alltoall_peers.h), the kAlltoallPeerRows largest, by rank then
  // peer; `peer_rows_whole`: nothing was left out (every entry of every rank is here).
  std::vector<AlltoallPeerRow> peer_rows;
  bool peer_rows_whole = false;
  std::string annotation;  // the innermost record_function / nn.Module around the call (first rank's)
};

struct HostClock {
  std::string node;  // host name or "node N"
  std::vector<int64_t> ranks;
  int64_t offset_ns = 0;    // subtracted from this host's times (0 when not applied)
  int64_t estimate_ns = 0;  // the offset estimated (the median difference), applied or not
  int64_t spread_ns = -1;   // interquartile range of the per-call differences; -1 under 2 calls
  // The offsets causality allows (see above); meaningful when samples > 0. lowest > highest: the calls
  // contradict each other (mismatched calls, or clocks that drifted during the trace): estimate not clamped.
  int64_t lowest_ns = 0;
  int64_t highest_ns = 0;
  bool bounds_conflict = false;
  int64_t samples = 0;     // calls the offset was estimated from (the evidence)
  bool unshifted = false;  // the offset would move times out of the input bounds: not applied
};

// One row per process group: how its calls were matched.
struct GroupMatching {
  std::string group;
  std::string ranks;         // the group's member list ("0-3"); "" unknown
  int64_t ranks_loaded = 0;  // ranks of the group with calls in the traces
  int64_t calls = 0;         // call positions (rows of the group)
  int64_t matched = 0;       // of them matched or incomplete
  MatchMethod method = MatchMethod::kNone;
  bool uncertain = false;  // matched by order alone across two ranks or more
};

struct CollectiveAnalysis {
  std::vector<MatchedCollective> calls;  // by group, then position
  std::vector<GroupMatching> groups;     // by group name, then member list
  std::vector<HostClock> clocks;         // one per node
  int64_t alignment_error_ns = -1;       // median end spread of completing collectives; -1 none
  bool aligned = true;                   // offsets subtracted (MatchOptions::align)
  bool gpu = false;
};

// nccl-tests' bus-bandwidth factor for a collective of `n` ranks.
double busbw_factor(std::string_view type, int64_t n);

CollectiveAnalysis match_collectives(const CollectiveRows& rows, const MatchOptions& options = {});
// The same on rows not yet made compact.
CollectiveAnalysis match_collectives(const std::vector<RankCollectives>& ranks, const MatchOptions& options = {});

}  // namespace scaleprof::analysis

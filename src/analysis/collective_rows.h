// Every rank's collective calls and step rows in the compact form the cross-rank analyses keep.
//
// At thousands of ranks the rows kept for matching are what grows with the number of ranks
// (docs/scale.md). A RankCollectives call carries its strings (type, group, rank list, dtype) and
// its all-to-all split vectors: about 230 bytes per call per rank. Here what many calls share (type,
// group, group size, device) is kept once as a CallKind, all-to-all split sizes are reduced to the
// bytes sent and received and a bounded summary of the bytes per peer (alltoall_peers.h), and a call is
// 48 bytes per rank.
// Only the fields the outputs of `trace collectives` and `trace stragglers` use are kept; shards
// (--partial) still write the whole RankCollectives.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/alltoall_peers.h"
#include "analysis/collective_calls.h"

namespace scaleprof::analysis {

// What the calls of one kind share, kept once for all ranks.
struct CallKind {
  std::string type;
  std::string group;        // "" when the trace does not say
  std::string group_ranks;  // compact key ("0-1023"), "" unknown
  int64_t group_size = -1;
  bool device = false;
};

inline constexpr uint32_t kNoVolume = UINT32_MAX;

struct CompactCall {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t bytes = -1;
  int64_t seq = -1;
  int64_t step = -1;
  uint32_t kind = 0;            // index into CollectiveRows::kinds
  uint32_t volume = kNoVolume;  // all-to-all: index into CollectiveRows::volumes
};

// All-to-all(v): bytes one rank sent and received in one call (the sum of its split sizes, else the
// message size); -1 unknown. `overflow` when the split sizes add up past int64: left out, not wrapped.
struct AlltoallVolume {
  int64_t sent = -1;
  int64_t received = -1;
  bool overflow = false;
  uint32_t annotation = 0;    // index into CollectiveRows' annotation names (0: none)
  bool has_splits = false;    // the trace gave this rank's split sizes (whether or not they could be placed)
  AlltoallPeerSummary peers;  // bytes to each peer, reduced (alltoall_peers.h)
  // Split sizes of a rank whose number is not known yet (a file with no rank: CollectiveRows::set_rank
  // places them and frees them); empty otherwise.
  std::vector<int64_t> unplaced;
};

struct CompactRank {
  int64_t rank = 0;
  std::string host;  // "" when the trace has no host_name
  bool gpu = false;
  // Sized exactly, one allocation each: one array for all ranks would hold up to twice its size
  // while it grows (and copy itself each time it doubles).
  std::vector<CompactCall> calls;  // by start time
  std::vector<StepRow> steps;      // by start time
};

class CollectiveRows {
 public:
  // Appends one rank's rows (in the order ranks are added; keep_sorted() orders them).
  void add(const RankCollectives& rank);
  // Sets the rank number of the k-th rank added (files whose rank is known only once all are read).
  // All-to-all split sizes held until then are reduced with the final rank.
  void set_rank(size_t k, int64_t rank);
  // Orders the ranks by rank number (stable), keeping only those `keep` accepts.
  template <class Keep>
  void keep_sorted(Keep keep) {
    std::vector<CompactRank> kept;
    for (CompactRank& r : ranks_) {
      if (keep(r.rank)) kept.push_back(std::move(r));
    }
    std::stable_sort(kept.begin(), kept.end(),
                     [](const CompactRank& a, const CompactRank& b) { return a.rank < b.rank; });
    ranks_ = std::move(kept);
  }

  const std::vector<CompactRank>& ranks() const { return ranks_; }
  const CallKind& kind(const CompactCall& c) const { return kinds_[c.kind]; }
  std::span<const CompactCall> calls(const CompactRank& r) const { return r.calls; }
  std::span<const StepRow> steps(const CompactRank& r) const { return r.steps; }
  const AlltoallVolume* volume(const CompactCall& c) const {
    return c.volume == kNoVolume ? nullptr : &volumes_[c.volume];
  }
  size_t call_rows() const { return call_rows_; }
  // Per-peer values retained over every rank's all-to-all calls (split entries and summaries): what
  // grows with ranks × calls, whatever the group's size (the scale test counts them).
  size_t alltoall_peer_values() const;
  const std::string& annotation(const AlltoallVolume& v) const { return annotations_[v.annotation]; }

 private:
  std::vector<CallKind> kinds_;
  std::map<std::tuple<std::string, std::string, std::string, int64_t, bool>, uint32_t> kind_index_;
  std::vector<CompactRank> ranks_;
  size_t call_rows_ = 0;
  std::vector<AlltoallVolume> volumes_;
  std::vector<std::string> annotations_{std::string()};  // all-to-all annotation names, kept once
  std::map<std::string, uint32_t, std::less<>> annotation_index_{{std::string(), 0}};
};

// The compact rows of ranks, in their order.
CollectiveRows compact_rows(const std::vector<RankCollectives>& ranks);

}  // namespace scaleprof::analysis

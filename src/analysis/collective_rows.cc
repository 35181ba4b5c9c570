#include "analysis/collective_rows.h"

#include <optional>

#include "core/checked_sum.h"

namespace scaleprof::analysis {

namespace {

// Bytes of a split-size list, or nullopt past int64 (each split is bytes already).
std::optional<int64_t> split_total(const std::vector<int64_t>& splits) {
  int64_t total = 0;
  for (int64_t b : splits) {
    if (!add_checked(&total, b)) return std::nullopt;
  }
  return total;
}

// The members of a group from its rank list; {} when unknown or unreadable (the default group is then
// assumed, as collective_match does).
std::vector<int64_t> members_of(const std::string& group_ranks) {
  if (group_ranks.empty()) return {};
  return parse_rank_list(group_ranks).value_or(std::vector<int64_t>{});
}

}  // namespace

void CollectiveRows::set_rank(size_t k, int64_t rank) {
  CompactRank& r = ranks_[k];
  r.rank = rank;
  for (const CompactCall& c : r.calls) {
    if (c.volume == kNoVolume) continue;
    AlltoallVolume& v = volumes_[c.volume];
    if (v.unplaced.empty()) continue;
    v.peers = summarize_alltoall_splits(rank, v.unplaced, members_of(kinds_[c.kind].group_ranks));
    std::vector<int64_t>().swap(v.unplaced);
  }
}

size_t CollectiveRows::alltoall_peer_values() const {
  size_t n = 0;
  for (const AlltoallVolume& v : volumes_) n += v.unplaced.size() + v.peers.top.size() + 3;  // + max, sum, peers
  return n;
}

void CollectiveRows::add(const RankCollectives& rank) {
  CompactRank r;
  r.rank = rank.rank;
  r.host = rank.host;
  r.gpu = rank.gpu;
  r.calls.reserve(rank.calls.size());
  r.steps.assign(rank.steps.begin(), rank.steps.end());
  call_rows_ += rank.calls.size();
  for (const CollectiveCall& c : rank.calls) {
    CompactCall out;
    out.start_ns = c.start_ns;
    out.end_ns = c.end_ns;
    out.bytes = c.bytes;
    out.seq = c.seq;
    out.step = c.step;
    auto [it, inserted] = kind_index_.try_emplace({c.type, c.group, c.group_ranks, c.group_size, c.device},
                                                  static_cast<uint32_t>(kinds_.size()));
    if (inserted) kinds_.push_back({c.type, c.group, c.group_ranks, c.group_size, c.device});
    out.kind = it->second;
    if (c.type == "alltoall" || !c.in_split_bytes.empty() || !c.out_split_bytes.empty()) {
      AlltoallVolume v;
      v.sent = c.bytes;
      v.received = c.bytes;
      if (!c.in_split_bytes.empty()) {
        const auto total = split_total(c.in_split_bytes);
        v.sent = total.value_or(-1);
        v.overflow |= !total;
      }
      if (!c.out_split_bytes.empty()) {
        const auto total = split_total(c.out_split_bytes);
        v.received = total.value_or(-1);
        v.overflow |= !total;
      }
      v.has_splits = !c.in_split_bytes.empty();
      if (v.has_splits && rank.rank < 0) {
        v.unplaced = c.in_split_bytes;
      } else if (v.has_splits) {
        v.peers = summarize_alltoall_splits(rank.rank, c.in_split_bytes, members_of(c.group_ranks));
      }
      auto [name, added] = annotation_index_.try_emplace(c.annotation, static_cast<uint32_t>(annotations_.size()));
      if (added) annotations_.push_back(c.annotation);
      v.annotation = name->second;
      out.volume = static_cast<uint32_t>(volumes_.size());
      volumes_.push_back(std::move(v));
    }
    r.calls.push_back(out);
  }
  ranks_.push_back(std::move(r));
}

CollectiveRows compact_rows(const std::vector<RankCollectives>& ranks) {
  CollectiveRows out;
  for (const RankCollectives& r : ranks) out.add(r);
  return out;
}

}  // namespace scaleprof::analysis

#include "analysis/alltoall_peers.h"

#include <algorithm>

#include "core/checked_sum.h"

namespace scaleprof::analysis {

AlltoallPeerSummary summarize_alltoall_splits(int64_t rank, std::span<const int64_t> to_peer,
                                              const std::vector<int64_t>& members) {
  AlltoallPeerSummary out;
  if (to_peer.empty()) return out;
  const size_t n = members.empty() ? to_peer.size() : members.size();
  if (to_peer.size() != n) return out;
  size_t self = n;
  if (members.empty()) {
    if (rank >= 0 && static_cast<uint64_t>(rank) < n) self = static_cast<size_t>(rank);
  } else if (auto it = std::find(members.begin(), members.end(), rank); it != members.end()) {
    self = static_cast<size_t>(it - members.begin());
  }
  if (self == n) return out;
  out.placed = true;
  out.members = static_cast<int64_t>(n);
  for (size_t d = 0; d < n; ++d) {
    if (d == self) continue;
    if (!add_checked(&out.sum, to_peer[d])) {
      out.overflow = true;
      return out;
    }
    out.max = std::max(out.max, to_peer[d]);
    ++out.peers;
  }
  // The largest entries: a partial sort of the positions, kept in member order.
  std::vector<uint32_t> order(n);
  for (size_t d = 0; d < n; ++d) order[d] = static_cast<uint32_t>(d);
  const size_t k = std::min(kAlltoallTopPeers, n);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    [&](uint32_t a, uint32_t b) { return to_peer[a] != to_peer[b] ? to_peer[a] > to_peer[b] : a < b; });
  order.resize(k);
  std::sort(order.begin(), order.end());
  out.top.reserve(k);
  for (uint32_t d : order) out.top.push_back({d, to_peer[d]});
  return out;
}

}  // namespace scaleprof::analysis

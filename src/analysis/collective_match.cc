#include "analysis/collective_match.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <span>
#include <tuple>

#include "analysis/all_to_all_cost.h"
#include "analysis/distribution.h"
#include "core/checked_sum.h"
#include "core/time_bounds.h"

namespace scaleprof::analysis {

namespace {

bool is_point_to_point(std::string_view type) {
  return type == "send" || type == "recv" || type == "sendrecv";
}

// Collectives that complete at the same moment on every rank: their end times anchor the clocks.
bool completes_together(std::string_view type) {
  return type == "allreduce" || type == "allgather" || type == "reduce_scatter" || type == "alltoall" ||
         type == "barrier";
}

int64_t median(std::vector<int64_t> v) {
  if (v.empty()) return -1;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  return v[mid];
}

struct Entry {
  size_t rank_index;
  size_t call_index;
};

struct Group {
  std::string name;
  std::string ranks_text;
  int64_t size = -1;
  std::map<size_t, std::vector<size_t>> calls;  // rank index -> call indices in start order
};

}  // namespace

std::string_view match_status_name(MatchStatus s) {
  switch (s) {
    case MatchStatus::kMatched:
      return "matched";
    case MatchStatus::kIncomplete:
      return "incomplete";
    case MatchStatus::kUnmatched:
      return "unmatched";
  }
  return "unmatched";
}

std::string_view match_method_name(MatchMethod m) {
  switch (m) {
    case MatchMethod::kNone:
      return "";
    case MatchMethod::kSeq:
      return "seq";
    case MatchMethod::kStepPosition:
      return "step position";
    case MatchMethod::kOrder:
      return "order";
  }
  return "";
}

double busbw_factor(std::string_view type, int64_t n) {
  if (n <= 0) return 1.0;
  const double nd = static_cast<double>(n);
  if (type == "allreduce") return 2.0 * (nd - 1.0) / nd;
  if (type == "allgather" || type == "reduce_scatter" || type == "alltoall") return (nd - 1.0) / nd;
  return 1.0;
}

CollectiveAnalysis match_collectives(const std::vector<RankCollectives>& ranks, const MatchOptions& options) {
  return match_collectives(compact_rows(ranks), options);
}

CollectiveAnalysis match_collectives(const CollectiveRows& rows, const MatchOptions& options) {
  CollectiveAnalysis out;
  out.aligned = options.align;
  const std::vector<CompactRank>& ranks = rows.ranks();
  std::set<int64_t> loaded;
  for (const CompactRank& r : ranks) {
    loaded.insert(r.rank);
    out.gpu |= r.gpu;
  }
  auto node_of_rank = [&](int64_t rank, const CompactRank* loaded_rank) -> std::string {
    if (loaded_rank != nullptr && !loaded_rank->host.empty()) return loaded_rank->host;
    if (options.gpus_per_node > 0) return fmt::format("node {}", rank / options.gpus_per_node);
    return {};
  };
  std::map<int64_t, const CompactRank*> by_rank;
  for (const CompactRank& r : ranks) by_rank[r.rank] = &r;

  auto call_at = [&](const Entry& e) -> const CompactCall& { return rows.calls(ranks[e.rank_index])[e.call_index]; };
  auto row_from = [&](const std::vector<Entry>& entries) {
    MatchedCollective m;
    const CompactCall& first = call_at(entries[0]);
    const CallKind& kind = rows.kind(first);
    m.type = kind.type;
    m.group = kind.group;
    m.group_size = kind.group_size;
    m.seq = first.seq;
    m.step = first.step;
    m.bytes = first.bytes;
    m.device = kind.device;
    m.ranks.reserve(entries.size());
    for (const Entry& e : entries) {
      const CompactCall& c = call_at(e);
      m.ranks.push_back(RankTiming{ranks[e.rank_index].rank, c.start_ns, c.end_ns, 0});
    }
    std::sort(m.ranks.begin(), m.ranks.end(), [](const RankTiming& a, const RankTiming& b) { return a.rank < b.rank; });
    return m;
  };

  std::map<std::string, Group> groups;
  std::vector<Group*> group_of_kind;  // kind index -> its group (nullptr: never matched), filled as kinds are met
  for (size_t i = 0; i < ranks.size(); ++i) {
    const std::span<const CompactCall> calls = rows.calls(ranks[i]);
    for (size_t j = 0; j < calls.size(); ++j) {
      const CompactCall& c = calls[j];
      const CallKind& kind = rows.kind(c);
      if (kind.group.empty() || is_point_to_point(kind.type)) {
        MatchedCollective m = row_from({{i, j}});
        m.position = static_cast<int64_t>(j);
        m.reason = kind.group.empty() ? "the trace names no process group for this call"
                                      : "point-to-point: the trace names no peer";
        out.calls.push_back(std::move(m));
        continue;
      }
      if (group_of_kind.size() <= c.kind) group_of_kind.resize(c.kind + 1, nullptr);
      Group*& slot = group_of_kind[c.kind];
      if (slot == nullptr) slot = &groups[kind.group + "|" + kind.group_ranks];
      Group& g = *slot;
      g.name = kind.group;
      g.ranks_text = kind.group_ranks;
      g.size = std::max(g.size, kind.group_size);
      g.calls[i].push_back(j);
    }
  }

  for (auto& [key, g] : groups) {
    // Ranks of the group that were not loaded.
    int64_t expected = g.size;
    int64_t missing = 0;
    std::vector<int64_t> members;
    if (!g.ranks_text.empty()) {
      members = parse_rank_list(g.ranks_text).value_or(std::vector<int64_t>{});
      expected = static_cast<int64_t>(members.size());
      for (int64_t r : members) missing += loaded.count(r) == 0 ? 1 : 0;
    } else if (g.size > 0) {
      missing = std::max<int64_t>(0, g.size - static_cast<int64_t>(g.calls.size()));
    }
    // Where the group's calls run when some members were not loaded: the member list and the
    // --gpus-per-node map still place every member (TraceLens labels such calls the same way). Not
    // when a loaded member is placed by its host name: "node N" and host names cannot be compared.
    const std::string incomplete_locality = [&]() -> std::string {
      if (missing == 0 || members.empty() || options.gpus_per_node <= 0) return {};
      std::set<int64_t> member_nodes;
      for (int64_t r : members) {
        auto it = by_rank.find(r);
        if (it != by_rank.end() && !it->second->host.empty()) return {};
        member_nodes.insert(r / options.gpus_per_node);
      }
      return member_nodes.size() > 1 ? "inter-node" : "intra-node";
    }();
    // How calls line up: Seq, else (step, k-th in step), else k-th.
    bool all_seq = true;
    bool all_step = true;
    for (const auto& [ri, list] : g.calls) {
      const std::span<const CompactCall> calls = rows.calls(ranks[ri]);
      std::vector<int64_t> seqs;
      for (size_t j : list) {
        all_seq &= calls[j].seq >= 0;
        all_step &= calls[j].step >= 0;
        seqs.push_back(calls[j].seq);
      }
      // A Seq met twice on one rank (coalesced calls sharing one) cannot key the calls.
      std::sort(seqs.begin(), seqs.end());
      all_seq &= std::adjacent_find(seqs.begin(), seqs.end()) == seqs.end();
    }
    std::map<std::pair<int64_t, int64_t>, std::vector<Entry>> positions;
    std::map<int64_t, std::map<size_t, int64_t>> count_by_step;  // step -> rank index -> calls
    for (const auto& [ri, list] : g.calls) {
      const std::span<const CompactCall> calls = rows.calls(ranks[ri]);
      std::map<int64_t, int64_t> k_in_step;
      for (size_t k = 0; k < list.size(); ++k) {
        const CompactCall& c = calls[list[k]];
        std::pair<int64_t, int64_t> pos{0, static_cast<int64_t>(k)};
        if (all_seq) {
          pos = {c.seq, 0};
        } else if (all_step) {
          pos = {c.step, k_in_step[c.step]++};
          ++count_by_step[c.step][ri];
        }
        positions[pos].push_back({ri, list[k]});
      }
    }
    const size_t participants = g.calls.size();
    const MatchMethod method = all_seq    ? MatchMethod::kSeq
                               : all_step ? MatchMethod::kStepPosition
                                          : MatchMethod::kOrder;
    // Paired by order alone: right only if every rank's profiler window began at the same call.
    const bool by_order_across_ranks = method == MatchMethod::kOrder && participants > 1;
    GroupMatching summary;
    summary.group = g.name;
    summary.ranks = g.ranks_text;
    summary.ranks_loaded = static_cast<int64_t>(participants);
    summary.method = method;
    std::string order_problem;
    if (!all_seq && !all_step) {
      size_t lo = SIZE_MAX, hi = 0;
      for (const auto& [ri, list] : g.calls) {
        lo = std::min(lo, list.size());
        hi = std::max(hi, list.size());
      }
      if (lo != hi) {
        order_problem = fmt::format(
            "ranks recorded {} to {} calls on this group and the trace has no Seq or steps to align them", lo, hi);
      }
    }
    g.calls.clear();  // the group's per-rank call lists are done with: free them before the matched rows grow
    int64_t position = 0;
    for (auto it = positions.begin(); it != positions.end(); it = positions.erase(it)) {
      const auto& [pos, entries] = *it;
      MatchedCollective m = row_from(entries);
      m.position = all_seq ? pos.first : position;
      m.method = method;
      ++position;
      if (m.group_size < 0) m.group_size = expected;
      std::string problem = order_problem;
      if (problem.empty() && all_step && !all_seq) {
        const auto& counts = count_by_step[pos.first];
        bool same = counts.size() == participants;
        for (const auto& [ri, n] : counts) same &= n == counts.begin()->second;
        if (!same)
          problem = fmt::format("ranks recorded different numbers of calls on this group in step {}", pos.first);
      }
      if (problem.empty() && entries.size() < participants) {
        problem = fmt::format("only {} of the {} ranks present recorded this call", entries.size(), participants);
      }
      if (problem.empty()) {
        for (const Entry& e : entries) {
          const CompactCall& c = call_at(e);
          const std::string& type = rows.kind(c).type;
          if (type != m.type) {
            problem = fmt::format("ranks disagree on the collective ({} on rank {}, {} on rank {})", m.type,
                                  m.ranks[0].rank, type, ranks[e.rank_index].rank);
            break;
          }
          if (c.bytes != m.bytes && m.type != "alltoall") {
            problem = fmt::format("ranks disagree on the size ({} bytes on rank {}, {} on rank {})", m.bytes,
                                  m.ranks[0].rank, c.bytes, ranks[e.rank_index].rank);
            break;
          }
        }
      }
      if (!problem.empty()) {
        m.reason = problem;
      } else if (missing > 0) {
        m.status = MatchStatus::kIncomplete;
        m.reason = fmt::format("{} of the group's {} ranks were not loaded", missing, expected);
        m.locality = incomplete_locality;
      } else {
        m.status = MatchStatus::kMatched;
      }
      ++summary.calls;
      if (m.status != MatchStatus::kUnmatched) {
        ++summary.matched;
        m.uncertain = by_order_across_ranks && m.ranks.size() > 1;
        summary.uncertain |= m.uncertain;
      }
      // all-to-all(v): what each rank sends and receives.
      if (m.type == "alltoall") {
        std::vector<int64_t> sent;
        std::vector<int64_t> overflowed;  // ranks whose split sizes add up past int64
        std::vector<AlltoallRankPart> parts;
        bool any_vector = false;
        for (const Entry& e : entries) {
          const CompactCall& c = call_at(e);
          if (const AlltoallVolume* v = rows.volume(c); v != nullptr && !v->overflow) {
            parts.push_back({ranks[e.rank_index].rank, &v->peers, v->sent});
            any_vector |= v->has_splits;
            if (m.annotation.empty()) m.annotation = rows.annotation(*v);
          } else {
            parts.push_back({ranks[e.rank_index].rank, nullptr, v != nullptr ? -1 : c.bytes});
          }
          // all_to_allv: ranks send different amounts. The call's size is the largest message, the
          // one its duration cannot be shorter than, and not whichever rank happens to come first.
          m.bytes = std::max(m.bytes, c.bytes);
          const AlltoallVolume* v = rows.volume(c);
          if (v != nullptr && v->overflow) overflowed.push_back(ranks[e.rank_index].rank);
          const int64_t send = v != nullptr ? v->sent : c.bytes;
          const int64_t recv = v != nullptr ? v->received : c.bytes;
          if (send < 0 || recv < 0) continue;
          sent.push_back(send);
          m.send_min = m.send_min < 0 ? send : std::min(m.send_min, send);
          m.send_max = std::max(m.send_max, send);
          m.recv_min = m.recv_min < 0 ? recv : std::min(m.recv_min, recv);
          m.recv_max = std::max(m.recv_max, recv);
        }
        int64_t total = 0;
        bool exact = true;
        for (int64_t s : sent) exact = add_checked(&total, s) && exact;
        if (!sent.empty() && total > 0 && exact) {
          m.imbalance = static_cast<double>(m.send_max) * static_cast<double>(sent.size()) / static_cast<double>(total);
        }
        std::string note;
        if (!overflowed.empty()) {
          std::sort(overflowed.begin(), overflowed.end());
          note = fmt::format("the split sizes of rank {} add up past int64 bytes: left out", overflowed.front());
        } else if (!exact) {
          note = "the bytes sent by the ranks add up past int64: no imbalance";
        }
        if (!note.empty()) m.reason = m.reason.empty() ? note : m.reason + "; " + note;
        fill_alltoall_peers(parts, any_vector ? members : std::vector<int64_t>{}, &m);
      }
      out.calls.push_back(std::move(m));
    }
    out.groups.push_back(std::move(summary));
  }

  // Nodes and clock offsets.
  std::map<std::string, HostClock> nodes;
  bool every_node_known = true;
  for (const CompactRank& r : ranks) {
    const std::string node = node_of_rank(r.rank, &r);
    if (node.empty()) {
      every_node_known = false;
      continue;
    }
    HostClock& h = nodes[node];
    h.node = node;
    h.ranks.push_back(r.rank);
  }
  std::map<int64_t, std::string> node_by_rank;
  for (const auto& [name, h] : nodes) {
    for (int64_t r : h.ranks) node_by_rank[r] = name;
  }
  if (every_node_known && nodes.size() > 1 && !ranks.empty()) {
    const std::string reference = node_by_rank[ranks.front().rank];
    std::map<std::string, std::vector<int64_t>> diffs;
    // Causal bounds: no rank ends one of these calls before the last rank has started it, so for ranks
    // a of the reference host and b of another, end_a >= start_b - offset and end_b - offset >= start_a.
    std::map<std::string, std::pair<int64_t, int64_t>> bounds;  // node -> (lowest, highest) offset
    for (const MatchedCollective& m : out.calls) {
      if (m.status == MatchStatus::kUnmatched || !completes_together(m.type)) continue;
      struct Span {
        int64_t first_end = INT64_MAX, last_start = INT64_MIN;
      };
      std::map<std::string, Span> per_node;
      for (const RankTiming& t : m.ranks) {
        Span& s = per_node[node_by_rank[t.rank]];
        s.first_end = std::min(s.first_end, t.end_ns);
        s.last_start = std::max(s.last_start, t.start_ns);
      }
      auto ref = per_node.find(reference);
      if (ref == per_node.end()) continue;
      for (const auto& [node, span] : per_node) {
        if (node == reference) continue;
        diffs[node].push_back(span.first_end - ref->second.first_end);
        const int64_t low = span.last_start - ref->second.first_end;
        const int64_t high = span.first_end - ref->second.last_start;
        auto [b, inserted] = bounds.emplace(node, std::pair{low, high});
        if (!inserted) b->second = {std::max(b->second.first, low), std::min(b->second.second, high)};
      }
    }
    for (auto& [node, d] : diffs) {
      HostClock& h = nodes[node];
      h.samples = static_cast<int64_t>(d.size());
      h.estimate_ns = median(d);
      // The uncertainty: how much the per-call differences disagree (interquartile range), and the
      // bounds causality sets. The median is kept inside them: an end-time pattern that is not
      // simultaneous (gloo's ring ends rank after rank) must not shift a host past what is possible.
      if (d.size() >= 2) {
        std::sort(d.begin(), d.end());
        // Differences of in-bounds times fit int64; the range between two of them may not (-1: unknown).
        const double iqr = quantile_sorted(d, 0.75) - quantile_sorted(d, 0.25);
        h.spread_ns = iqr < 0x1p62 ? std::llround(iqr) : -1;
      }
      const auto [low, high] = bounds[node];
      h.lowest_ns = low;
      h.highest_ns = high;
      h.bounds_conflict = low > high;
      if (!h.bounds_conflict) h.estimate_ns = std::clamp(h.estimate_ns, low, high);
      h.offset_ns = options.align ? h.estimate_ns : 0;
    }
    // A shift that would move a time out of the bounds every input keeps (core/time_bounds.h) is not
    // made: the differences taken below (skew, wait, start from the earliest) could then wrap.
    for (const MatchedCollective& m : out.calls) {
      for (const RankTiming& t : m.ranks) {
        HostClock& h = nodes[node_by_rank[t.rank]];
        if (h.offset_ns == 0) continue;
        if (!time_in_bounds(t.start_ns - h.offset_ns) || !time_in_bounds(t.end_ns - h.offset_ns)) {
          h.offset_ns = 0;
          h.unshifted = true;
        }
      }
    }
    for (MatchedCollective& m : out.calls) {
      for (RankTiming& t : m.ranks) {
        const int64_t offset = nodes[node_by_rank[t.rank]].offset_ns;
        t.start_ns -= offset;
        t.end_ns -= offset;
      }
    }
  }
  for (auto& [name, h] : nodes) out.clocks.push_back(h);

  // Metrics of matched (and incomplete) calls.
  std::vector<int64_t> end_spreads;
  for (MatchedCollective& m : out.calls) {
    if (m.status == MatchStatus::kUnmatched) continue;
    int64_t latest = INT64_MIN, earliest = INT64_MAX, first_end = INT64_MAX, last_end = INT64_MIN;
    m.latency_ns = INT64_MAX;
    for (const RankTiming& t : m.ranks) {
      m.latency_ns = std::min(m.latency_ns, t.end_ns - t.start_ns);
      if (t.start_ns > latest) {
        latest = t.start_ns;
        m.last_rank = t.rank;
      }
      earliest = std::min(earliest, t.start_ns);
      first_end = std::min(first_end, t.end_ns);
      last_end = std::max(last_end, t.end_ns);
    }
    for (RankTiming& t : m.ranks) t.wait_ns = latest - t.start_ns;
    m.skew_ns = latest - earliest;
    m.end_spread_ns = last_end - first_end;
    if (m.ranks.size() < 2) {  // one rank: nobody to be late against
      m.skew_ns = m.end_spread_ns = m.last_rank = -1;
    }
    if (m.ranks.size() > 1 && completes_together(m.type)) end_spreads.push_back(m.end_spread_ns);
    const int64_t n = m.group_size > 0 ? m.group_size : static_cast<int64_t>(m.ranks.size());
    if (m.bytes > 0 && m.latency_ns > 0) {
      m.algbw_gbps = static_cast<double>(m.bytes) / static_cast<double>(m.latency_ns);
      m.busbw_gbps = m.algbw_gbps * busbw_factor(m.type, n);
    }
    // Intra- or inter-node: from the ranks that recorded the call; an incomplete call keeps what
    // its group's member list gave above unless the recorded ranks already span nodes.
    std::set<std::string> spans;
    bool known = true;
    std::vector<int64_t> members;
    for (const RankTiming& t : m.ranks) members.push_back(t.rank);
    if (m.status == MatchStatus::kIncomplete) known = false;
    for (int64_t r : members) {
      auto it = by_rank.find(r);
      const std::string node = node_of_rank(r, it == by_rank.end() ? nullptr : it->second);
      if (node.empty()) known = false;
      spans.insert(node);
    }
    if (spans.size() > 1) {
      m.locality = "inter-node";
    } else if (known && !spans.empty()) {
      m.locality = "intra-node";
    }
  }
  out.alignment_error_ns = median(end_spreads);
  std::stable_sort(out.calls.begin(), out.calls.end(), [](const MatchedCollective& a, const MatchedCollective& b) {
    const int64_t sa = a.ranks.empty() ? 0 : a.ranks.front().start_ns;
    const int64_t sb = b.ranks.empty() ? 0 : b.ranks.front().start_ns;
    return std::tie(a.group, a.position, sa) < std::tie(b.group, b.position, sb);
  });
  return out;
}

}  // namespace scaleprof::analysis

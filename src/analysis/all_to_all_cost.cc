#include "analysis/all_to_all_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>

#include "analysis/profiler_steps.h"
#include "core/checked_sum.h"

namespace scaleprof::analysis {

namespace {

// The strings of a JSON list of plain strings ("[\"\", \"[1, 2]\"]"); nullopt on anything else
// (escapes included: the split lists never have any).
std::optional<std::vector<std::string_view>> a2a_string_list(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = text.find_first_not_of(" \n\t");
  if (i == std::string_view::npos || text[i] != '[') return std::nullopt;
  ++i;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == ',' || c == '\n' || c == '\t') {
      ++i;
    } else if (c == ']') {
      return out;
    } else if (c == '"') {
      const size_t end = text.find_first_of("\"\\", i + 1);
      if (end == std::string_view::npos || text[end] == '\\') return std::nullopt;
      out.push_back(text.substr(i + 1, end - i - 1));
      i = end + 1;
    } else {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// Elements of the k-th tensor of an `Input Dims` value ("[[2000], [40, 8], []]", k = 1 -> 320); nullopt
// when absent, not a list of integers, or past 2^50.
std::optional<int64_t> a2a_tensor_elements(std::string_view dims, size_t k) {
  size_t i = dims.find('[');
  if (i == std::string_view::npos) return std::nullopt;
  ++i;
  for (size_t t = 0;; ++t) {
    const size_t open = dims.find('[', i);
    if (open == std::string_view::npos) return std::nullopt;
    const size_t close = dims.find(']', open);
    if (close == std::string_view::npos) return std::nullopt;
    if (t == k) {
      int64_t n = 1;
      int64_t v = -1;
      for (size_t p = open + 1; p <= close; ++p) {
        const char c = dims[p];
        if (c >= '0' && c <= '9') {
          v = (v < 0 ? 0 : v) * 10 + (c - '0');
          if (v > (int64_t{1} << 50)) return std::nullopt;
        } else if (c == ',' || c == ']') {
          if (v < 0) return std::nullopt;  // "[]", "[,": no size
          if (v > 0 && n > (int64_t{1} << 50) / v) return std::nullopt;
          n *= v;
          v = -1;
        } else if (c != ' ') {
          return std::nullopt;
        }
      }
      return n;
    }
    i = close + 1;
  }
}

// Innermost annotation (record_function, nn.Module) holding a time, over every thread of a rank. On one
// thread annotations nest, so each keeps its enclosing one (its parent) and a look-up walks up from the
// last annotation starting at or before the time.
class AnnotationIndex {
 public:
  explicit AnnotationIndex(const trace::RankTrace& trace) : trace_(trace) {
    const trace::EventTable& ev = trace.events;
    std::map<uint32_t, std::vector<uint32_t>> by_track;
    for (size_t i = 0; i < ev.size(); ++i) {
      if (ev.phase[i] != trace::Phase::kComplete) continue;
      const std::string_view name = trace.name(i);
      const bool annotation = ev.cat[i] == trace::Category::kUserAnnotation && !profiler_step_number(name) &&
                              name.rfind("gloo:", 0) != 0 && name.rfind("nccl:", 0) != 0;
      const bool module = ev.cat[i] == trace::Category::kPythonFunction && name.rfind("nn.Module: ", 0) == 0;
      if (annotation || module) by_track[ev.track[i]].push_back(static_cast<uint32_t>(i));
    }
    for (auto& [track, list] : by_track) {
      std::stable_sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
        return ev.ts[a] != ev.ts[b] ? ev.ts[a] < ev.ts[b] : ev.end(a) > ev.end(b);
      });
      Track t;
      t.events = list;
      t.parent.assign(list.size(), -1);
      std::vector<int64_t> open;
      for (size_t k = 0; k < list.size(); ++k) {
        while (!open.empty() && ev.end(list[static_cast<size_t>(open.back())]) <= ev.ts[list[k]]) open.pop_back();
        t.parent[k] = open.empty() ? -1 : open.back();
        open.push_back(static_cast<int64_t>(k));
      }
      tracks_.push_back(std::move(t));
    }
  }

  // The name of the innermost annotation holding `t` ("" none): of those found on each thread, the one
  // starting last.
  std::string_view at(int64_t t) const {
    const trace::EventTable& ev = trace_.events;
    int64_t best = -1;
    for (const Track& tr : tracks_) {
      auto it = std::upper_bound(tr.events.begin(), tr.events.end(), t,
                                 [&](int64_t time, uint32_t e) { return time < ev.ts[e]; });
      int64_t k = static_cast<int64_t>(it - tr.events.begin()) - 1;
      while (k >= 0 && ev.end(tr.events[static_cast<size_t>(k)]) <= t) k = tr.parent[static_cast<size_t>(k)];
      if (k < 0) continue;
      const uint32_t e = tr.events[static_cast<size_t>(k)];
      if (best < 0 || ev.ts[e] > ev.ts[static_cast<size_t>(best)]) best = e;
    }
    return best < 0 ? std::string_view{} : trace_.name(static_cast<size_t>(best));
  }

 private:
  struct Track {
    std::vector<uint32_t> events;  // by start, the enclosing first
    std::vector<int64_t> parent;   // index of the enclosing annotation, -1 none
  };
  const trace::RankTrace& trace_;
  std::vector<Track> tracks_;
};

}  // namespace

void attach_alltoall_details(const trace::RankTrace& trace, std::span<const int64_t> launch_ns,
                             std::vector<CollectiveCall>* calls) {
  std::vector<size_t> a2a;
  for (size_t i = 0; i < calls->size(); ++i) {
    if ((*calls)[i].type == "alltoall") a2a.push_back(i);
  }
  if (a2a.empty()) return;
  std::vector<int64_t> anchor(launch_ns.begin(), launch_ns.end());
  anchor.resize(calls->size(), 0);

  // gloo: the split sizes are only in the Concrete Inputs of the c10d::alltoall_base_ op that queued the
  // call, on the calling thread (which is also inside the caller's annotations).
  const trace::EventTable& ev = trace.events;
  const trace::ShapesTable& st = trace.shapes;
  std::vector<uint32_t> ops;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (trace::is_cpu_op_category(ev.cat[i]) && ev.phase[i] == trace::Phase::kComplete &&
        trace.name(i) == "c10d::alltoall_base_") {
      ops.push_back(static_cast<uint32_t>(i));
    }
  }
  std::vector<size_t> cpu_calls;
  for (size_t i : a2a) {
    if (!(*calls)[i].device) cpu_calls.push_back(i);
  }
  if (!ops.empty() && ops.size() == cpu_calls.size()) {
    std::stable_sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) { return ev.ts[a] < ev.ts[b]; });
    std::stable_sort(cpu_calls.begin(), cpu_calls.end(),
                     [&](size_t a, size_t b) { return (*calls)[a].start_ns < (*calls)[b].start_ns; });
    for (size_t k = 0; k < ops.size(); ++k) {
      CollectiveCall& call = (*calls)[cpu_calls[k]];
      const uint32_t op = ops[k];
      anchor[cpu_calls[k]] = ev.ts[op];
      auto row = std::lower_bound(st.event.begin(), st.event.end(), op);
      if (row == st.event.end() || *row != op) continue;
      const size_t r = static_cast<size_t>(row - st.event.begin());
      const auto concrete = a2a_string_list(trace.strings.view(st.concrete_inputs[r]));
      const auto types = a2a_string_list(trace.strings.view(st.input_types[r]));
      if (!concrete || concrete->size() < 5 || !types || types->size() < 2) continue;
      const std::string_view dims = trace.strings.view(st.input_dims[r]);
      const int64_t out_nelems = a2a_tensor_elements(dims, 0).value_or(-1);
      const int64_t in_nelems = a2a_tensor_elements(dims, 1).value_or(-1);
      const int64_t elem = dtype_bytes((*types)[1]).value_or(-1);
      if (call.in_split_bytes.empty()) call.in_split_bytes = alltoall_split_bytes((*concrete)[4], in_nelems, elem);
      if (call.out_split_bytes.empty()) call.out_split_bytes = alltoall_split_bytes((*concrete)[3], out_nelems, elem);
    }
  }

  const AnnotationIndex annotations(trace);
  for (size_t i : a2a) (*calls)[i].annotation = std::string(annotations.at(anchor[i]));
}

void fill_alltoall_peers(std::span<const AlltoallRankPart> parts, const std::vector<int64_t>& members,
                         MatchedCollective* m) {
  if (parts.size() < 2) return;
  const int64_t n = m->group_size > 0 ? m->group_size : static_cast<int64_t>(parts.size());
  if (n < 2) return;
  std::vector<int64_t> order = members;
  if (order.empty()) {
    for (const AlltoallRankPart& p : parts) {
      if (p.rank >= n) return;  // not the default group: no position for the rank
    }
    for (int64_t r = 0; r < n; ++r) order.push_back(r);
  }
  int64_t max = -1, sum = 0, pairs = 0;
  bool every_vector = true, some_vector = false;
  for (const AlltoallRankPart& p : parts) {
    const bool vector = p.peers != nullptr && p.peers->placed && p.peers->members == static_cast<int64_t>(order.size());
    every_vector &= vector;
    some_vector |= vector;
    if (p.peers != nullptr && p.peers->overflow) return;
    if (vector) {
      if (!add_checked(&sum, p.peers->sum)) return;
      max = std::max(max, p.peers->max);
      pairs += p.peers->peers;
    } else if (p.sent >= 0) {
      // Equal splits: the message size / n to each member, n − 1 of them peers.
      const int64_t share = p.sent / n;
      int64_t peers_bytes = 0;
      if (!multiply_checked(&peers_bytes, share, n - 1) || !add_checked(&sum, peers_bytes)) return;
      max = std::max(max, share);
      pairs += n - 1;
    } else {
      return;  // a rank sending an unknown amount: no figure
    }
  }
  if (pairs == 0 || max < 0) return;
  m->peer_max = max;
  m->peer_mean = static_cast<double>(sum) / static_cast<double>(pairs);
  if (m->peer_mean > 0) m->peer_imbalance = static_cast<double>(max) / m->peer_mean;
  m->peer_splits = some_vector;
  if (every_vector) {
    std::vector<AlltoallPeerRow> rows;
    bool whole = true;
    for (const AlltoallRankPart& p : parts) {
      whole &= p.peers->top.size() == order.size();
      for (const AlltoallPeerEntry& e : p.peers->top) rows.push_back({p.rank, order[e.member], e.bytes});
    }
    if (rows.size() > kAlltoallPeerRows) {
      whole = false;
      std::nth_element(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(kAlltoallPeerRows), rows.end(),
                       [](const AlltoallPeerRow& a, const AlltoallPeerRow& b) {
                         if (a.bytes != b.bytes) return a.bytes > b.bytes;
                         return a.rank != b.rank ? a.rank < b.rank : a.peer < b.peer;
                       });
      rows.resize(kAlltoallPeerRows);
    }
    std::sort(rows.begin(), rows.end(), [](const AlltoallPeerRow& a, const AlltoallPeerRow& b) {
      return a.rank != b.rank ? a.rank < b.rank : a.peer < b.peer;
    });
    m->peer_rows = std::move(rows);
    m->peer_rows_whole = whole;
  }
}

double alltoall_balanced_share(const MatchedCollective& m) {
  if (m.type != "alltoall" || !(m.peer_max > 0) || !(m.peer_mean >= 0)) return -1;
  return std::min(1.0, m.peer_mean / static_cast<double>(m.peer_max));
}

AlltoallCosts alltoall_costs(const CollectiveAnalysis& a) {
  AlltoallCosts out;
  std::map<int64_t, AlltoallSum> steps;
  std::map<std::string, AlltoallSum> names;
  for (size_t i = 0; i < a.calls.size(); ++i) {
    const MatchedCollective& m = a.calls[i];
    if (m.type != "alltoall" || m.status == MatchStatus::kUnmatched || m.latency_ns < 0) continue;
    AlltoallCost c;
    c.call = i;
    if (const double balanced = alltoall_balanced_share(m); balanced >= 0) {
      c.cost_ns = std::llround(static_cast<double>(m.latency_ns) * (1.0 - balanced));
    }
    out.calls.push_back(c);
    for (AlltoallSum* s : {&steps[m.step], &names[m.annotation]}) {
      ++s->calls;
      s->exact = add_checked(&s->latency_ns, m.latency_ns) && s->exact;
      s->exact = add_checked(&s->cost_ns, std::max<int64_t>(c.cost_ns, 0)) && s->exact;
      s->exact = add_checked(&s->bytes_max, std::max<int64_t>(m.peer_max, 0)) && s->exact;
    }
  }
  for (auto& [step, s] : steps) {
    s.step = step;
    s.key = step < 0 ? std::string() : fmt::format("{}", step);
    out.by_step.push_back(s);
  }
  for (auto& [name, s] : names) {
    s.key = name;
    out.by_annotation.push_back(s);
  }
  return out;
}

}  // namespace scaleprof::analysis

#include "analysis/pipeline_bubbles.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "analysis/collective_calls.h"
#include "analysis/device_events.h"
#include "analysis/flop_formulas.h"
#include "analysis/intervals.h"
#include "analysis/kernel_classify.h"
#include "analysis/phases.h"
#include "core/number_text.h"

namespace scaleprof::analysis {

namespace {

enum class P2pKind : uint8_t { kNone, kSendCall, kRecvCall, kRecvSpan, kSendSpan };

// What an event is to the pipeline by its name: a call with a peer (the c10d ops), or a span of a
// transfer only (gloo's and NCCL's own spans, from the call until the transfer is done).
P2pKind p2p_kind(std::string_view name) {
  if (name == "c10d::send") return P2pKind::kSendCall;
  if (name == "c10d::recv_" || name == "c10d::recv_any_source_") return P2pKind::kRecvCall;
  if (name == "gloo:recv" || name == "nccl:recv") return P2pKind::kRecvSpan;
  if (name == "gloo:send" || name == "nccl:send") return P2pKind::kSendSpan;
  return P2pKind::kNone;
}

// The step of `steps` (by start, disjoint) whose window holds t, or -1.
int64_t pipeline_step_index(const std::vector<ProfilerStepWindow>& steps, int64_t t) {
  auto it = std::upper_bound(steps.begin(), steps.end(), t,
                             [](int64_t x, const ProfilerStepWindow& w) { return x < w.start_ns; });
  if (it == steps.begin()) return -1;
  --it;
  return t < it->end_ns ? it - steps.begin() : -1;
}

// A send or receive's process-group metadata (record_param_comms, or an NCCL kernel's copy of it): where
// it was issued (the op's start, or the kernel's launch) on which thread, and its group-local peer.
struct PipelineGroupPeer {
  int64_t at_ns = 0;
  bool send = false;
  int64_t local_peer = -1;
  trace::StringId group_ranks = 0;  // Process Group Ranks, raw text ("" absent)
};

// The group metadata of the rank's sends and receives, per thread by issue time.
std::map<uint32_t, std::vector<PipelineGroupPeer>> pipeline_group_peers(const trace::RankTrace& trace) {
  std::map<uint32_t, std::vector<PipelineGroupPeer>> out;
  const trace::EventTable& ev = trace.events;
  const trace::CollectiveTable& ct = trace.collectives;
  std::vector<int64_t> launches;  // computed when a kernel carries the metadata
  for (size_t r = 0; r < ct.size(); ++r) {
    if (ct.peer_rank[r] < 0) continue;
    const std::string_view name = trace.strings.view(ct.collective_name[r]);
    if (name != "send" && name != "recv") continue;
    size_t issue = ct.event[r];
    if (is_stream_work(ev.cat[issue])) {
      if (launches.empty()) launches = launch_rows(trace);
      if (launches[issue] < 0) continue;
      issue = static_cast<size_t>(launches[issue]);
    } else if (!trace::is_cpu_op_category(ev.cat[issue])) {
      continue;
    }
    out[ev.track[issue]].push_back({ev.ts[issue], name == "send", ct.peer_rank[r], ct.process_group_ranks[r]});
  }
  for (auto& [track, peers] : out) {
    std::stable_sort(peers.begin(), peers.end(),
                     [](const PipelineGroupPeer& a, const PipelineGroupPeer& b) { return a.at_ns < b.at_ns; });
  }
  return out;
}

// The union of the rank's device computation (kernel_classify.h), over the whole trace.
std::vector<Interval> pipeline_device_compute(const trace::RankTrace& trace) {
  const trace::EventTable& ev = trace.events;
  KernelNameTypes types(trace.strings);
  std::vector<Interval> compute;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.phase[i] != trace::Phase::kComplete || !is_stream_work(ev.cat[i])) continue;
    const KernelType type =
        ev.cat[i] == trace::Category::kKernel ? types.of(ev.name[i]) : classify_device_event(ev.cat[i], trace.name(i));
    if (type == KernelType::kComputation) compute.push_back({ev.ts[i], ev.end(i)});
  }
  return union_intervals(std::move(compute));
}

// A group smaller than the world in distributedInfo.pg_config: peers of group-less calls may be group ranks.
bool pipeline_has_subgroups(const trace::RankTrace& trace) {
  const auto& d = trace.metadata.distributed;
  if (!d || !d->world_size) return false;
  for (const trace::ProcessGroupConfig& g : d->pg_config) {
    const int64_t size = g.size >= 0 ? g.size : static_cast<int64_t>(g.ranks.size());
    if (size > 0 && size < *d->world_size) return true;
  }
  return false;
}

double pipeline_median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2.0;
}

}  // namespace

const char* pipeline_basis_name(PipelineBasis basis) {
  return basis == PipelineBasis::kDevice ? "device" : "host";
}

RankPipeline rank_pipeline(const trace::RankTrace& trace, bool include_last_step) {
  RankPipeline out;
  out.rank = trace.rank;
  out.path = trace.path;
  const std::vector<ProfilerStepWindow> windows = analysed_steps(trace, include_last_step);
  const trace::EventTable& ev = trace.events;
  // Each name decided once: a trace repeats a few thousand names millions of times.
  constexpr uint8_t kUnknown = 0xFF;
  std::vector<uint8_t> kind_of_name(trace.strings.size(), kUnknown);
  auto kind_of = [&](size_t i) {
    uint8_t& k = kind_of_name[static_cast<size_t>(ev.name[i])];
    if (k == kUnknown) k = static_cast<uint8_t>(p2p_kind(trace.name(i)));
    return static_cast<P2pKind>(k);
  };

  // The peer of each P2P call, from its Concrete Inputs (the shapes table lists only the events that
  // have shapes, so it is walked, not searched per event).
  std::map<uint32_t, int64_t> peer_of;
  for (size_t r = 0; r < trace.shapes.size(); ++r) {
    const uint32_t e = trace.shapes.event[r];
    const P2pKind kind = p2p_kind(trace.name(e));
    if (kind != P2pKind::kSendCall && kind != P2pKind::kRecvCall) continue;
    const std::string_view dims = trace.strings.view(trace.shapes.input_dims[r]);
    const auto inputs =
        parse_op_inputs(dims.empty() ? "[]" : dims, "", trace.strings.view(trace.shapes.concrete_inputs[r]));
    if (!inputs || inputs->concrete.size() < 3) continue;
    if (auto peer = parse_int64(inputs->concrete[2]); peer && *peer >= 0) peer_of[e] = *peer;
  }

  // The calls' process groups, where the trace records them (NCCL), map group-local peers to global ranks.
  const std::map<uint32_t, std::vector<PipelineGroupPeer>> group_peers = pipeline_group_peers(trace);
  out.subgroups = pipeline_has_subgroups(trace);
  // The global peer of call i (-1: none), from its group metadata, else its Concrete Inputs.
  auto global_peer = [&](size_t i, bool send) -> int64_t {
    int64_t group_local = -1;  // a Dst/Src Rank without its group's ranks
    if (auto t = group_peers.find(ev.track[i]); t != group_peers.end()) {
      auto it = std::lower_bound(t->second.begin(), t->second.end(), ev.ts[i],
                                 [](const PipelineGroupPeer& p, int64_t ts) { return p.at_ns < ts; });
      for (; it != t->second.end() && it->at_ns <= ev.end(i); ++it) {
        if (it->send != send) continue;
        const std::string_view text = trace.strings.view(it->group_ranks);
        const auto ranks = text.empty() ? std::nullopt : parse_int_list(text);
        if (!ranks || ranks->empty()) {  // no group's ranks: the rank within the group, as Concrete Inputs
          group_local = it->local_peer;
          break;
        }
        if (it->local_peer >= static_cast<int64_t>(ranks->size()) ||
            (*ranks)[static_cast<size_t>(it->local_peer)] < 0) {
          ++out.calls_peer_outside_group;
          return -1;
        }
        return (*ranks)[static_cast<size_t>(it->local_peer)];
      }
    }
    auto peer = peer_of.find(static_cast<uint32_t>(i));
    if (peer != peer_of.end()) group_local = peer->second;
    if (group_local < 0) {
      ++out.calls_without_peer;
      return -1;
    }
    ++out.calls_peer_unmapped;
    return group_local;
  };

  // Per step: its thread's P2P spans and other operators, and the calls with their peers.
  std::vector<std::vector<Interval>> p2p(windows.size()), ops(windows.size());
  std::vector<int64_t> first_start(windows.size(), std::numeric_limits<int64_t>::max());
  out.steps.resize(windows.size());
  std::map<std::pair<int64_t, int64_t>, PipelinePeerCalls> calls;  // by (step, peer)
  for (size_t s = 0; s < windows.size(); ++s) {
    PipelineStepWait& w = out.steps[s];
    w.step = windows[s].step;
    w.start_ns = windows[s].start_ns;
    w.end_ns = windows[s].end_ns;
  }
  for (size_t i = 0; i < ev.size(); ++i) {
    if (is_stream_work(ev.cat[i])) out.device = true;
    if (!trace::is_cpu_op_category(ev.cat[i]) || ev.phase[i] != trace::Phase::kComplete) continue;
    const P2pKind kind = kind_of(i);
    const int64_t s = pipeline_step_index(windows, ev.ts[i]);
    if (s < 0) {
      if (kind == P2pKind::kSendCall || kind == P2pKind::kRecvCall) ++out.calls_outside_steps;
      continue;
    }
    if (ev.track[i] != ev.track[windows[s].event]) continue;  // the step's own thread only
    if (kind == P2pKind::kNone) {
      // Operators (not annotations, which may enclose a whole schedule) are compute.
      if (ev.cat[i] == trace::Category::kCpuOp) ops[s].push_back({ev.ts[i], ev.end(i)});
      continue;
    }
    // A transfer's own span lasts until it is done: a receive until its data is there, a send until the
    // peer has taken it (GPipe waits for its forward sends before its backward). The operators the
    // stage runs meanwhile are taken out below.
    p2p[s].push_back({ev.ts[i], ev.end(i)});
    if (kind == P2pKind::kRecvSpan || kind == P2pKind::kSendSpan) continue;
    PipelineStepWait& w = out.steps[s];
    const bool send = kind == P2pKind::kSendCall;
    (send ? w.sends : w.recvs) += 1;
    if (ev.ts[i] < first_start[s]) {
      first_start[s] = ev.ts[i];
      w.first_p2p = send ? 1 : -1;
    }
    const int64_t peer = global_peer(i, send);
    if (peer < 0) continue;
    PipelinePeerCalls& c = calls[{w.step, peer}];
    c.step = w.step;
    c.peer = peer;
    (send ? c.sends : c.recvs) += 1;
  }
  for (size_t s = 0; s < windows.size(); ++s) {
    const std::vector<Interval> spans =
        clip_intervals(union_intervals(std::move(p2p[s])), windows[s].start_ns, windows[s].end_ns);
    // An operator enclosing a P2P call (a wrapper around the send) is not compute beside it.
    std::vector<Interval> compute;
    for (const Interval& op : ops[s]) {
      auto it = std::lower_bound(spans.begin(), spans.end(), op.start,
                                 [](const Interval& a, int64_t t) { return a.end <= t; });
      const bool encloses = it != spans.end() && it->start >= op.start && it->end <= op.end;
      if (!encloses) compute.push_back(op);
    }
    out.steps[s].wait_ns = total_length(subtract_intervals(spans, union_intervals(std::move(compute))));
  }
  // The device pass only where the rank takes part in P2P at all: most GPU traces are not pipelines, and
  // `trace summary` runs this analysis on every rank.
  bool any_p2p = out.calls_outside_steps > 0;
  for (const PipelineStepWait& w : out.steps) any_p2p |= w.sends + w.recvs > 0;
  if (out.device && any_p2p) {
    const std::vector<Interval> compute = pipeline_device_compute(trace);
    for (PipelineStepWait& w : out.steps) {
      w.device_wait_ns = w.duration_ns() - total_length(clip_intervals(compute, w.start_ns, w.end_ns));
    }
  }
  for (auto& [key, c] : calls) out.peers.push_back(c);
  return out;
}

namespace {

struct PipelineRankIndex {
  std::map<int64_t, const RankPipeline*> by_rank;
  // Calls summed over steps, by (from, to): sends of `from` to `to`, and receives of `to` from `from`.
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> edges;
};

// The chain of `members` joined by `neighbours`, from one end; empty when not a chain.
std::vector<int64_t> pipeline_chain_order(const std::set<int64_t>& members,
                                          const std::map<int64_t, std::set<int64_t>>& neighbours,
                                          const PipelineRankIndex& index) {
  std::vector<int64_t> ends;
  for (int64_t r : members) {
    const size_t degree = neighbours.at(r).size();
    if (degree > 2) return {};
    if (degree == 1) ends.push_back(r);
  }
  if (ends.size() != 2) return {};
  // The end whose steps mostly start with a send is the first stage.
  auto starts_sending = [&](int64_t rank) {
    int64_t votes = 0;
    for (const PipelineStepWait& s : index.by_rank.at(rank)->steps) votes += s.first_p2p;
    return votes;
  };
  int64_t first = std::min(ends[0], ends[1]);
  const int64_t v0 = starts_sending(ends[0]), v1 = starts_sending(ends[1]);
  if (v0 > 0 && v0 > v1) first = ends[0];
  if (v1 > 0 && v1 > v0) first = ends[1];
  std::vector<int64_t> order = {first};
  int64_t prev = -1;
  while (order.size() < members.size()) {
    int64_t next = -1;
    for (int64_t n : neighbours.at(order.back())) {
      if (n != prev) next = n;
    }
    if (next < 0) return {};
    prev = order.back();
    order.push_back(next);
  }
  return order;
}

}  // namespace

PipelineAnalysis analyse_pipeline(std::span<const RankPipeline> ranks) {
  PipelineAnalysis out;
  PipelineRankIndex index;
  for (const RankPipeline& r : ranks) {
    if (!index.by_rank.emplace(r.rank, &r).second) {
      out.notes.push_back(fmt::format("rank {} appears twice ({}): its second trace is left out", r.rank, r.path));
    }
  }
  std::map<int64_t, std::set<int64_t>> neighbours;
  std::set<std::pair<int64_t, int64_t>> missing_peer;
  // One note per kind, naming the ranks (thousands of ranks give a few notes, not thousands).
  std::vector<int64_t> peerless_ranks, outside_group_ranks, unmapped_ranks;
  int64_t peerless_calls = 0, outside_group_calls = 0;
  for (const auto& [rank, r] : index.by_rank) {
    if (r->calls_peer_outside_group > 0) {
      outside_group_ranks.push_back(rank);
      outside_group_calls += r->calls_peer_outside_group;
    }
    if (r->subgroups && r->calls_peer_unmapped > 0) unmapped_ranks.push_back(rank);
    if (r->calls_without_peer > 0) {
      peerless_ranks.push_back(rank);
      peerless_calls += r->calls_without_peer;
    }
    for (const PipelinePeerCalls& c : r->peers) {
      if (c.peer == rank) continue;
      if (!index.by_rank.contains(c.peer)) {
        missing_peer.insert({rank, c.peer});
        continue;
      }
      if (c.sends > 0) index.edges[{rank, c.peer}].first += c.sends;
      if (c.recvs > 0) index.edges[{c.peer, rank}].second += c.recvs;
      neighbours[rank].insert(c.peer);
      neighbours[c.peer].insert(rank);
    }
  }
  if (!outside_group_ranks.empty()) {
    out.notes.push_back(
        fmt::format("ranks {}: {} send/recv calls whose Dst/Src Rank is not a position in their Process Group Ranks "
                    "(malformed group metadata): left out of the stage order",
                    format_rank_list(outside_group_ranks), outside_group_calls));
  }
  if (!unmapped_ranks.empty()) {
    out.notes.push_back(fmt::format(
        "ranks {}: their traces list process groups smaller than the world (distributedInfo.pg_config) but their "
        "send/recv calls do not say their group's ranks (gloo records no Process Group Ranks): the peers are taken "
        "as global ranks, wrong where the pipeline runs over a subgroup",
        format_rank_list(unmapped_ranks)));
  }
  if (!peerless_ranks.empty()) {
    out.notes.push_back(fmt::format(
        "ranks {}: {} send/recv calls without their peer rank (profile with record_shapes=True, PyTorch >= 2.4): left "
        "out of the stage order",
        format_rank_list(peerless_ranks), peerless_calls));
  }
  // Pairs are listed up to kListedPairs of each kind, then counted.
  constexpr size_t kListedPairs = 10;
  size_t listed = 0;
  for (const auto& [rank, peer] : missing_peer) {
    if (++listed > kListedPairs) {
      out.notes.push_back(
          fmt::format("... and {} more pairs with a peer without a trace", missing_peer.size() - kListedPairs));
      break;
    }
    out.notes.push_back(
        fmt::format("rank {} sends to or receives from rank {}, which has no trace here: {} left out "
                    "of the stage order",
                    rank, peer, peer));
  }
  size_t unmatched = 0;
  for (const auto& [edge, counts] : index.edges) {
    if (counts.first != counts.second && ++unmatched <= kListedPairs) {
      out.notes.push_back(
          fmt::format("rank {} sent {} messages to rank {}, which received {} from it in the analysed "
                      "steps (steps profiled differently, or unmatched sends)",
                      edge.first, counts.first, edge.second, counts.second));
    }
  }
  if (unmatched > kListedPairs) {
    out.notes.push_back(fmt::format("... and {} more pairs whose sends and receives differ", unmatched - kListedPairs));
  }
  // Connected groups of ranks, each a pipeline when it is a chain.
  std::set<int64_t> seen;
  for (const auto& [start, unused] : neighbours) {
    if (seen.contains(start)) continue;
    std::set<int64_t> members;
    std::vector<int64_t> todo = {start};
    while (!todo.empty()) {
      const int64_t r = todo.back();
      todo.pop_back();
      if (!members.insert(r).second) continue;
      for (int64_t n : neighbours[r]) todo.push_back(n);
    }
    seen.insert(members.begin(), members.end());
    const std::vector<int64_t> order = pipeline_chain_order(members, neighbours, index);
    if (order.empty()) {
      out.notes.push_back(
          fmt::format("ranks {} exchange point-to-point messages but not as one chain of stages "
                      "(interleaved or virtual stages, or send/recv other than a pipeline's): left out",
                      format_rank_list(std::vector<int64_t>(members.begin(), members.end()))));
      continue;
    }
    Pipeline p;
    p.index = static_cast<int64_t>(out.pipelines.size());
    p.ranks = order;
    const auto stages = static_cast<int64_t>(order.size());
    // m: the first stage's sends to the second, per step.
    std::map<int64_t, int64_t> m_of_step;
    for (const PipelinePeerCalls& c : index.by_rank.at(order[0])->peers) {
      if (c.peer == order[1]) m_of_step[c.step] += c.sends;
    }
    std::vector<double> ms;
    for (const auto& [step, m] : m_of_step) {
      if (m > 0) ms.push_back(static_cast<double>(m));
    }
    const double m_median = pipeline_median(ms);
    p.micro_batches = std::isnan(m_median) ? -1 : std::llround(m_median);
    p.ideal_fraction = p.micro_batches > 0
                           ? static_cast<double>(stages - 1) / static_cast<double>(p.micro_batches + stages - 1)
                           : std::numeric_limits<double>::quiet_NaN();
    const size_t first_stage = out.stages.size();
    for (int64_t k = 0; k < stages; ++k) {
      const RankPipeline& r = *index.by_rank.at(order[static_cast<size_t>(k)]);
      PipelineStage st;
      st.pipeline = p.index;
      st.stage = k;
      st.rank = r.rank;
      st.prev_rank = k > 0 ? order[static_cast<size_t>(k - 1)] : -1;
      st.next_rank = k + 1 < stages ? order[static_cast<size_t>(k + 1)] : -1;
      st.ideal_fraction = p.ideal_fraction;
      st.basis = r.device ? PipelineBasis::kDevice : PipelineBasis::kHost;
      std::vector<double> step_ns, busy_ns, bubble_ns;
      for (const PipelineStepWait& s : r.steps) {
        PipelineStageStep row;
        row.pipeline = p.index;
        row.stage = k;
        row.rank = r.rank;
        row.step = s.step;
        row.step_ns = s.duration_ns();
        row.basis = st.basis;
        row.host_wait_ns = s.wait_ns;
        row.bubble_ns = std::min(st.basis == PipelineBasis::kDevice ? s.device_wait_ns : s.wait_ns, row.step_ns);
        row.busy_ns = row.step_ns - row.bubble_ns;
        row.bubble_fraction = row.step_ns > 0 ? static_cast<double>(row.bubble_ns) / static_cast<double>(row.step_ns)
                                              : std::numeric_limits<double>::quiet_NaN();
        if (auto it = m_of_step.find(s.step); it != m_of_step.end()) row.micro_batches = it->second;
        out.rows.push_back(row);
        step_ns.push_back(static_cast<double>(row.step_ns));
        busy_ns.push_back(static_cast<double>(row.busy_ns));
        bubble_ns.push_back(static_cast<double>(row.bubble_ns));
      }
      st.steps = static_cast<int64_t>(r.steps.size());
      st.step_ns = pipeline_median(step_ns);
      st.busy_ns = pipeline_median(busy_ns);
      st.bubble_ns = pipeline_median(bubble_ns);
      st.bubble_fraction = st.step_ns > 0 ? st.bubble_ns / st.step_ns : std::numeric_limits<double>::quiet_NaN();
      if (r.steps.empty()) {
        out.notes.push_back(
            fmt::format("rank {} ({}): no ProfilerStep in the analysed window, so no bubble per step "
                        "(profile with a torch.profiler schedule and call prof.step())",
                        r.rank, r.path));
      }
      out.stages.push_back(st);
    }
    // The slowest stage, named when the stages are unbalanced.
    const auto begin = out.stages.begin() + static_cast<std::ptrdiff_t>(first_stage);
    auto valid = [](const PipelineStage& s) { return s.steps > 0 && !std::isnan(s.busy_ns); };
    auto slowest = out.stages.end(), fastest = out.stages.end();
    for (auto it = begin; it != out.stages.end(); ++it) {
      if (!valid(*it)) continue;
      if (slowest == out.stages.end() || it->busy_ns > slowest->busy_ns) slowest = it;
      if (fastest == out.stages.end() || it->busy_ns < fastest->busy_ns) fastest = it;
    }
    if (slowest != out.stages.end() && fastest->busy_ns > 0) {
      p.busy_ratio = slowest->busy_ns / fastest->busy_ns;
      if (p.busy_ratio > kUnbalancedRatio) {
        p.slowest_rank = slowest->rank;
        slowest->slowest = true;
      }
    } else {
      p.busy_ratio = std::numeric_limits<double>::quiet_NaN();
    }
    out.pipelines.push_back(std::move(p));
  }
  if (out.pipelines.empty() && !index.by_rank.empty()) {
    bool any_p2p = false;
    for (const auto& [rank, r] : index.by_rank) {
      any_p2p |= !r->peers.empty() || r->calls_without_peer > 0;
      for (const PipelineStepWait& s : r->steps) any_p2p |= s.sends + s.recvs > 0;
    }
    out.notes.push_back(any_p2p ? "no pipeline of two or more ranks with traces: every stage's trace is needed to "
                                  "order the stages"
                                : "no point-to-point send/recv in the analysed steps: not a pipeline-parallel run");
  }
  return out;
}

}  // namespace scaleprof::analysis

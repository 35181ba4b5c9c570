#include "engine/step_timeline_build.h"

#include "analysis/all_to_all_cost.h"
#include "engine/rank_stream.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

namespace scaleprof::engine {

namespace {

// The step of `d` holding instant t (on the rank's clock) and the parts so far at t, if t is one of
// its cuts.
struct CutAt {
  size_t step = 0;
  const analysis::StepCut* cut = nullptr;
};

std::optional<CutAt> find_cut(const analysis::RankDecomposition& d, int64_t t) {
  auto cut = std::lower_bound(d.cuts.begin(), d.cuts.end(), t,
                              [](const analysis::StepCut& c, int64_t x) { return c.time_ns < x; });
  if (cut == d.cuts.end() || cut->time_ns != t) return std::nullopt;
  return CutAt{cut->step, &*cut};
}

tables::TimelineParts minus(const std::array<int64_t, analysis::kStepPartCount>& a,
                            const std::array<int64_t, analysis::kStepPartCount>& b) {
  tables::TimelineParts out{};
  for (size_t k = 0; k < out.size(); ++k) out[k] = a[k] - b[k];
  return out;
}

}  // namespace

std::vector<int64_t> collective_cuts(const analysis::RankCollectives& collectives) {
  std::vector<int64_t> out;
  out.reserve(collectives.calls.size());
  for (const analysis::CollectiveCall& c : collectives.calls) out.push_back(c.start_ns);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

tables::RunTimeline build_step_timeline(std::span<const RankSteps> ranks, const analysis::CollectiveAnalysis& matched,
                                        const std::vector<std::string>& targets) {
  static_assert(tables::kTimelineParts == analysis::kStepPartCount);
  tables::RunTimeline out;
  out.targets = targets;
  std::map<int64_t, const analysis::RankDecomposition*> by_rank;
  std::map<int64_t, const std::vector<analysis::Intervals>*> targets_of;
  for (const RankSteps& r : ranks) {
    if (r.steps != nullptr && !r.steps->steps.empty()) by_rank[r.rank] = r.steps;
    if (r.targets != nullptr) targets_of[r.rank] = r.targets;
  }
  // Per target, its time on the rank in [from, to) of the rank's own clock.
  auto timed = [&](int64_t rank, int64_t from, int64_t to) {
    std::vector<int64_t> ns(targets.size(), 0);
    auto it = targets_of.find(rank);
    if (it == targets_of.end()) return ns;
    for (size_t k = 0; k < ns.size() && k < it->second->size(); ++k) {
      ns[k] = analysis::covered_ns((*it->second)[k], from, to);
    }
    return ns;
  };
  std::map<int64_t, int64_t> offset;  // rank -> its host's offset (aligned = raw - offset)
  for (const analysis::HostClock& h : matched.clocks) {
    for (int64_t r : h.ranks) offset[r] = h.offset_ns;
  }
  // Per rank and step: (raw arrival, call) of the calls that are joins.
  std::map<std::pair<int64_t, size_t>, std::vector<std::pair<const analysis::StepCut*, int64_t>>> arrivals;
  std::map<std::string, int64_t> groups;
  for (const analysis::MatchedCollective& m : matched.calls) {
    if (m.status != analysis::MatchStatus::kMatched || m.ranks.size() < 2) continue;
    std::vector<std::pair<std::pair<int64_t, size_t>, const analysis::StepCut*>> where;
    for (const analysis::RankTiming& t : m.ranks) {
      auto d = by_rank.find(t.rank);
      if (d == by_rank.end()) break;
      const std::optional<CutAt> at = find_cut(*d->second, t.start_ns + offset[t.rank]);
      if (!at) break;
      where.push_back({{t.rank, at->step}, at->cut});
    }
    if (where.size() != m.ranks.size()) continue;  // not a join on every rank: left to their own work
    const auto call = static_cast<int64_t>(out.calls.size());
    tables::TimelineCall c;
    c.group = groups.emplace(m.group, static_cast<int64_t>(groups.size())).first->second;
    c.bytes = m.bytes;
    c.type = m.type;
    c.busbw_gbps = m.busbw_gbps;
    // Balancing an all-to-all is a what-if only where its splits were seen: equal splits assumed for ranks
    // without them are no imbalance to remove.
    if (m.peer_splits) c.alltoall_balance = analysis::alltoall_balanced_share(m);
    for (const analysis::RankTiming& t : m.ranks) c.ranks.push_back({t.rank, t.start_ns, t.end_ns});
    std::sort(c.ranks.begin(), c.ranks.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    out.calls.push_back(std::move(c));
    for (const auto& [key, cut] : where) arrivals[key].push_back({cut, call});
  }
  for (const auto& [rank, d] : by_rank) {
    const int64_t shift = offset[rank];
    for (size_t s = 0; s < d->steps.size(); ++s) {
      const analysis::StepDecomposition& st = d->steps[s];
      tables::TimelineStep step;
      step.rank = rank;
      step.step = st.step;
      step.start_ns = st.start_ns - shift;
      std::array<int64_t, analysis::kStepPartCount> before{};
      int64_t from = st.start_ns;  // the previous join, on the rank's own clock
      auto it = arrivals.find({rank, s});
      if (it != arrivals.end()) {
        std::vector<std::pair<const analysis::StepCut*, int64_t>>& list = it->second;
        std::stable_sort(list.begin(), list.end(),
                         [](const auto& a, const auto& b) { return a.first->time_ns < b.first->time_ns; });
        for (const auto& [cut, call] : list) {
          step.joins.push_back(
              {call, cut->time_ns - shift, minus(cut->part_ns, before), timed(rank, from, cut->time_ns)});
          before = cut->part_ns;
          from = cut->time_ns;
        }
      }
      step.joins.push_back({-1, st.end_ns - shift, minus(st.part_ns, before), timed(rank, from, st.end_ns)});
      out.steps.push_back(std::move(step));
    }
  }
  return out;
}

Result<TimelineRead> read_step_timeline(const std::vector<std::string>& paths, const trace::LoadOptions& load,
                                        const std::vector<std::string>& targets) {
  struct Steps {
    int64_t rank = 0;
    analysis::RankDecomposition steps;
    std::vector<analysis::Intervals> targets;
  };
  auto reduce = [&targets](const trace::RankTrace& rank, unsigned /*threads_per_file*/) {
    RankReduction<Steps> out;
    out.collectives = analysis::extract_collectives(rank);
    out.parts = Steps{rank.rank, analysis::decompose_steps(rank, false, collective_cuts(*out.collectives)),
                      analysis::named_intervals(rank, targets)};
    return out;
  };
  auto every_rank = [](int64_t) { return true; };
  std::vector<Steps> parts;
  auto reduced = reduce_ranks(paths, load, reduce, every_rank, &parts);
  if (!reduced) return reduced.error();
  TimelineRead out;
  out.set = std::move(reduced.value().set);
  out.repair_notes = std::move(reduced.value().repair_notes);
  std::vector<RankSteps> ranks;
  for (const Steps& p : parts) {
    ranks.push_back({p.rank, &p.steps, &p.targets});
    if (p.steps.steps.empty()) ++out.ranks_without_steps;
  }
  out.timeline = build_step_timeline(ranks, analysis::match_collectives(reduced.value().rows), targets);
  return out;
}

}  // namespace scaleprof::engine

#include "analysis/whatif.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "analysis/scaling.h"

namespace scaleprof::analysis {

namespace {

using tables::RunTimeline;
using tables::TimelineJoin;
using tables::TimelineStep;

// a - b without int64 overflow (timelines come from files: never trusted to keep differences in range).
// Exact in integers first: absolute times (ns since 1970, ~1.7e18) as doubles are only good to 256 ns,
// which summed over steps made a fix that changes nothing "gain" microseconds.
double diff(int64_t a, int64_t b) {
  return static_cast<double>(static_cast<__int128>(a) - static_cast<__int128>(b));
}

constexpr size_t kExposed = 1;  // tables::TimelineParts: exposed communication
constexpr size_t kWait = 2;     // collective wait (0 in timelines; counted as blocked if present)

// The k-th smallest of `sorted` without its element at index `skip`.
double kth_without(const std::vector<double>& sorted, size_t skip, size_t k) {
  return sorted[k < skip ? k : k + 1];
}

// The median of `sorted` without its element at index `skip` (n >= 2).
double median_without(const std::vector<double>& sorted, size_t skip) {
  const size_t n = sorted.size() - 1;
  if (n % 2 == 1) return kth_without(sorted, skip, n / 2);
  return 0.5 * (kth_without(sorted, skip, n / 2 - 1) + kth_without(sorted, skip, n / 2));
}

// Every join of the timeline, with what the replay needs of it.
struct Join {
  size_t step = 0;   // index into RunTimeline::steps
  size_t index = 0;  // index into its joins
  int64_t rank = 0;
  int64_t time_ns = 0;
  double work_ns = 0;     // local work since the previous join, re-scaled
  double scale = 1.0;     // re-scaled / measured local work (part_scale alone): the work after a completion
  double capped_ns = 0;   // work removed by the cap at the median, taken first from the work after a completion
  double blocked_ns = 0;  // exposed communication (and wait) since the previous join
  int64_t slot = -1;      // the rank's index in its call's ranks, for an arrival
  size_t completions_begin = 0, completions_end = 0;  // into Model::completions
};

struct Completion {
  size_t call = 0;
  size_t slot = 0;
  int64_t time_ns = 0;
};

struct Model {
  std::vector<Join> joins;
  std::vector<Completion> completions;  // grouped by the join they precede
  std::vector<int64_t> last_arrival;    // per call, measured
};

using PartValues = std::array<double, tables::kTimelineParts>;

// The local work of a segment re-scaled; `typical`, when given, bounds how much of each part is scaled
// (WhatIf::scale_typical_only).
double local_work(const TimelineJoin& j, const WhatIf& change, const PartValues* typical = nullptr,
                  int64_t target = -1) {
  double work = 0;
  for (size_t p = 0; p < j.parts.size(); ++p) {
    if (p == kExposed || p == kWait) continue;
    const auto part = static_cast<double>(j.parts[p]);
    const double scaled = typical != nullptr ? std::min(part, std::max(0.0, (*typical)[p])) : part;
    work += part - scaled * (1.0 - change.part_scale[p]);
  }
  if (target >= 0 && static_cast<size_t>(target) < j.target_ns.size()) {
    const double named = std::clamp(static_cast<double>(j.target_ns[static_cast<size_t>(target)]), 0.0, work);
    work -= named * (1.0 - change.target_scale);
  }
  return work;
}

// The step number and call of a join (-1: the step's end): the same position on every rank.
using JoinKey = std::pair<int64_t, int64_t>;

// Per position, each part's lower median over the ranks that have it (with two ranks the smaller: the
// mean of two would hand half of one rank's excess to the part).
std::map<JoinKey, PartValues> typical_parts(const RunTimeline& t) {
  std::map<JoinKey, std::vector<PartValues>> all;
  for (const TimelineStep& st : t.steps) {
    for (const TimelineJoin& j : st.joins) {
      PartValues v{};
      for (size_t p = 0; p < v.size(); ++p) v[p] = static_cast<double>(j.parts[p]);
      all[{st.step, j.call}].push_back(v);
    }
  }
  std::map<JoinKey, PartValues> out;
  for (auto& [key, list] : all) {
    PartValues m{};
    for (size_t p = 0; p < m.size(); ++p) {
      std::vector<double> v;
      v.reserve(list.size());
      for (const PartValues& x : list) v.push_back(x[p]);
      std::sort(v.begin(), v.end());
      m[p] = v[(v.size() - 1) / 2];
    }
    out[key] = m;
  }
  return out;
}

// The slot of `rank` in a call's ranks (sorted by rank), -1 when it has none.
int64_t slot_of(const tables::TimelineCall& call, int64_t rank) {
  auto it = std::lower_bound(call.ranks.begin(), call.ranks.end(), rank,
                             [](const tables::TimelineCallRank& r, int64_t x) { return r.rank < x; });
  if (it == call.ranks.end() || it->rank != rank) return -1;
  return it - call.ranks.begin();
}

// Each step index of a rank, in step order.
std::map<int64_t, std::vector<size_t>> steps_by_rank(const RunTimeline& t) {
  std::map<int64_t, std::vector<size_t>> out;
  for (size_t i = 0; i < t.steps.size(); ++i) {
    if (!t.steps[i].joins.empty()) out[t.steps[i].rank].push_back(i);
  }
  for (auto& [rank, list] : out) {
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      return std::pair(t.steps[a].start_ns, t.steps[a].step) < std::pair(t.steps[b].start_ns, t.steps[b].step);
    });
  }
  return out;
}

Model build_model(const RunTimeline& t, const std::map<int64_t, std::vector<size_t>>& by_rank, const WhatIf& change) {
  Model m;
  const std::map<JoinKey, PartValues> typical =
      change.scale_typical_only ? typical_parts(t) : std::map<JoinKey, PartValues>{};
  m.last_arrival.assign(t.calls.size(), std::numeric_limits<int64_t>::min());
  int64_t target = -1;  // the change's named target in t.targets
  if (!change.target.empty()) {
    const auto it = std::find(t.targets.begin(), t.targets.end(), change.target);
    if (it != t.targets.end()) target = it - t.targets.begin();
  }
  // Each rank's completions, in time order.
  std::map<int64_t, std::vector<Completion>> done;
  for (size_t c = 0; c < t.calls.size(); ++c) {
    for (size_t s = 0; s < t.calls[c].ranks.size(); ++s) {
      const tables::TimelineCallRank& r = t.calls[c].ranks[s];
      m.last_arrival[c] = std::max(m.last_arrival[c], r.arrival_ns);
      done[r.rank].push_back({c, s, r.completion_ns});
    }
  }
  for (auto& [rank, list] : done) {
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.time_ns < b.time_ns; });
  }
  for (const auto& [rank, list] : by_rank) {
    const std::vector<Completion>& mine = done[rank];
    size_t next = 0;
    for (size_t i : list) {
      const TimelineStep& st = t.steps[i];
      for (size_t k = 0; k < st.joins.size(); ++k) {
        const TimelineJoin& tj = st.joins[k];
        Join j;
        j.step = i;
        j.index = k;
        j.rank = rank;
        j.time_ns = tj.time_ns;
        const PartValues* bound = nullptr;
        if (change.scale_typical_only) {
          auto it = typical.find({st.step, tj.call});
          if (it != typical.end()) bound = &it->second;
        }
        j.work_ns = local_work(tj, change, bound, target);
        const double measured_work = local_work(tj, WhatIf{});
        j.scale = measured_work > 0 ? j.work_ns / measured_work : 1.0;
        j.blocked_ns = static_cast<double>(tj.parts[kExposed]) + static_cast<double>(tj.parts[kWait]);
        if (tj.call >= 0 && static_cast<size_t>(tj.call) < t.calls.size()) {
          j.slot = slot_of(t.calls[static_cast<size_t>(tj.call)], rank);
        }
        // The completions since the previous join (up to this one).
        j.completions_begin = m.completions.size();
        // A call that completes the instant it starts waits for the next cut, never for its own arrival.
        for (; next < mine.size() && mine[next].time_ns <= tj.time_ns; ++next) {
          if (static_cast<int64_t>(mine[next].call) == tj.call) break;
          m.completions.push_back(mine[next]);
        }
        // Blocked with none completing by the join, while a collective it arrived at is outstanding: that
        // is what it waited for. The call's end is recorded on the thread that ran it (gloo's worker, a
        // GPU stream) and can come after the waiting thread was released and went on to end its step
        // (seen: 2 ms after the step's end on a loaded 2-core machine); attached to the next join, the
        // wait would count as the rank's own work and the next step would wait for the call instead.
        if (m.completions.size() == j.completions_begin && j.blocked_ns > 0 && next < mine.size() &&
            static_cast<int64_t>(mine[next].call) != tj.call &&
            t.calls[mine[next].call].ranks[mine[next].slot].arrival_ns <= tj.time_ns) {
          // It was released by the join at the latest: the transfer runs to there (its slack is 0).
          Completion late = mine[next];
          late.time_ns = std::min(late.time_ns, tj.time_ns);
          m.completions.push_back(late);
          ++next;
        }
        j.completions_end = m.completions.size();
        // Blocked with no collective completing: communication the matching never saw, kept as work.
        if (j.completions_begin == j.completions_end) j.work_ns += j.blocked_ns * change.transfer_scale;
        m.joins.push_back(j);
      }
    }
  }
  return m;
}

JoinKey key_of(const RunTimeline& t, const Join& j) {
  return {t.steps[j.step].step, t.steps[j.step].joins[j.index].call};
}

// Caps the local work of the ranks in `ranks` at the median of the other ranks' at the same join.
void cap_at_median(const RunTimeline& t, const std::vector<int64_t>& ranks, Model* m) {
  if (ranks.empty()) return;
  std::map<JoinKey, std::vector<size_t>> same;
  for (size_t i = 0; i < m->joins.size(); ++i) same[key_of(t, m->joins[i])].push_back(i);
  for (const auto& [key, list] : same) {
    if (list.size() < 2) continue;
    std::vector<double> sorted;
    sorted.reserve(list.size());
    for (size_t i : list) sorted.push_back(m->joins[i].work_ns);
    std::sort(sorted.begin(), sorted.end());
    std::vector<double> capped(list.size());
    for (size_t n = 0; n < list.size(); ++n) {
      Join& j = m->joins[list[n]];
      capped[n] = j.work_ns;
      if (std::find(ranks.begin(), ranks.end(), j.rank) == ranks.end()) continue;
      const size_t at = static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), j.work_ns) - sorted.begin());
      capped[n] = std::min(j.work_ns, median_without(sorted, at));
    }
    for (size_t n = 0; n < list.size(); ++n) {
      Join& j = m->joins[list[n]];
      j.capped_ns = j.work_ns - capped[n];
      j.work_ns = capped[n];
    }
  }
  // Per step, the rank's work in all is capped too: where its arrival cuts its work otherwise than the
  // others' (it arrived later in its backward pass, say) the positions' caps remove too little, and what
  // the step still exceeds the others' median total by comes off its last segments backwards. Where the
  // positions' caps remove more than that (the rank was faster than the others somewhere else in the
  // step) they stand: being early at a collective only makes a rank wait there, so its lead elsewhere
  // never pays for its excess (seen: a straggler's 50 ms sleep was only 42 ms "excess" because it
  // happened to compute 8 ms less before the all-reduce, and the replayed step kept the other 8 ms).
  std::map<int64_t, std::map<int64_t, std::vector<size_t>>> by_step;  // step number -> rank -> joins
  for (size_t i = 0; i < m->joins.size(); ++i) {
    by_step[t.steps[m->joins[i].step].step][m->joins[i].rank].push_back(i);
  }
  for (auto& [step, per_rank] : by_step) {
    if (per_rank.size() < 2) continue;
    std::map<int64_t, double> total;  // before the caps
    for (const auto& [rank, list] : per_rank) {
      for (size_t i : list) total[rank] += m->joins[i].work_ns + m->joins[i].capped_ns;
    }
    for (auto& [rank, list] : per_rank) {
      if (std::find(ranks.begin(), ranks.end(), rank) == ranks.end()) continue;
      std::vector<double> others;
      for (const auto& [r, v] : total) {
        if (r != rank) others.push_back(v);
      }
      const double excess = std::max(0.0, total[rank] - sample_stats(std::move(others)).median);
      double removed = 0;
      for (size_t i : list) removed += m->joins[i].capped_ns;
      if (removed >= excess) continue;
      double more = excess - removed;
      for (auto it = list.rbegin(); it != list.rend() && more > 0; ++it) {
        Join& j = m->joins[*it];
        const double take = std::min(more, j.work_ns);
        j.work_ns -= take;
        j.capped_ns += take;
        more -= take;
      }
    }
  }
}

}  // namespace

bool WhatIf::changes_nothing() const {
  return transfer_scale == 1.0 && !balance_alltoall && ranks_at_median.empty() &&
         (target.empty() || target_scale == 1.0) &&
         std::all_of(part_scale.begin(), part_scale.end(), [](double s) { return s == 1.0; });
}

double Replay::ratio() const {
  if (!ok || !(measured_ns > 0)) return std::numeric_limits<double>::quiet_NaN();
  return predicted_ns / measured_ns;
}

Replay replay(const RunTimeline& t, const WhatIf& change) {
  Replay out;
  const auto by_rank = steps_by_rank(t);
  Model m = build_model(t, by_rank, change);
  cap_at_median(t, change.ranks_at_median, &m);
  if (m.joins.empty()) return out;

  // Replayed times are ns after the earliest step start (exact in a double for 104 days of steps).
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const TimelineStep& st : t.steps) origin = std::min(origin, st.start_ns);
  // Re-timed arrivals per call slot (NaN: not replayed yet) and how many of each call are.
  std::vector<std::vector<double>> arrival(t.calls.size());
  std::vector<size_t> arrived(t.calls.size(), 0);
  std::vector<double> last_arrival(t.calls.size(), std::numeric_limits<double>::quiet_NaN());
  for (size_t c = 0; c < t.calls.size(); ++c) {
    arrival[c].assign(t.calls[c].ranks.size(), std::numeric_limits<double>::quiet_NaN());
  }
  auto retimed_last_arrival = [&](size_t c) {
    if (!std::isnan(last_arrival[c])) return last_arrival[c];
    double latest = -std::numeric_limits<double>::infinity();
    for (size_t s = 0; s < arrival[c].size(); ++s) {
      const double a = std::isnan(arrival[c][s]) ? diff(t.calls[c].ranks[s].arrival_ns, origin) : arrival[c][s];
      latest = std::max(latest, a);
    }
    if (arrived[c] == arrival[c].size()) last_arrival[c] = latest;  // final once every rank arrived
    return latest;
  };

  // Replayed in the order of measured time.
  std::vector<size_t> order(m.joins.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(m.joins[a].time_ns, m.joins[a].rank) < std::pair(m.joins[b].time_ns, m.joins[b].rank);
  });
  // A rank's first step starts when it was measured to, except a rank capped at the median: a slow
  // rank starts its first profiled step late for the same reason it is slow (its previous step, not
  // profiled, ran long), so it starts no later than the other ranks' median start of that step.
  std::vector<double> first_start(t.steps.size());
  {
    std::map<int64_t, std::vector<std::pair<int64_t, double>>> starts;  // step number -> (rank, start)
    for (const auto& [rank, list] : by_rank) {
      first_start[list.front()] = diff(t.steps[list.front()].start_ns, origin);
      starts[t.steps[list.front()].step].emplace_back(rank, first_start[list.front()]);
    }
    for (const auto& [rank, list] : by_rank) {
      if (std::find(change.ranks_at_median.begin(), change.ranks_at_median.end(), rank) ==
          change.ranks_at_median.end()) {
        continue;
      }
      std::vector<double> others;
      for (const auto& [r, at] : starts[t.steps[list.front()].step]) {
        if (r != rank) others.push_back(at);
      }
      if (others.empty()) continue;
      first_start[list.front()] = std::min(first_start[list.front()], sample_stats(std::move(others)).median);
    }
  }
  // Per step index: its re-timed start and end.
  std::vector<double> start(t.steps.size(), std::numeric_limits<double>::quiet_NaN());
  std::vector<double> end(t.steps.size(), std::numeric_limits<double>::quiet_NaN());
  // Per rank: the previous join replayed (its measured and re-timed time, and its step).
  struct Cursor {
    double retimed = 0;
    size_t step = std::numeric_limits<size_t>::max();
  };
  std::map<int64_t, Cursor> cursor;
  // The step before each step of a rank (to chain a step's start to the previous one's end).
  std::vector<size_t> previous(t.steps.size(), std::numeric_limits<size_t>::max());
  for (const auto& [rank, list] : by_rank) {
    for (size_t k = 1; k < list.size(); ++k) previous[list[k]] = list[k - 1];
  }
  for (size_t i : order) {
    const Join& j = m.joins[i];
    const TimelineStep& st = t.steps[j.step];
    Cursor& cur = cursor[j.rank];
    double base = 0;
    if (j.index == 0) {
      // A step starts its measured gap after the previous step's re-timed end.
      const size_t prev = previous[j.step];
      start[j.step] = prev != std::numeric_limits<size_t>::max() && !std::isnan(end[prev])
                          ? end[prev] + diff(st.start_ns, t.steps[prev].end_ns())
                          : first_start[j.step];
      base = start[j.step] + j.work_ns;
    } else {
      base = cur.retimed + j.work_ns;
    }
    double at = base;
    for (size_t k = j.completions_begin; k < j.completions_end; ++k) {
      const Completion& done = m.completions[k];
      const int64_t measured_last = m.last_arrival[done.call];
      // The transfer after the last arrival is what the change scales; a completion before the last
      // arrival (clocks not quite aligned) keeps its measured lead, so that nothing changed replays exactly.
      const auto after_last = diff(done.time_ns, measured_last);
      double scale = change.transfer_scale;
      if (change.balance_alltoall && t.calls[done.call].alltoall_balance >= 0) {
        scale *= t.calls[done.call].alltoall_balance;
      }
      const double transfer = std::max(0.0, after_last) * scale + std::min(0.0, after_last);
      // The rank's work between the completion and the join, scaled like the segment's work.
      // (A slow rank's excess is rarely spent blocked: what the cap removes comes off this work first.)
      const double slack = std::max(0.0, diff(j.time_ns, done.time_ns) * j.scale - j.capped_ns);
      at = std::max(at, retimed_last_arrival(done.call) + transfer + slack);
    }
    cur.retimed = at;
    cur.step = j.step;
    const int64_t call = st.joins[j.index].call;
    if (j.slot >= 0) {
      auto& slot = arrival[static_cast<size_t>(call)][static_cast<size_t>(j.slot)];
      if (std::isnan(slot)) ++arrived[static_cast<size_t>(call)];
      slot = at;
    }
    if (j.index + 1 == st.joins.size()) end[j.step] = at;
  }

  std::map<int64_t, StepReplay> steps;
  for (size_t i = 0; i < t.steps.size(); ++i) {
    if (std::isnan(start[i]) || std::isnan(end[i])) continue;
    const TimelineStep& st = t.steps[i];
    const auto measured = diff(st.end_ns(), st.start_ns);
    const double predicted = end[i] - start[i];
    out.measured_ns += measured;
    out.predicted_ns += predicted;
    StepReplay& s = steps[st.step];
    s.step = st.step;
    ++s.ranks;
    s.measured_ns += measured;
    s.predicted_ns += predicted;
  }
  for (auto& [step, s] : steps) {
    s.measured_ns /= static_cast<double>(s.ranks);
    s.predicted_ns /= static_cast<double>(s.ranks);
    out.steps.push_back(s);
  }
  out.ok = !out.steps.empty();
  return out;
}

SlowRank slowest_rank(const RunTimeline& t) {
  SlowRank out;
  const auto by_rank = steps_by_rank(t);
  const Model m = build_model(t, by_rank, WhatIf{});
  std::map<JoinKey, std::vector<size_t>> same;
  for (size_t i = 0; i < m.joins.size(); ++i) same[key_of(t, m.joins[i])].push_back(i);
  std::map<int64_t, double> excess;
  for (const auto& [key, list] : same) {
    if (list.size() < 2) continue;
    std::vector<double> sorted;
    for (size_t i : list) sorted.push_back(m.joins[i].work_ns);
    std::sort(sorted.begin(), sorted.end());
    for (size_t i : list) {
      const Join& j = m.joins[i];
      const size_t at = static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), j.work_ns) - sorted.begin());
      excess[j.rank] += std::max(0.0, j.work_ns - median_without(sorted, at));
    }
  }
  for (const auto& [rank, ns] : excess) {
    if (ns > out.excess_ns) out = {rank, ns};
  }
  return out;
}

}  // namespace scaleprof::analysis

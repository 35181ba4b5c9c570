#include "analysis/stragglers.h"

#include <algorithm>
#include <map>

namespace scaleprof::analysis {

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

}  // namespace

StragglerAnalysis find_stragglers(const std::vector<RankCollectives>& ranks, const CollectiveAnalysis& collectives) {
  StragglerAnalysis out;
  std::map<int64_t, RankStraggling> per_rank;
  for (const RankCollectives& r : ranks) per_rank[r.rank].rank = r.rank;
  // Each rank's gap before each call: its start minus the end of its previous collective (any call).
  std::map<std::pair<size_t, int64_t>, int64_t> gap;  // (call index, rank) -> ns
  {
    std::map<int64_t, std::vector<std::pair<int64_t, size_t>>> starts;  // rank -> (start, call index)
    for (size_t i = 0; i < collectives.calls.size(); ++i) {
      for (const RankTiming& t : collectives.calls[i].ranks) starts[t.rank].emplace_back(t.start_ns, i);
    }
    for (auto& [rank, list] : starts) {
      std::sort(list.begin(), list.end());
      int64_t previous_end = -1;
      for (const auto& [start, i] : list) {
        if (previous_end >= 0) gap[{i, rank}] = start - previous_end;
        for (const RankTiming& t : collectives.calls[i].ranks) {
          if (t.rank == rank) previous_end = std::max(previous_end, t.end_ns);
        }
      }
    }
  }
  std::map<int64_t, double> lag_sum_when_last;
  std::map<int64_t, int64_t> lag_count_when_last;
  std::map<int64_t, std::map<int64_t, int64_t>> lag_by_step;  // step -> rank -> summed lag
  std::map<int64_t, int64_t> calls_by_step;
  for (size_t i = 0; i < collectives.calls.size(); ++i) {
    const MatchedCollective& m = collectives.calls[i];
    if (m.status != MatchStatus::kMatched || m.ranks.size() < 2) continue;
    int64_t others_wait = 0;
    for (const RankTiming& t : m.ranks) {
      RankStraggling& s = per_rank[t.rank];
      s.rank = t.rank;
      ++s.calls;
      s.own_wait_ns += t.wait_ns;
      if (t.rank != m.last_rank) others_wait += t.wait_ns;
    }
    bool every_gap = true;
    for (const RankTiming& t : m.ranks) every_gap &= gap.count({i, t.rank}) > 0;
    if (every_gap) {
      for (const RankTiming& t : m.ranks) {
        std::vector<double> others;
        for (const RankTiming& o : m.ranks) {
          if (o.rank != t.rank) others.push_back(static_cast<double>(gap[{i, o.rank}]));
        }
        const double lag = static_cast<double>(gap[{i, t.rank}]) - median_of(others);
        if (t.rank == m.last_rank) {
          lag_sum_when_last[t.rank] += lag;
          ++lag_count_when_last[t.rank];
        }
        if (m.step >= 0) lag_by_step[m.step][t.rank] += static_cast<int64_t>(lag);
      }
      if (m.step >= 0) ++calls_by_step[m.step];
    }
    RankStraggling& last = per_rank[m.last_rank];
    ++last.arrived_last;
    last.wait_imposed_ns += others_wait;
  }
  for (auto& [rank, s] : per_rank) {
    if (lag_count_when_last[rank] > 0) {
      s.mean_lag_when_last_ns = lag_sum_when_last[rank] / static_cast<double>(lag_count_when_last[rank]);
    }
    out.ranks.push_back(s);
    if (s.wait_imposed_ns > 0 && (out.worst_rank < 0 || s.wait_imposed_ns > per_rank[out.worst_rank].wait_imposed_ns)) {
      out.worst_rank = rank;
    }
  }
  for (const auto& [step, lags] : lag_by_step) {
    StepStraggler s;
    s.step = step;
    s.calls = calls_by_step[step];
    for (const auto& [rank, lag] : lags) {
      if (s.slowest_rank < 0 || lag > s.lag_ns) {
        s.slowest_rank = rank;
        s.lag_ns = lag;
      }
    }
    out.steps.push_back(s);
  }
  if (out.worst_rank < 0) return out;

  // The worst straggler's steps against the median rank's.
  const RankCollectives* worst = nullptr;
  for (const RankCollectives& r : ranks) {
    if (r.rank == out.worst_rank) worst = &r;
  }
  if (worst == nullptr) return out;
  static const char* const kQuantities[] = {"step",         "host busy", "host idle",
                                            "data loading", "GPU busy",  "communication"};
  auto value = [](const StepRow& s, size_t q) -> double {
    switch (q) {
      case 0:
        return static_cast<double>(s.end_ns - s.start_ns);
      case 1:
        return static_cast<double>(s.host_busy_ns);
      case 2:
        return static_cast<double>(s.host_idle_ns);
      case 3:
        return static_cast<double>(s.dataloader_ns);
      case 4:
        return static_cast<double>(s.gpu_busy_ns);
      default:
        return static_cast<double>(s.comm_ns);
    }
  };
  std::vector<double> straggler_sum(std::size(kQuantities), 0.0), median_sum(std::size(kQuantities), 0.0);
  for (const StepRow& w : worst->steps) {
    std::vector<const StepRow*> same_step;
    for (const RankCollectives& r : ranks) {
      for (const StepRow& s : r.steps) {
        if (s.step == w.step) {
          same_step.push_back(&s);
          break;
        }
      }
    }
    if (same_step.size() < 2) continue;
    ++out.steps_compared;
    for (size_t q = 0; q < std::size(kQuantities); ++q) {
      std::vector<double> values;
      for (const StepRow* s : same_step) values.push_back(value(*s, q));
      straggler_sum[q] += value(w, q);
      median_sum[q] += median_of(values);
    }
  }
  if (out.steps_compared == 0) return out;
  for (size_t q = 0; q < std::size(kQuantities); ++q) {
    if (q == 4 && !worst->gpu) continue;
    out.worst_vs_median.push_back({kQuantities[q], straggler_sum[q] / static_cast<double>(out.steps_compared),
                                   median_sum[q] / static_cast<double>(out.steps_compared)});
  }
  return out;
}

}  // namespace scaleprof::analysis

#include "analysis/stragglers.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/checked_sum.h"

namespace scaleprof::analysis {

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// The median of `sorted` with one element equal to `value` left out (median_of of the rest).
double median_without(const std::vector<double>& sorted, double value) {
  const size_t n = sorted.size() - 1;
  if (n == 0) return 0;
  const size_t skip = static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), value) - sorted.begin());
  auto at = [&](size_t j) { return sorted[j < skip ? j : j + 1]; };
  return n % 2 == 1 ? at(n / 2) : (at(n / 2 - 1) + at(n / 2)) / 2.0;
}

}  // namespace

StragglerAnalysis find_stragglers(const std::vector<RankCollectives>& ranks, const CollectiveAnalysis& collectives) {
  return find_stragglers(compact_rows(ranks), collectives);
}

StragglerAnalysis find_stragglers(const CollectiveRows& rows, const CollectiveAnalysis& collectives) {
  StragglerAnalysis out;
  const std::vector<CompactRank>& ranks = rows.ranks();
  std::map<int64_t, RankStraggling> per_rank;
  for (const CompactRank& r : ranks) per_rank[r.rank].rank = r.rank;
  // Each rank's gap before each call: its start minus the end of its previous collective (any call).
  // gap[i][k]: of the k-th rank of call i; kNoGap when the rank has no previous collective.
  constexpr int64_t kNoGap = INT64_MIN;
  std::vector<std::vector<int64_t>> gap(collectives.calls.size());
  {
    struct Start {
      int64_t start_ns;
      size_t call;
      size_t k;  // the rank's place in the call's ranks
      bool operator<(const Start& o) const { return std::tie(start_ns, call) < std::tie(o.start_ns, o.call); }
    };
    std::map<int64_t, std::vector<Start>> starts;  // rank -> its calls
    for (size_t i = 0; i < collectives.calls.size(); ++i) {
      const std::vector<RankTiming>& timings = collectives.calls[i].ranks;
      gap[i].assign(timings.size(), kNoGap);
      for (size_t k = 0; k < timings.size(); ++k) starts[timings[k].rank].push_back({timings[k].start_ns, i, k});
    }
    for (auto& item : starts) {
      std::vector<Start>& list = item.second;
      std::sort(list.begin(), list.end());
      int64_t previous_end = -1;
      for (const Start& s : list) {
        if (previous_end >= 0) gap[s.call][s.k] = s.start_ns - previous_end;
        previous_end = std::max(previous_end, collectives.calls[s.call].ranks[s.k].end_ns);
      }
      list = {};
    }
  }
  std::map<int64_t, double> lag_sum_when_last;
  std::map<int64_t, int64_t> lag_count_when_last;
  std::map<int64_t, std::map<int64_t, CheckedTotal>> lag_by_step;  // step -> rank -> summed lag
  std::map<int64_t, int64_t> calls_by_step;
  for (size_t i = 0; i < collectives.calls.size(); ++i) {
    const MatchedCollective& m = collectives.calls[i];
    if (m.status != MatchStatus::kMatched || m.ranks.size() < 2) continue;
    CheckedTotal others_wait;
    for (const RankTiming& t : m.ranks) {
      RankStraggling& s = per_rank[t.rank];
      s.rank = t.rank;
      ++s.calls;
      CheckedTotal own{s.own_wait_ns, s.own_wait_exact};
      own.add(t.wait_ns);
      s.own_wait_ns = own.value;
      s.own_wait_exact = own.exact;
      if (t.rank != m.last_rank) others_wait.add(t.wait_ns);
    }
    const std::vector<int64_t>& gaps = gap[i];
    const bool every_gap = std::none_of(gaps.begin(), gaps.end(), [](int64_t g) { return g == kNoGap; });
    if (every_gap) {
      // Each rank's lag is its gap minus the median of the others' gaps: the median of the sorted gaps
      // with one copy of its own left out.
      std::vector<double> sorted(gaps.size());
      for (size_t k = 0; k < gaps.size(); ++k) sorted[k] = static_cast<double>(gaps[k]);
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < m.ranks.size(); ++k) {
        const RankTiming& t = m.ranks[k];
        const double own = static_cast<double>(gaps[k]);
        const double lag = own - median_without(sorted, own);
        if (t.rank == m.last_rank) {
          lag_sum_when_last[t.rank] += lag;
          ++lag_count_when_last[t.rank];
        }
        if (m.step >= 0) {
          CheckedTotal& sum = lag_by_step[m.step][t.rank];
          if (std::fabs(lag) < 0x1p63) {
            sum.add(static_cast<int64_t>(lag));
          } else {  // gaps near the input bounds' extremes: past int64 already
            sum.exact = false;
            sum.value = lag > 0 ? INT64_MAX : INT64_MIN;
          }
        }
      }
      if (m.step >= 0) ++calls_by_step[m.step];
    }
    RankStraggling& last = per_rank[m.last_rank];
    ++last.arrived_last;
    CheckedTotal imposed{last.wait_imposed_ns, last.wait_imposed_exact};
    if (others_wait.exact) {
      imposed.add(others_wait.value);
    } else {
      imposed = {INT64_MAX, false};
    }
    last.wait_imposed_ns = imposed.value;
    last.wait_imposed_exact = imposed.exact;
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
      if (s.slowest_rank < 0 || lag.value > s.lag_ns) {
        s.slowest_rank = rank;
        s.lag_ns = lag.value;
        s.lag_exact = lag.exact;
      }
    }
    out.steps.push_back(s);
  }
  if (out.worst_rank < 0) return out;

  // The worst straggler's steps against the median rank's.
  const CompactRank* worst = nullptr;
  for (const CompactRank& r : ranks) {
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
  for (const StepRow& w : rows.steps(*worst)) {
    std::vector<const StepRow*> same_step;
    for (const CompactRank& r : ranks) {
      for (const StepRow& s : rows.steps(r)) {
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

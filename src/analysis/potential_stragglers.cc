#include "analysis/potential_stragglers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "analysis/device_events.h"
#include "analysis/kernel_classify.h"
#include "analysis/phases.h"

namespace scaleprof::analysis {

namespace {

// The step whose host window [start, end) holds t, as an index into `steps` (sorted by start), or -1.
int64_t step_index(const std::vector<ProfilerStepWindow>& steps, int64_t t) {
  auto it = std::upper_bound(steps.begin(), steps.end(), t,
                             [](int64_t v, const ProfilerStepWindow& w) { return v < w.start_ns; });
  if (it == steps.begin()) return -1;
  const auto k = static_cast<size_t>(it - steps.begin() - 1);
  return t < steps[k].end_ns ? static_cast<int64_t>(k) : -1;
}

}  // namespace

RankStragglerEvents summarize_for_potential_stragglers(const trace::RankTrace& trace, bool include_last_step) {
  const trace::EventTable& ev = trace.events;
  RankStragglerEvents out;
  out.rank = trace.rank;
  std::vector<ProfilerStepWindow> steps = analysed_steps(trace, include_last_step);
  std::sort(steps.begin(), steps.end(),
            [](const ProfilerStepWindow& a, const ProfilerStepWindow& b) { return a.start_ns < b.start_ns; });
  if (steps.empty()) return out;
  for (const ProfilerStepWindow& w : steps) {
    out.steps.push_back({w.step, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()});
  }
  auto widen = [&](int64_t k, size_t i) {
    StragglerStepSpan& s = out.steps[static_cast<size_t>(k)];
    s.first_ns = std::min(s.first_ns, ev.ts[i]);
    s.last_end_ns = std::max(s.last_end_ns, ev.end(i));
  };
  const std::vector<int64_t> launches = launch_rows(trace);
  KernelNameTypes types(trace.strings);
  // (stream, step index, name) -> index into out.kernels
  std::map<std::tuple<int64_t, int64_t, trace::StringId>, size_t> last;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.phase[i] != trace::Phase::kComplete || ev.cat[i] == trace::Category::kTrace) continue;
    if (!is_device_work(ev.cat[i])) {
      const int64_t k = step_index(steps, ev.ts[i]);
      if (k >= 0) widen(k, i);
      continue;
    }
    const int64_t launch = launches[i];
    if (launch < 0) continue;
    const int64_t k = step_index(steps, ev.ts[static_cast<size_t>(launch)]);
    if (k < 0) continue;
    widen(k, i);
    if (ev.cat[i] != trace::Category::kKernel || types.of(ev.name[i]) != KernelType::kCommunication) continue;
    const int64_t stream = ev.stream[i];
    auto [it, added] = last.try_emplace({stream, k, ev.name[i]}, out.kernels.size());
    if (added) {
      out.kernels.push_back({steps[static_cast<size_t>(k)].step, stream, std::string(trace.strings.view(ev.name[i])),
                             ev.ts[i], ev.dur[i]});
    } else if (ev.ts[i] >= out.kernels[it->second].ts_ns) {
      out.kernels[it->second].ts_ns = ev.ts[i];
      out.kernels[it->second].dur_ns = ev.dur[i];
    }
  }
  // A step with no event of its own (cannot happen: its annotation starts in it) keeps its window.
  for (size_t k = 0; k < steps.size(); ++k) {
    if (out.steps[k].first_ns > out.steps[k].last_end_ns)
      out.steps[k] = {steps[k].step, steps[k].start_ns, steps[k].end_ns};
  }
  return out;
}

Result<PotentialStragglers> find_potential_stragglers(const std::vector<RankStragglerEvents>& ranks,
                                                      const PotentialStragglerOptions& options) {
  PotentialStragglers out;
  std::set<int64_t> available;
  for (const RankStragglerEvents& r : ranks) {
    for (const StragglerStepSpan& s : r.steps) available.insert(s.step);
  }
  std::set<int64_t> chosen;
  if (options.profiler_steps.empty()) {
    chosen = available;
  } else {
    for (int64_t s : options.profiler_steps) {
      if (available.count(s) > 0) chosen.insert(s);
    }
  }
  if (chosen.empty()) {
    if (available.empty()) {
      out.note = "no rank has an analysed ProfilerStep (the last step of each rank is left out)";
      return out;
    }
    return Error{fmt::format("profiler steps {} are not among the analysed steps ({})",
                             fmt::join(options.profiler_steps, ","), fmt::join(available, ",")),
                 ErrorKind::kUsage};
  }
  out.steps.assign(chosen.begin(), chosen.end());

  // 1. t_min, the latest end and the mean step time over the chosen steps of every rank.
  int64_t t_min = std::numeric_limits<int64_t>::max();
  int64_t t_max = std::numeric_limits<int64_t>::min();
  for (const RankStragglerEvents& r : ranks) {
    for (const StragglerStepSpan& s : r.steps) {
      if (chosen.count(s.step) == 0) continue;
      t_min = std::min(t_min, s.first_ns);
      t_max = std::max(t_max, s.last_end_ns);
    }
  }
  out.t_min_ns = t_min;
  out.mean_step_ns = (static_cast<double>(t_max) - static_cast<double>(t_min)) / static_cast<double>(chosen.size());
  out.min_duration_ns = out.mean_step_ns * options.min_normalized_duration;

  // 2. The candidates, and 3. per (stream, name) the mean over steps of the std over ranks.
  struct Candidate {
    int64_t rank, step, stream;
    const std::string* name;
    int64_t ts, dur;
  };
  std::vector<Candidate> candidates;
  for (const RankStragglerEvents& r : ranks) {
    for (const CommKernelStart& k : r.kernels) {
      if (chosen.count(k.step) == 0 || static_cast<double>(k.dur_ns) < out.min_duration_ns) continue;
      candidates.push_back({r.rank, k.step, k.stream, &k.name, k.ts_ns, k.dur_ns});
    }
  }
  // (stream, name) -> step -> normalized durations over ranks
  std::map<std::pair<int64_t, std::string>, std::map<int64_t, std::vector<double>>> durations;
  for (const Candidate& c : candidates) {
    durations[{c.stream, *c.name}][c.step].push_back(static_cast<double>(c.dur) / out.mean_step_ns);
  }
  double best = -1;
  const std::pair<int64_t, std::string>* chosen_kernel = nullptr;
  for (const auto& [key, by_step] : durations) {
    double sum = 0;
    int64_t n = 0;
    for (const auto& [step, values] : by_step) {
      if (values.size() < 2) continue;  // a std over one rank is undefined (NaN in HTA, skipped by its mean)
      double mean = 0;
      for (double v : values) mean += v;
      mean /= static_cast<double>(values.size());
      double ss = 0;
      for (double v : values) ss += (v - mean) * (v - mean);
      sum += std::sqrt(ss / static_cast<double>(values.size() - 1));
      ++n;
    }
    if (n == 0) continue;
    const double mean_std = sum / static_cast<double>(n);
    if (mean_std > best) {  // the first (stream, name) of the largest, as pandas' idxmax
      best = mean_std;
      chosen_kernel = &key;
    }
  }
  if (chosen_kernel == nullptr) {
    out.note = candidates.empty()
                   ? "no communication kernel of 1 % of the mean step or longer in the steps analysed"
                   : "no communication kernel ran on two ranks or more in one step: no spread across ranks";
    return out;
  }
  out.stream = chosen_kernel->first;
  out.kernel = chosen_kernel->second;
  out.mean_duration_std = best;

  // 4. The metric and the flags per step.
  for (const Candidate& c : candidates) {
    if (c.stream != out.stream || *c.name != out.kernel) continue;
    out.metric.push_back({c.step, c.rank, c.ts, c.dur,
                          (static_cast<double>(c.ts) - static_cast<double>(t_min)) / out.mean_step_ns, false});
  }
  std::sort(out.metric.begin(), out.metric.end(), [](const StragglerMetricRow& a, const StragglerMetricRow& b) {
    return std::tie(a.step, a.rank) < std::tie(b.step, b.rank);
  });
  const auto k = static_cast<size_t>(std::max<int64_t>(options.num_candidates, 1));
  std::map<int64_t, int64_t> flagged;  // rank -> steps flagged
  for (size_t begin = 0; begin < out.metric.size();) {
    size_t end = begin;
    while (end < out.metric.size() && out.metric[end].step == out.metric[begin].step) ++end;
    std::vector<double> values;
    for (size_t i = begin; i < end; ++i) values.push_back(out.metric[i].normalized_start);
    std::sort(values.begin(), values.end(), std::greater<>());
    const double threshold = values[std::min(k, values.size()) - 1];
    for (size_t i = begin; i < end; ++i) {
      StragglerMetricRow& m = out.metric[i];
      m.flagged = m.normalized_start >= threshold;
      flagged[m.rank] += m.flagged ? 1 : 0;
    }
    begin = end;
  }
  // 5. Ranks by steps flagged, most first, ties by rank (pandas' descending sort keeps their order).
  for (const auto& [rank, n] : flagged) out.ranks.push_back({rank, n, false});
  std::stable_sort(out.ranks.begin(), out.ranks.end(),
                   [](const RankLateStarts& a, const RankLateStarts& b) { return a.flagged_steps > b.flagged_steps; });
  for (size_t i = 0; i < out.ranks.size() && i < k; ++i) {
    out.ranks[i].potential_straggler = true;
    out.stragglers.push_back(out.ranks[i].rank);
  }
  return out;
}

}  // namespace scaleprof::analysis

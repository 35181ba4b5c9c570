#include "analysis/straggler_causes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "core/clock_event_reasons.h"

namespace scaleprof::analysis {

namespace {

using StepKey = std::pair<int64_t, int64_t>;  // epoch, step

double straggler_median(std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }), values.end());
  if (values.empty()) return tables::kNaN;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double step_seconds(const tables::StepSpan& s) {
  return static_cast<double>(s.end_ns - s.start_ns) * 1e-9;
}

// The samples of `gpu` (time order) inside [span.start_ns, span.end_ns].
template <class Visit>
void samples_in(const std::vector<tables::ClockSample>& gpu, const tables::StepSpan& span, Visit visit) {
  auto first = std::lower_bound(gpu.begin(), gpu.end(), span.start_ns,
                                [](const tables::ClockSample& s, int64_t t) { return s.time_ns < t; });
  for (auto it = first; it != gpu.end() && it->time_ns <= span.end_ns; ++it) visit(*it);
}

// "steps 4-7,9" for one epoch, "epoch 0 steps 4-7; epoch 1 steps 2" for several.
std::string straggler_step_ranges(const std::vector<StepKey>& keys) {
  std::map<int64_t, std::vector<int64_t>> by_epoch;
  for (const auto& [epoch, step] : keys) by_epoch[epoch].push_back(step);
  std::string out;
  for (auto& [epoch, steps] : by_epoch) {
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    std::string ranges;
    for (size_t i = 0; i < steps.size();) {
      size_t j = i;
      while (j + 1 < steps.size() && steps[j + 1] == steps[j] + 1) ++j;
      if (!ranges.empty()) ranges += ',';
      ranges += j == i ? fmt::format("{}", steps[i]) : fmt::format("{}-{}", steps[i], steps[j]);
      i = j + 1;
    }
    if (!out.empty()) out += "; ";
    out += by_epoch.size() == 1 ? fmt::format("steps {}", ranges) : fmt::format("epoch {} steps {}", epoch, ranges);
  }
  return out;
}

// The steps of a rank that the others waited for (straggler_causes.h), with the wait of each.
std::vector<std::pair<StepKey, double>> waited_for_steps(const std::map<StepKey, tables::StepSpan>& spans, int64_t rank,
                                                         const std::vector<tables::WaitedForStep>& waited_for,
                                                         double floor_s) {
  std::vector<std::pair<StepKey, double>> out;
  for (const auto& [key, span] : spans) {
    const int64_t length = span.end_ns - span.start_ns;
    for (const tables::WaitedForStep& w : waited_for) {
      if (w.rank != rank || static_cast<double>(w.wait_ns) * 1e-9 <= floor_s) continue;
      const int64_t overlap = std::min(span.end_ns, w.end_ns) - std::max(span.start_ns, w.start_ns);
      if (length > 0 && overlap * 2 > length) {
        out.emplace_back(key, static_cast<double>(w.wait_ns) * 1e-9);
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<StragglerCause> straggler_causes(const std::vector<tables::RankActivity>& ranks, const StragglerRule& rule,
                                             const std::vector<tables::WaitedForStep>& waited_for) {
  // Every rank's duration and span of each step; a step recorded twice by a rank (a restarted process
  // appending) keeps its first record, as the epoch reader does.
  std::vector<std::map<StepKey, tables::StepSpan>> spans(ranks.size());
  std::map<StepKey, std::vector<size_t>> who;  // step -> ranks (indices) that recorded it
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (const tables::StepSpan& s : ranks[r].steps) {
      if (s.end_ns < s.start_ns) continue;
      if (spans[r].try_emplace({s.epoch, s.step}, s).second) who[{s.epoch, s.step}].push_back(r);
    }
  }
  std::vector<StragglerCause> out;
  for (size_t r = 0; r < ranks.size(); ++r) {
    StragglerCause c;
    c.rank = ranks[r].rank;
    std::vector<StepKey> slow;
    std::vector<double> slow_s, others_s;
    // The other ranks' durations of a step (empty where only this rank recorded it).
    auto others_of = [&](const StepKey& key) {
      std::vector<double> others;
      for (size_t o : who[key]) {
        if (o != r) others.push_back(step_seconds(spans[o].at(key)));
      }
      return others;
    };
    for (const auto& [key, span] : spans[r]) {
      const std::vector<double> others = others_of(key);
      if (others.empty()) continue;
      ++c.steps_compared;
      const double reference = straggler_median(others);
      const double own = step_seconds(span);
      if (own > rule.ratio * reference && own - reference > rule.floor_s) {
        slow.push_back(key);
        slow_s.push_back(own);
        others_s.push_back(reference);
      }
    }
    // Synchronous training: the straggler's steps last no longer than the others', and the traces say whom
    // the others waited for. Those steps are slow steps too, beside any slow by their time: one step of
    // jitter slow by its time must not hide them (a real DDP run lost its verdict so).
    std::vector<double> waits;
    const std::set<StepKey> by_time(slow.begin(), slow.end());
    for (const auto& [key, wait] : waited_for_steps(spans[r], c.rank, waited_for, rule.floor_s)) {
      if (by_time.count(key) > 0) continue;
      slow.push_back(key);
      slow_s.push_back(step_seconds(spans[r].at(key)));
      others_s.push_back(straggler_median(others_of(key)));
      waits.push_back(wait);
    }
    if (slow.empty()) continue;
    if (!waits.empty()) {
      c.waited_for = true;
      c.waited_s = straggler_median(waits);
    }
    c.slow_steps = static_cast<int64_t>(slow.size());
    c.steps = straggler_step_ranges(slow);
    c.slow_step_s = straggler_median(slow_s);
    c.others_step_s = straggler_median(others_s);

    std::vector<double> slow_clock, normal_clock, others_clock, slow_power, normal_power;
    std::map<StepKey, bool> is_slow;
    for (const StepKey& k : slow) is_slow[k] = true;
    for (const auto& [key, span] : spans[r]) {
      const bool in_slow = is_slow.count(key) > 0;
      samples_in(ranks[r].gpu, span, [&](const tables::ClockSample& g) {
        (in_slow ? slow_clock : normal_clock).push_back(g.sm_clock_mhz);
        (in_slow ? slow_power : normal_power).push_back(g.power_w);
        if (in_slow) {
          ++c.slow_samples;
          if (g.throttle_reasons) c.slow_reasons |= *g.throttle_reasons;
        }
      });
    }
    for (const StepKey& k : slow) {
      for (size_t o : who[k]) {
        if (o == r) continue;
        samples_in(ranks[o].gpu, spans[o].at(k),
                   [&](const tables::ClockSample& g) { others_clock.push_back(g.sm_clock_mhz); });
      }
    }
    c.slow_clock_mhz = straggler_median(slow_clock);
    c.normal_clock_mhz = straggler_median(normal_clock);
    c.others_clock_mhz = straggler_median(others_clock);
    c.slow_power_w = straggler_median(slow_power);
    c.normal_power_w = straggler_median(normal_power);

    // The other ranks in the same steps are the better reference (the same work at the same time);
    // the rank's own normal steps stand in where the others have no clock samples.
    const bool vs_others = !std::isnan(c.others_clock_mhz);
    const double reference = vs_others ? c.others_clock_mhz : c.normal_clock_mhz;
    c.clock_low =
        !std::isnan(c.slow_clock_mhz) && !std::isnan(reference) && c.slow_clock_mhz <= rule.clock_ratio * reference;
    if (c.clock_low) {
      const uint64_t slowing = c.slow_reasons & kClockReasonsSlowing;
      c.verdict = fmt::format(
          "rank {} ran at {:.0f} MHz ({} {:.0f} MHz) {} in {}", c.rank, c.slow_clock_mhz,
          vs_others ? "others" : "its other steps", reference,
          slowing != 0 ? "under " + clock_event_reasons_text(slowing) : std::string("with no throttle reason reported"),
          c.steps);
      if (c.waited_for) c.verdict += fmt::format(", where the others waited {:.0f} ms for it", c.waited_s * 1e3);
    }
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const StragglerCause& a, const StragglerCause& b) { return a.rank < b.rank; });
  return out;
}

}  // namespace scaleprof::analysis

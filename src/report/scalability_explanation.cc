#include "report/scalability_explanation.h"

#include <fmt/format.h>

#include <cmath>

#include "core/seconds_text.h"

namespace scaleprof::report {

namespace {

std::string fmt_pct(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.1f}%", fraction * 100.0) : "n/a";
}

std::string fmt_pts(double fraction) {
  return fmt::format("{:.1f}", fraction * 100.0);
}

// "a", "a and b", "a, b and c"
std::string cause_list(const std::vector<analysis::LossCause>& causes) {
  std::string out;
  for (size_t i = 0; i < causes.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == causes.size() ? " and " : ", ") + causes[i].name;
  }
  return out;
}

// What the attributed shares are shares of, and what that assumes.
std::string basis_sentence(analysis::LossBasis basis) {
  switch (basis) {
    case analysis::LossBasis::kTracesCollectives:
      return "(Basis: shares of GPU time in the profiled steps of the device traces at both scales, applied to the "
             "epoch time; communication not hidden under computation is split into the transfer itself "
             "(communication) and waiting for the last rank to arrive (waiting for stragglers) in the proportion of "
             "the collectives matched across ranks: their latency, the shortest duration over ranks, and each "
             "rank's wait. This assumes the profiled steps are representative of the epoch.)";
    case analysis::LossBasis::kCollectives:
      return "(Basis: shares of the profiled step time, ranks summed, in the collectives matched across ranks at "
             "both scales, applied to the epoch time: communication is each call's latency (the shortest duration "
             "over ranks) once per rank, waiting for stragglers is each rank's wait for the last rank to arrive. "
             "Collective time is counted whole, including any part that overlaps computation on other threads, so "
             "these points are an upper bound; this assumes the profiled steps are representative of the epoch.)";
    case analysis::LossBasis::kSteps:
      return "(Basis: the step records at both scales. The time outside the training steps is each epoch's time "
             "minus the steps of the rank that set it; without profiler traces at both scales, what happens inside "
             "the steps is not attributed.)";
    default:
      break;
  }
  return "(Basis: shares of GPU time in the profiled steps of the device traces at both scales, applied to the epoch "
         "time; this assumes the profiled steps are representative of the epoch.)";
}

}  // namespace

std::vector<std::string> loss_sentences(const SeriesResult& series) {
  if (!series.has_loss()) return {};
  const analysis::ScaleLoss& l = series.largest_loss();
  const std::string& name = series.series;
  std::vector<std::string> out;
  out.push_back(fmt::format(
      "{}: from {} to {} workers the epoch time went from {} to {}, a speedup of {:.2f}x where {:.2f}x is ideal: "
      "parallel efficiency {}.",
      name, l.n0, l.n1, seconds_text(l.t0), seconds_text(l.t1), l.t0 / l.t1,
      static_cast<double>(l.n1) / static_cast<double>(l.n0), fmt_pct(l.efficiency)));
  if (!(l.lost > 0)) {
    out.push_back(fmt::format("{} lost no efficiency (at or above linear scaling).", name));
    return out;
  }
  // itwinai's fraction is a share of operator self time: shown as an indication, never attributed.
  auto indication = [&] {
    const double change = l.non_computation1 - l.non_computation0;
    return fmt::format(
        "As an indication only: operators outside ATen/c10/autograd took {} of the summed operator self time at "
        "{} worker{} and {} at {}{}",
        fmt_pct(l.non_computation0), l.n0, l.n0 == 1 ? "" : "s", fmt_pct(l.non_computation1), l.n1,
        std::abs(change) < 0.02 ? "; that share hardly changed, so it gives no sign that communication grew."
        : change > 0 ? "; a growing share, a hint (not a measurement) that communication or synchronisation grew."
                     : "; a shrinking share.");
  };
  if (l.basis == analysis::LossBasis::kComputationFraction) {
    out.push_back(fmt::format(
        "{} percentage points of efficiency were lost, and the data cannot say where: without device traces at "
        "both scales only itwinai's computation fraction is known, which is a share of summed operator self time, "
        "not of the epoch time (itwinai's caveat: it ignores parallelism and overlap; compare it across GPU counts "
        "of one strategy, not across strategies).",
        fmt_pts(l.lost)));
    out.push_back(indication());
    return out;
  }
  if (l.basis == analysis::LossBasis::kNone) {
    out.push_back(fmt::format(
        "{} percentage points of efficiency were lost; without profiler traces or computation data at both scales "
        "they cannot be attributed.",
        fmt_pts(l.lost)));
    return out;
  }
  std::string parts;
  for (const analysis::LossCause& c : l.causes) {
    std::string what;
    if (std::isnan(c.points)) {
      what = fmt::format("{} cannot be measured at both scales", c.name);
    } else {
      const std::string detail = fmt::format(
          "{} of the epoch time at {} worker{}, {} at {}: {} per epoch vs. {} if it had shrunk with the workers",
          fmt_pct(c.share0), l.n0, l.n0 == 1 ? "" : "s", fmt_pct(c.share1), l.n1, seconds_text(l.t1 * c.share1),
          seconds_text(l.t0 * c.share0 * static_cast<double>(l.n0) / static_cast<double>(l.n1)));
      what = c.points >= 0 ? fmt::format("{} growth accounts for {} points ({})", c.name, fmt_pts(c.points), detail)
                           : fmt::format("{} shrank faster than the workers grew and gives back {} points ({})", c.name,
                                         fmt_pts(-c.points), detail);
    }
    parts += (parts.empty() ? "" : "; ") + what;
  }
  out.push_back(fmt::format(
      "Of the {} points of efficiency lost, {}; {}.", fmt_pts(l.lost), parts,
      l.rest >= 0 ? fmt::format("everything else accounts for {} points", fmt_pts(l.rest))
                  : fmt::format("everything else shrank faster than the workers grew and gives back {} points",
                                fmt_pts(-l.rest))));
  out.push_back(basis_sentence(l.basis));
  if (analysis::outside_steps_beside_step_shares(l)) {
    out.push_back(
        "(The time outside the training steps comes from the step records: each epoch's time minus the steps of the "
        "rank that set it; the shares measured in the profiled steps are applied to the time in the steps.)");
  }
  const analysis::MainLossCause main = analysis::main_loss_cause(l);
  if (main.name == "everything else") {
    out.push_back(
        fmt::format("Most of the loss lies beyond the causes named ({}): work that does not shrink with more workers "
                    "(per-worker overheads, a serial part, smaller per-worker batches running less efficiently).",
                    cause_list(l.causes)));
  } else if (!main.name.empty()) {
    // "the growth of outside the steps" does not read: that cause is a stretch of time.
    const std::string what =
        main.name == analysis::kOutsideStepsCause ? std::string("the time outside the steps") : main.name;
    out.push_back(fmt::format("The main reason {} does not scale better is the growth of {}.", name, what));
  }
  return out;
}

std::vector<std::string> best_strategy_sentences(const ScalabilityAnalysis& analysis) {
  std::vector<std::string> out;
  for (const analysis::BestAtScale& b : analysis.best) {
    if (b.candidates < 2) continue;
    out.push_back(fmt::format("At {} worker{} {} is fastest ({} per epoch), {:.1f}% faster than {} ({}).", b.workers,
                              b.workers == 1 ? "" : "s", b.strategy, seconds_text(b.seconds),
                              (1.0 - b.seconds / b.runner_up_seconds) * 100.0, b.runner_up,
                              seconds_text(b.runner_up_seconds)));
  }
  return out;
}

}  // namespace scaleprof::report

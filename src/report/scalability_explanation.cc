#include "report/scalability_explanation.h"

#include <fmt/format.h>

#include <cmath>

namespace scaleprof::report {

namespace {

std::string fmt_s(double s) {
  if (!std::isfinite(s)) return "n/a";
  if (s >= 100) return fmt::format("{:.1f} s", s);
  if (s >= 1) return fmt::format("{:.2f} s", s);
  return fmt::format("{:.3f} s", s);
}

std::string fmt_pct(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.1f}%", fraction * 100.0) : "n/a";
}

std::string fmt_pts(double fraction) {
  return fmt::format("{:.1f}", fraction * 100.0);
}

}  // namespace

std::vector<std::string> loss_sentences(const SeriesResult& series) {
  if (!series.has_loss) return {};
  const SeriesResult* s = &series;
  const auto& l = s->loss;
  std::vector<std::string> out;
  out.push_back(fmt::format(
      "{}: from {} to {} workers the epoch time went from {} to {}, a speedup of {:.2f}x where {:.2f}x is ideal: "
      "parallel efficiency {}.",
      s->series, s->n0, s->n1, fmt_s(s->t0), fmt_s(s->t1), s->t0 / s->t1,
      static_cast<double>(s->n1) / static_cast<double>(s->n0), fmt_pct(l.efficiency)));
  if (!(l.lost > 0)) {
    out.push_back(fmt::format("{} lost no efficiency (at or above linear scaling).", s->series));
    return out;
  }
  if (s->loss_basis == "none") {
    out.push_back(fmt::format(
        "{} percentage points of efficiency were lost; without profiler traces or computation data at both scales "
        "they cannot be attributed.",
        fmt_pts(l.lost)));
    return out;
  }
  std::string parts;
  for (size_t k = 0; k < s->components.size(); ++k) {
    const double pts = l.parts[k];
    std::string what;
    if (std::isnan(pts)) {
      what = fmt::format("{} cannot be measured at both scales", s->components[k]);
    } else {
      const std::string detail = fmt::format(
          "{} of the epoch time at {} worker{}, {} at {}: {} per epoch vs. {} if it had shrunk with the "
          "workers",
          fmt_pct(s->share0[k]), s->n0, s->n0 == 1 ? "" : "s", fmt_pct(s->share1[k]), s->n1,
          fmt_s(s->t1 * s->share1[k]), fmt_s(s->t0 * s->share0[k] * s->n0 / s->n1));
      what = pts >= 0 ? fmt::format("{} growth accounts for {} points ({})", s->components[k], fmt_pts(pts), detail)
                      : fmt::format("{} shrank faster than the workers grew and gives back {} points ({})",
                                    s->components[k], fmt_pts(-pts), detail);
    }
    parts += (parts.empty() ? "" : "; ") + what;
  }
  out.push_back(fmt::format(
      "Of the {} points of efficiency lost, {}; {}.", fmt_pts(l.lost), parts,
      l.rest >= 0 ? fmt::format("everything else accounts for {} points", fmt_pts(l.rest))
                  : fmt::format("everything else shrank faster than the workers grew and gives back {} points",
                                fmt_pts(-l.rest))));
  if (s->loss_basis == "computation_fraction") {
    out.push_back(
        "(No device traces at both scales: the split uses itwinai's computation fraction, which counts all time "
        "outside ATen/c10/autograd operators as non-computation, so communication and idle time are not "
        "separated.)");
  }
  // The largest named cause.
  size_t best = s->components.size();
  for (size_t k = 0; k < s->components.size(); ++k) {
    if (!std::isnan(l.parts[k]) && (best == s->components.size() || l.parts[k] > l.parts[best])) best = k;
  }
  if (best < s->components.size()) {
    if (l.parts[best] >= l.rest) {
      out.push_back(
          fmt::format("The main reason {} does not scale better is {} growth.", s->series, s->components[best]));
    } else {
      out.push_back(fmt::format(
          "Most of the loss is outside {}: work that does not shrink with more workers (per-worker overheads, a "
          "serial part, smaller per-worker batches running less efficiently).",
          s->components.size() == 1 ? s->components[0] : "communication and idle time"));
    }
  }
  return out;
}

std::vector<std::string> best_strategy_sentences(const ScalabilityAnalysis& analysis) {
  std::vector<std::string> out;
  for (const analysis::BestAtScale& b : analysis.best) {
    if (b.candidates < 2) continue;
    out.push_back(fmt::format("At {} worker{} {} is fastest ({} per epoch), {:.1f}% faster than {} ({}).", b.workers,
                              b.workers == 1 ? "" : "s", b.strategy, fmt_s(b.seconds),
                              (1.0 - b.seconds / b.runner_up_seconds) * 100.0, b.runner_up,
                              fmt_s(b.runner_up_seconds)));
  }
  return out;
}

}  // namespace scaleprof::report

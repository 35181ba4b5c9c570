#include "report/key_figures.h"

#include <fmt/format.h>

#include <cmath>

#include "core/seconds_text.h"
#include "report/scalability_html.h"

namespace scaleprof::report {

namespace {

std::string workers_text(int64_t n) {
  return fmt::format("{} worker{}", n, n == 1 ? "" : "s");
}

// The causes of the efficiency lost at one scale, in points, summing to the loss: the attributed
// causes, then the rest, "unattributed" (the JSON causes list and the sentences use the same).
// Where the what-if model gave gains, they lead: what fixing each cause would gain, their overlap
// (interaction, negative where fixing one also removes part of another) and the rest, which together
// add up to the loss as the exclusive split does.
// A cause's tooltip note (LossChartCause::note): its named parts (the all-to-all imbalance, FSDP's exposed
// collectives) and the pipeline bubble at its ideal, in points of the exclusive split.
std::string chart_note(const analysis::ScaleLoss& l, const std::string& name) {
  std::string out;
  for (const analysis::LossCause& c : l.causes) {
    if (c.name != name) continue;
    for (const analysis::CauseDetail& d : c.details) {
      out += fmt::format("{}{} {:.1f} points", out.empty() ? "; of it in the exclusive split: " : ", ", d.name,
                         d.points * 100.0);
    }
    if (c.name == analysis::kPipelineBubbleCause && std::isfinite(c.ideal_points)) {
      out += fmt::format("; at the ideal (p-1)/(m+p-1): {:.1f} points", c.ideal_points * 100.0);
    }
  }
  return out;
}

std::vector<LossChartCause> causes_of(const analysis::ScaleLoss& l) {
  std::vector<LossChartCause> out;
  if (!l.gains.empty()) {
    for (const analysis::CauseGain& g : l.gains) out.push_back({g.name, g.points * 100.0, chart_note(l, g.name)});
    if (std::abs(l.interaction) >= 0.0005) out.push_back({"interaction", l.interaction * 100.0});
    out.push_back({analysis::kUnattributed, l.gains_rest * 100.0});
    return out;
  }
  for (const analysis::LossCause& c : l.causes) out.push_back({c.name, c.points * 100.0, chart_note(l, c.name)});
  out.push_back({analysis::kUnattributed, l.rest * 100.0});
  return out;
}

std::string basis_words_in_steps(const analysis::ScaleLoss& l) {
  if (l.basis == analysis::LossBasis::kDecomposition) {
    return "one rank's profiled steps split into exclusive parts at each scale";
  }
  if (l.basis == analysis::LossBasis::kTraces) return "shares of GPU time in the profiled steps";
  if (l.basis == analysis::LossBasis::kTracesCollectives) {
    return "shares of GPU time in the profiled steps; exposed communication split by the collectives matched across "
           "ranks";
  }
  if (l.basis == analysis::LossBasis::kCollectives) {
    return "shares of profiled step time in the collectives matched across ranks";
  }
  if (l.basis == analysis::LossBasis::kSteps) return "step records: time outside the training steps";
  if (l.basis == analysis::LossBasis::kComputationFraction) {
    return "itwinai's computation fraction is a share of operator self time, not of epoch time";
  }
  return "no profiler traces at both scales";
}

std::string basis_words(const analysis::ScaleLoss& l) {
  if (!l.gains.empty())
    return "what fixing each cause would gain, from the what-if model over every rank's profiled steps";
  if (analysis::outside_steps_beside_step_shares(l)) {
    return basis_words_in_steps(l) + "; time outside the steps from the step records";
  }
  return basis_words_in_steps(l);
}

}  // namespace

std::vector<MainCause> main_causes(const ScalabilityAnalysis& a) {
  std::vector<MainCause> out;
  for (const SeriesResult& s : a.series) {
    if (!s.has_loss()) continue;
    const analysis::ScaleLoss& l = s.largest_loss();
    MainCause m;
    m.series = s.series;
    m.workers = l.n1;
    m.base_workers = l.n0;
    m.efficiency_pct = l.efficiency * 100.0;
    m.weak = l.weak;
    m.lost_pts = l.lost * 100.0;
    m.basis = basis_words(l);
    m.attributed = analysis::is_attributed(l.basis);
    m.unattributed_pts = (l.gains.empty() ? l.rest : l.gains_rest) * 100.0;
    if (l.lost > 0) {
      const analysis::MainLossCause c = analysis::main_loss_cause(l);
      m.cause = c.name.empty() ? analysis::kUnattributed : c.name;
      m.cause_pts = c.name.empty() ? m.lost_pts : c.points * 100.0;
      if (l.gains.empty()) {
        for (const analysis::LossCause& k : l.causes) {
          if (k.name == c.name && k.rank >= 0) m.cause += fmt::format(" (rank {})", k.rank);
        }
      }
      for (const analysis::CauseGain& k : l.gains) {
        if (k.name == c.name && k.rank >= 0) m.cause += fmt::format(" (rank {})", k.rank);
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<LossChartBar> loss_chart_bars(const ScalabilityAnalysis& a) {
  std::vector<LossChartBar> out;
  for (const SeriesResult& s : a.series) {
    for (const analysis::ScaleLoss& l : s.losses) {
      LossChartBar b;
      b.series = s.series;
      b.workers = l.n1;
      b.base_workers = l.n0;
      b.efficiency_pct = l.efficiency * 100.0;
      b.causes = causes_of(l);
      out.push_back(std::move(b));
    }
  }
  return out;
}

std::string key_figures_html(const ScalabilityAnalysis& a) {
  std::string out = "<section id=\"key-figures\">\n<h2>Key figures</h2>\n<div class=\"cards\">\n";
  // Best strategy per scale.
  out += "<div class=\"card\" id=\"kf-best\"><h3>Best strategy per scale</h3><ul>\n";
  if (a.best.empty()) out += "<li>No epoch times.</li>\n";
  for (const analysis::BestAtScale& b : a.best) {
    out += fmt::format("<li><b>{}</b>: {} &mdash; {} per epoch", workers_text(b.workers), html_escape(b.strategy),
                       seconds_text(b.seconds));
    if (b.candidates >= 2 && std::isfinite(b.runner_up_seconds) && b.runner_up_seconds > 0) {
      out += fmt::format(", {:.1f}% faster than {}", (1.0 - b.seconds / b.runner_up_seconds) * 100.0,
                         html_escape(b.runner_up));
    } else {
      out += " (the only strategy measured)";
    }
    out += "</li>\n";
  }
  out += "</ul></div>\n";
  const std::vector<MainCause> causes = main_causes(a);
  // Efficiency at each strategy's largest scale.
  out += "<div class=\"card\" id=\"kf-efficiency\"><h3>Efficiency at the largest scale</h3><ul>\n";
  if (causes.empty()) out += "<li>Needs two or more worker counts of one strategy.</li>\n";
  for (const MainCause& m : causes) {
    out += fmt::format("<li><b>{}</b>: <span class=\"big\">{:.1f}%</span> at {} (vs. {}{})</li>\n",
                       html_escape(m.series), m.efficiency_pct, workers_text(m.workers), m.base_workers,
                       m.weak ? "; weak scaling: T(n0)/T(n)" : "");
  }
  out += "</ul></div>\n";
  // Main cause of the lost efficiency.
  out += "<div class=\"card\" id=\"kf-cause\"><h3>Main cause of lost efficiency</h3><ul>\n";
  if (causes.empty()) out += "<li>Needs two or more worker counts of one strategy.</li>\n";
  for (const MainCause& m : causes) {
    if (m.cause.empty()) {
      out += fmt::format("<li><b>{}</b>: no efficiency lost</li>\n", html_escape(m.series));
    } else if (!m.attributed) {
      out += fmt::format("<li><b>{}</b>: {:.1f} points lost, cause not measurable: {}</li>\n", html_escape(m.series),
                         m.lost_pts, html_escape(m.basis));
    } else {
      out += fmt::format(
          "<li><b>{}</b>: <span class=\"big\">{}</span> &mdash; {:.1f} of {:.1f} points; {:.1f} unattributed "
          "({})</li>\n",
          html_escape(m.series), html_escape(m.cause), m.cause_pts, m.lost_pts, m.unattributed_pts,
          html_escape(m.basis));
    }
  }
  out += "</ul></div>\n</div>\n";
  const std::vector<LossChartBar> bars = loss_chart_bars(a);
  if (!bars.empty()) {
    out += "<figure id=\"loss-chart-figure\">\n" + loss_chart_svg(bars) +
           "<figcaption>Lost parallel efficiency by cause, per strategy and scale, against each strategy's smallest "
           "scale. Details: <a href=\"#section-scaling_loss\">Where scaling is lost</a>.</figcaption>\n</figure>\n";
  }
  return out + "</section>\n";
}

}  // namespace scaleprof::report

#include "report/scalability_explanation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>

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
    case analysis::LossBasis::kDecomposition:
      return "(Basis: at each scale the profiled steps of one rank split into exclusive parts that add up to its "
             "step time, by what the rank was doing at each instant (device work first on GPUs; host operators on "
             "CPU-only traces), its waits at the collectives matched across ranks moved from communication to waiting "
             "for stragglers; the rank is the one that waited longest. No instant counts twice, so the causes never "
             "add up to more than was lost; they are applied to the time in the steps. This assumes the profiled "
             "steps are representative of the epoch.)";
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

// Causes whose points round to less than this are named together, not one by one.
constexpr double kSmallCause = 0.005;

std::string workers_word(int64_t n) {
  return n == 1 ? "" : "s";
}

// One cause in the sentence: its points, its seconds per epoch at both scales and what grew.
std::string cause_words(const analysis::LossCause& c, const analysis::ScaleLoss& l) {
  if (std::isnan(c.points)) return fmt::format("{} cannot be measured at both scales", c.name);
  const double shrunk = c.seconds0 * static_cast<double>(l.n0) / static_cast<double>(l.n1);
  std::string detail = fmt::format(
      "{} of the epoch time at {} worker{}, {} at {}: {} per epoch at {} worker{} and {} at {}, vs. {} if it had "
      "shrunk "
      "with the workers",
      fmt_pct(c.share0), l.n0, workers_word(l.n0), fmt_pct(c.share1), l.n1, seconds_text(c.seconds0), l.n0,
      workers_word(l.n0), seconds_text(c.seconds1), l.n1, seconds_text(shrunk));
  const std::string more = cause_detail(c, l);
  if (!more.empty()) detail += "; " + more;
  return c.points >= 0 ? fmt::format("{} growth accounts for {} points ({})", c.name, fmt_pts(c.points), detail)
                       : fmt::format("{} shrank faster than the workers grew and gives back {} points ({})", c.name,
                                     fmt_pts(-c.points), detail);
}

// "Of the N points of efficiency lost, <each cause>; <small causes together>; unattributed ...".
std::string causes_sentence(const analysis::ScaleLoss& l) {
  std::string parts;
  std::vector<analysis::LossCause> small;
  double small_points = 0;
  for (const analysis::LossCause& c : l.causes) {
    if (std::isfinite(c.points) && std::abs(c.points) < kSmallCause) {
      small.push_back(c);
      small_points += c.points;
      continue;
    }
    parts += (parts.empty() ? "" : "; ") + cause_words(c, l);
  }
  if (!small.empty()) {
    parts += fmt::format("{}{} account{} for {} points together (less than 0.5 each)", parts.empty() ? "" : "; ",
                         cause_list(small), small.size() == 1 ? "s" : "", fmt_pts(small_points));
  }
  const std::string rest = l.rest >= 0
                               ? fmt::format("{} accounts for {} points", analysis::kUnattributed, fmt_pts(l.rest))
                               : fmt::format("{} shrank faster than the workers grew and gives back {} points",
                                             analysis::kUnattributed, fmt_pts(-l.rest));
  return fmt::format("Of the {} points of efficiency lost, {}; {}.", fmt_pts(l.lost), parts, rest);
}

// One scale has step records and the other none: the time outside the steps cannot be separated.
std::string steps_note(const analysis::ScaleLoss& l) {
  return fmt::format(
      "(The time outside the training steps is not separated: there are no step records (run.step(), steps.csv) at "
      "{} workers, only at {}; {})",
      l.steps0 ? l.n1 : l.n0, l.steps0 ? l.n0 : l.n1,
      is_attributed(l.basis) ? "the shares measured in the profiled steps are applied to the whole epoch time."
                             : "without profiler traces at both scales nothing else can be attributed.");
}

// The main cause as the sentence names it: "the time outside the steps" (a stretch of time, so not
// "the growth of outside the steps"), and the rank for waiting.
std::string main_what(const analysis::MainLossCause& main, const analysis::ScaleLoss& l) {
  if (main.name == analysis::kOutsideStepsCause) return "the time outside the steps";
  for (const analysis::CauseGain& g : l.gains) {
    if (g.name == main.name && g.rank >= 0) return fmt::format("{} (rank {})", main.name, g.rank);
  }
  for (const analysis::LossCause& c : l.causes) {
    if (c.name == main.name && c.rank >= 0) return fmt::format("{} (rank {})", main.name, c.rank);
  }
  return main.name;
}

// "20.4 % of the profiled steps at 2 workers (p=2, m=4: ideal 20.0 %)": the bubble beside its schedule's ideal.
std::string bubble_at(int64_t workers, int64_t stages, int64_t micro_batches, double fraction, double ideal) {
  if (stages <= 0) return fmt::format("none at {} worker{} (no pipeline)", workers, workers_word(workers));
  std::string out = fmt::format("{:.1f} % of the profiled steps at {} worker{} (p={}", fraction * 100.0, workers,
                                workers_word(workers), stages);
  if (micro_batches > 0 && std::isfinite(ideal)) {
    return out + fmt::format(", m={}: ideal (p-1)/(m+p-1) {:.1f} %)", micro_batches, ideal * 100.0);
  }
  return out + ", m unknown)";
}

std::string pipeline_detail(const analysis::LossCause& c, const analysis::ScaleLoss& l) {
  std::string out = fmt::format("the stages' wait for their neighbours at the pipeline's sends and receives: {}, {}",
                                bubble_at(l.n0, c.stages0, c.micro_batches0, c.step_fraction0, c.ideal_fraction0),
                                bubble_at(l.n1, c.stages1, c.micro_batches1, c.step_fraction1, c.ideal_fraction1));
  if (std::isfinite(c.ideal_points))
    out += fmt::format("; at the ideal it would cost {} points", fmt_pts(c.ideal_points));
  return out;
}

}  // namespace

std::string cause_detail(const analysis::LossCause& c, const analysis::ScaleLoss& l) {
  if (c.name == analysis::kOutsideStepsCause) return "each epoch's time minus the steps of the rank that set it";
  if (l.basis != analysis::LossBasis::kDecomposition) return "";
  if (c.name == analysis::kComputationCause) {
    std::string out;
    if (std::isfinite(c.seconds_per_sample0) && std::isfinite(c.seconds_per_sample1)) {
      out = fmt::format("{:.3g} ms per sample on a worker at {} worker{}, {:.3g} ms at {}", c.seconds_per_sample0 * 1e3,
                        l.n0, workers_word(l.n0), c.seconds_per_sample1 * 1e3, l.n1);
    }
    if (c.operators.empty()) return out;
    out += out.empty() ? "" : "; ";
    out += "operators whose time grew most beyond shrinking with the workers: ";
    for (size_t i = 0; i < c.operators.size(); ++i) {
      const analysis::OperatorGrowth& o = c.operators[i];
      out += fmt::format("{}{} {} to {} per epoch (+{})", i == 0 ? "" : ", ", o.name, seconds_text(o.seconds0),
                         seconds_text(o.seconds1), seconds_text(o.excess_s));
    }
    return out;
  }
  if (c.name == analysis::kCommunicationCause) {
    std::string out = "collectives no computation hides";
    // Its named parts (all-to-all imbalance, FSDP's exposed collectives): inside communication's points, not
    // beside them. The text names the first four; the JSON's parts list has them all.
    constexpr size_t kNamed = 4;
    for (size_t i = 0; i < c.details.size() && i < kNamed; ++i) {
      const analysis::CauseDetail& d = c.details[i];
      out += fmt::format("; of it, {}: {} to {} per epoch ({} points)", d.name, seconds_text(d.seconds0),
                         seconds_text(d.seconds1), fmt_pts(d.points));
    }
    if (c.details.size() > kNamed) out += fmt::format("; {} more parts", c.details.size() - kNamed);
    return out;
  }
  if (c.name == analysis::kPipelineBubbleCause) return pipeline_detail(c, l);
  if (c.name == analysis::kWaitingCause) {
    return c.rank >= 0 ? fmt::format("the others waited most for rank {}", c.rank)
                       : std::string("at the collectives matched across ranks");
  }
  if (c.name == "data loading") return "data-loader regions in the steps";
  if (c.name == "optimizer") return "optimizer step and zero_grad regions";
  if (c.name == "host overhead") return "other host work: no computation, communication or data loading";
  if (c.name == "idle") return "nothing recorded";
  return "";
}

std::string gain_detail(const analysis::CauseGain& g, const analysis::ScaleLoss& l) {
  if (g.name == analysis::kOutsideStepsCause) {
    return "the time outside the steps shrunk with the workers (its excess removed; no model needed)";
  }
  if (g.name == analysis::kPipelineBubbleCause) {
    return "the pipeline bubble's growth removed (its excess in the exclusive split; the model does not replay the "
           "schedule)";
  }
  if (g.name == analysis::kWaitingCause) {
    return g.rank >= 0 ? fmt::format("rank {}'s work between collectives capped at the other ranks' median", g.rank)
                       : std::string("no rank's work exceeds the others'");
  }
  const std::string what = g.name == "communication" ? "every collective's transfer" : g.name;
  if (!std::isfinite(g.factor) || g.factor >= 1.0) {
    return fmt::format("{} already shrank with the workers from {} to {}: nothing to fix", what, l.n0, l.n1);
  }
  if (g.factor <= 0.0) return fmt::format("{} removed (none at {} worker{})", what, l.n0, workers_word(l.n0));
  return fmt::format("{} scaled to {:.2f} of its time: what it would be had it shrunk with the workers from {}", what,
                     g.factor, l.n0);
}

namespace {

// "Fixing X would gain N points (epoch A -> B s), ...; all at once M ...": the what-if gains.
std::string gains_sentence(const analysis::ScaleLoss& l) {
  std::string parts;
  std::vector<std::string> small;
  for (const analysis::CauseGain& g : l.gains) {
    if (!(g.points >= kSmallCause)) {
      small.push_back(g.name);
      continue;
    }
    const std::string who = g.rank >= 0 && g.name == analysis::kWaitingCause ? fmt::format(" (rank {})", g.rank) : "";
    parts += fmt::format("{}{}{} {} points (epoch {} instead of {})", parts.empty() ? "" : "; ", g.name, who,
                         fmt_pts(g.points), seconds_text(g.predicted_epoch_s), seconds_text(l.t1));
  }
  std::string out = fmt::format("What fixing each cause would gain at {} workers (what-if model): {}", l.n1,
                                parts.empty() ? "no cause gains half a point" : parts);
  if (!small.empty()) out += fmt::format("; under half a point each: {}", fmt::join(small, ", "));
  const double all = l.lost - l.gains_rest;
  out += fmt::format(". Fixing them all at once gains {} points (epoch {})", fmt_pts(all),
                     seconds_text(l.all_fixed_epoch_s));
  if (l.interaction < -0.005) {
    out += fmt::format(", {} less than their sum: the causes overlap (fixing one also removes part of another)",
                       fmt_pts(-l.interaction));
  } else if (l.interaction > 0.005) {
    out += fmt::format(", {} more than their sum: fixing one makes another cost more", fmt_pts(l.interaction));
  }
  out += l.gains_rest >= 0
             ? fmt::format("; {} points lie beyond the causes named.", fmt_pts(l.gains_rest))
             : fmt::format("; the fixes together gain {} points more than was lost.", fmt_pts(-l.gains_rest));
  return out;
}

constexpr const char* kModelSentence =
    "(What-if model: every rank's profiled steps are replayed with their arrivals at the collectives matched across "
    "ranks, each collective starting when its last rank arrives; the cause is removed — a part of each rank's work "
    "shrunk to what it would be had it shrunk with the workers, the collectives' transfers likewise, the slowest "
    "rank's work capped at the others' median — and the steps re-timed; the change in the time in the steps is "
    "applied to the epoch. A cause's points are the epoch time its fix saves over the epoch time. docs/report.md "
    "says more.)";

}  // namespace

std::vector<std::string> loss_sentences(const SeriesResult& series) {
  if (!series.has_loss()) {
    // One worker count: nothing to compare, and the reader should know why no loss is shown.
    if (series.amdahl.points > 0 && series.amdahl.base_workers == series.amdahl.max_workers) {
      return {fmt::format("{}: measured at {} worker{} only; where scaling is lost needs a second worker count.",
                          series.series, series.amdahl.base_workers, series.amdahl.base_workers == 1 ? "" : "s")};
    }
    return {};
  }
  const analysis::ScaleLoss& l = series.largest_loss();
  const std::string& name = series.series;
  std::vector<std::string> out;
  if (l.weak) {
    out.push_back(fmt::format(
        "{}: weak scaling from {} to {} workers (the same samples per worker): the epoch time went from {} to {} "
        "where the same time is ideal: weak-scaling efficiency {}.",
        name, l.n0, l.n1, seconds_text(l.t0), seconds_text(l.t1), fmt_pct(l.efficiency)));
  } else {
    out.push_back(fmt::format(
        "{}: from {} to {} workers the epoch time went from {} to {}, a speedup of {:.2f}x where {:.2f}x is ideal: "
        "parallel efficiency {}.",
        name, l.n0, l.n1, seconds_text(l.t0), seconds_text(l.t1), l.t0 / l.t1,
        static_cast<double>(l.n1) / static_cast<double>(l.n0), fmt_pct(l.efficiency)));
  }
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
    if (l.steps0 != l.steps1) out.push_back(steps_note(l));
    return out;
  }
  const bool gains = !l.gains.empty();
  if (gains) {
    out.push_back(gains_sentence(l));
    out.push_back(kModelSentence);
    out.push_back(
        "What each rank was doing (the exclusive split; it says where the time went, not what fixing a "
        "cause gains): " +
        causes_sentence(l));
  } else {
    out.push_back(causes_sentence(l));
  }
  out.push_back(basis_sentence(l.basis));
  if (analysis::outside_steps_beside_step_shares(l)) {
    out.push_back(
        "(The time outside the training steps comes from the step records: each epoch's time minus the steps of the "
        "rank that set it; the shares measured in the profiled steps are applied to the time in the steps.)");
  }
  if (l.steps0 != l.steps1) out.push_back(steps_note(l));
  const analysis::MainLossCause main = analysis::main_loss_cause(l);
  if (main.name == analysis::kUnattributed) {
    out.push_back(
        fmt::format("Most of the loss lies beyond the causes named ({}): work that does not shrink with more workers "
                    "(per-worker overheads, a serial part, smaller per-worker batches running less efficiently).",
                    cause_list(l.causes)));
  } else if (!main.name.empty() && gains) {
    out.push_back(fmt::format("The main reason {} does not scale better is {}: fixing it would gain {} points.", name,
                              main_what(main, l), fmt_pts(main.points)));
  } else if (!main.name.empty()) {
    out.push_back(
        fmt::format("The main reason {} does not scale better is the growth of {}.", name, main_what(main, l)));
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

std::vector<std::string> failure_sentences(const ScalabilityAnalysis& a) {
  // Per strategy, in worker order (the groups' order): what each failed configuration recorded.
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> failed;
  for (const analysis::ScaleGroup& g : a.groups) {
    if (!g.failed) continue;
    std::vector<std::string> why;
    bool none_ran = true;  // every job of it never ran (RunData::not_run): "did not run", not "failed"
    for (size_t i : g.failed_runs) {
      const tables::RunData& r = *a.runs[i];
      none_ran &= !r.not_run.empty();
      std::string w = !r.not_run.empty() ? r.not_run
                      : r.exit_code      ? fmt::format("exit {}", *r.exit_code)
                                         : "status " + r.status;
      if (r.not_run.empty()) w += r.log.empty() ? ", run " + r.path : ", log " + r.log;
      why.push_back(std::move(w));
    }
    if (failed.count(g.series) == 0) order.push_back(g.series);
    failed[g.series].push_back(fmt::format("{} worker{} {} ({})", g.workers, workers_word(g.workers),
                                           none_ran ? "did not run" : "failed", fmt::join(why, "; ")));
  }
  std::vector<std::string> out;
  for (const std::string& series : order) {
    const int64_t base = analysis::baseline_workers(a, series);
    const std::string list = fmt::format("{}", fmt::join(failed[series], ", "));
    out.push_back(base > 0 ? fmt::format("{}: baseline is {} worker{}, its smallest scale that completed; {}.", series,
                                         base, workers_word(base), list)
                           : fmt::format("{}: no scale completed; {}.", series, list));
  }
  return out;
}

}  // namespace scaleprof::report

#include "analysis/whatif_gains.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <utility>

#include "analysis/scaling.h"
#include "core/number_text.h"

namespace scaleprof::analysis {

namespace {

using tables::RunTimeline;

constexpr size_t kCompute = 0, kDataLoading = 3, kOptimizer = 4, kHostOverhead = 5, kIdle = 6;

// The cause name of each part, as the decomposition basis names it (scaling_loss.h).
const char* part_cause(size_t p) {
  static constexpr const char* kNames[] = {kComputationCause, "communication", kWaitingCause, "data loading",
                                           "optimizer",       "host overhead", "idle"};
  return kNames[p];
}

// The model over a scale's runs, pooled: predicted / measured time in the profiled steps.
struct Pooled {
  bool ok = false;
  double measured_ns = 0, predicted_ns = 0;
  int64_t rank_steps = 0;
  double step_min_ns = tables::kNaN, step_max_ns = tables::kNaN;
  std::vector<StepReplay> steps;  // every run's, in run order
  double ratio() const { return ok && measured_ns > 0 ? predicted_ns / measured_ns : tables::kNaN; }
};

Pooled pooled_replay(const WhatIfScale& scale, const std::function<WhatIf(const RunTimeline&)>& change) {
  Pooled out;
  for (const RunTimeline* t : scale.runs) {
    const Replay r = replay(*t, change(*t));
    if (!r.ok) continue;
    out.ok = true;
    out.measured_ns += r.measured_ns;
    out.predicted_ns += r.predicted_ns;
    out.steps.insert(out.steps.end(), r.steps.begin(), r.steps.end());
    for (const StepReplay& s : r.steps) {
      out.rank_steps += s.ranks;
      out.step_min_ns = std::isnan(out.step_min_ns) ? s.predicted_ns : std::min(out.step_min_ns, s.predicted_ns);
      out.step_max_ns = std::isnan(out.step_max_ns) ? s.predicted_ns : std::max(out.step_max_ns, s.predicted_ns);
    }
  }
  return out;
}

// Seconds per epoch the change saves at a scale (its time in the steps times 1 - predicted/measured).
double saved_seconds(const WhatIfScale& scale, const std::function<WhatIf(const RunTimeline&)>& change) {
  const Pooled p = pooled_replay(scale, change);
  const double r = p.ratio();
  if (std::isnan(r)) return tables::kNaN;
  return scale.seconds * scale.in_steps * (1.0 - r);
}

// The parts of a typical rank's steps as shares of them: per run each rank's parts summed over its
// steps, the median over the ranks other than the run's slowest (whose excess is the straggler's
// cause, not the part's), runs pooled by their time. Index 1 is exposed communication.
std::array<double, tables::kTimelineParts> part_shares(const WhatIfScale& scale) {
  std::array<double, tables::kTimelineParts> sum{};
  double total = 0;
  for (const RunTimeline* t : scale.runs) {
    std::map<int64_t, std::array<double, tables::kTimelineParts>> per_rank;
    for (const tables::TimelineStep& st : t->steps) {
      auto& parts = per_rank[st.rank];
      for (const tables::TimelineJoin& j : st.joins) {
        for (size_t p = 0; p < parts.size(); ++p) parts[p] += static_cast<double>(j.parts[p]);
      }
    }
    const int64_t slow = per_rank.size() > 1 ? slowest_rank(*t).rank : -1;
    std::vector<std::array<double, tables::kTimelineParts>> kept;
    for (const auto& [rank, parts] : per_rank) {
      if (rank != slow) kept.push_back(parts);
    }
    if (kept.empty()) continue;
    double run_total = 0;
    for (size_t p = 0; p < sum.size(); ++p) {
      std::vector<double> v;
      for (const auto& parts : kept) v.push_back(parts[p]);
      const double median = sample_stats(std::move(v)).median;
      sum[p] += median;
      run_total += median;
    }
    total += run_total;
  }
  std::array<double, tables::kTimelineParts> out{};
  if (total > 0) {
    for (size_t p = 0; p < out.size(); ++p) out[p] = sum[p] / total;
  }
  return out;
}

// The collectives' transfers (completion after the last arrival, mean over the call's ranks) as a
// share of the profiled steps (mean over ranks), runs pooled.
double transfer_share(const WhatIfScale& scale) {
  double transfer = 0, steps = 0;
  for (const RunTimeline* t : scale.runs) {
    std::map<int64_t, double> per_rank;
    for (const tables::TimelineStep& st : t->steps)
      per_rank[st.rank] += static_cast<double>(st.end_ns()) - static_cast<double>(st.start_ns);
    if (per_rank.empty()) continue;
    double mean_step = 0;
    for (const auto& [rank, ns] : per_rank) mean_step += ns;
    steps += mean_step / static_cast<double>(per_rank.size());
    for (const tables::TimelineCall& c : t->calls) {
      int64_t last = 0;
      for (const auto& r : c.ranks) last = std::max(last, r.arrival_ns);
      double sum = 0;
      for (const auto& r : c.ranks)
        sum += std::max(0.0, static_cast<double>(r.completion_ns) - static_cast<double>(last));
      if (!c.ranks.empty()) transfer += sum / static_cast<double>(c.ranks.size());
    }
  }
  return steps > 0 ? transfer / steps : 0.0;
}

// What a time per epoch at n0 would be at n1 had it shrunk with the workers: per sample on a worker
// where both scales know their samples, else by n0/n1 (weak scaling: the same).
double shrink(const WhatIfScale& base, const WhatIfScale& at, bool weak) {
  if (base.samples_per_worker > 0 && at.samples_per_worker > 0) return at.samples_per_worker / base.samples_per_worker;
  return weak ? 1.0 : static_cast<double>(base.workers) / static_cast<double>(at.workers);
}

// The scale a time of `at` is multiplied by to be what `base`'s would be had it shrunk: never above 1.
double fix_factor(double seconds0, double seconds1, double shrink_by) {
  if (!(seconds1 > 0) || !std::isfinite(seconds0)) return 1.0;
  return std::clamp(seconds0 * shrink_by / seconds1, 0.0, 1.0);
}

struct CauseFixes {
  std::array<double, tables::kTimelineParts> part_scale{1, 1, 1, 1, 1, 1, 1};
  double transfer_scale = 1.0;
};

CauseFixes cause_fixes(const WhatIfScale& base, const WhatIfScale& at, bool weak) {
  CauseFixes f;
  const double by = shrink(base, at, weak);
  const auto s0 = part_shares(base);
  const auto s1 = part_shares(at);
  const double in0 = base.seconds * base.in_steps, in1 = at.seconds * at.in_steps;
  for (size_t p : {kCompute, kDataLoading, kOptimizer, kHostOverhead, kIdle}) {
    f.part_scale[p] = fix_factor(s0[p] * in0, s1[p] * in1, by);
  }
  f.transfer_scale = fix_factor(transfer_share(base) * in0, transfer_share(at) * in1, by);
  return f;
}

WhatIf straggler_fix(const RunTimeline& t) {
  WhatIf w;
  const SlowRank slow = slowest_rank(t);
  if (slow.rank >= 0) w.ranks_at_median.push_back(slow.rank);
  return w;
}

std::string lower_trimmed(std::string_view text) {
  std::string out;
  for (char c : trim_blanks(text)) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

// "Fx faster", "xF faster", "F x faster": the time multiplied by 1/F.
std::optional<double> faster(std::string_view rest) {
  if (!rest.ends_with(" faster")) return std::nullopt;
  std::string f(trim_blanks(rest.substr(0, rest.size() - 7)));
  if (f.starts_with("x")) f.erase(0, 1);
  if (f.ends_with("x")) f.pop_back();
  const std::optional<double> v = parse_double(trim_blanks(f));
  if (!v || !(*v >= 1.0) || !std::isfinite(*v)) return std::nullopt;
  return 1.0 / *v;
}

// A target's part index (-1 communication), nullopt when unknown.
std::optional<int> target_part(std::string_view target) {
  static const std::pair<std::string_view, int> kTargets[] = {{"communication", -1},
                                                              {"comm", -1},
                                                              {"collectives", -1},
                                                              {"computation", kCompute},
                                                              {"compute", kCompute},
                                                              {"data loading", kDataLoading},
                                                              {"data", kDataLoading},
                                                              {"optimizer", kOptimizer},
                                                              {"host overhead", kHostOverhead},
                                                              {"host", kHostOverhead},
                                                              {"idle", kIdle}};
  for (const auto& [name, part] : kTargets) {
    if (target == name) return part;
  }
  return std::nullopt;
}

}  // namespace

Result<WhatIfSpec> parse_what_if(std::string_view text) {
  WhatIfSpec s;
  s.text = std::string(trim_blanks(text));
  const std::string t = lower_trimmed(text);
  auto bad = [&] {
    return Error{fmt::format("--what-if '{}': not understood; write 'rank N at median', 'stragglers at median', "
                             "'communication free', 'communication 2x faster', 'all-to-all balanced', one of "
                             "computation, data loading, optimizer, host overhead, idle followed by '2x faster', "
                             "'free' or 'at base', or the name of an operator, annotation or kernel followed by "
                             "'2x faster' or 'free'",
                             s.text),
                 ErrorKind::kUsage};
  };
  // A named target (its text as written, quotes around it removed): kNamed.
  auto named = [&](const std::string& name, double scale) -> Result<WhatIfSpec> {
    std::string_view n = trim_blanks(name);
    if (n.size() >= 2 && (n.front() == '\'' || n.front() == '"') && n.back() == n.front()) {
      n = trim_blanks(n.substr(1, n.size() - 2));
    }
    if (n.empty() || n.size() > kMaxTargetName) return bad();
    s.kind = WhatIfSpec::Kind::kNamed;
    s.name = std::string(n);
    s.scale = scale;
    return s;
  };
  if (t.starts_with("rank ") && t.ends_with(" at median")) {
    const std::string_view n = std::string_view(t).substr(5, t.size() - 5 - 10);
    const std::optional<int64_t> r = parse_int64(trim_blanks(n));
    if (!r || *r < 0) return bad();
    s.kind = WhatIfSpec::Kind::kRankAtMedian;
    s.rank = *r;
    return s;
  }
  if (t == "all-to-all balanced" || t == "alltoall balanced") {
    s.kind = WhatIfSpec::Kind::kAlltoallBalanced;
    return s;
  }
  if (t == "stragglers at median" || t == "straggler at median") {
    s.kind = WhatIfSpec::Kind::kStragglersAtMedian;
    return s;
  }
  for (std::string_view end : {" free", " at base"}) {
    if (!t.ends_with(end)) continue;
    const std::optional<int> part = target_part(std::string_view(t).substr(0, t.size() - end.size()));
    if (!part && end == " free") return named(s.text.substr(0, s.text.size() - end.size()), 0.0);
    if (!part) return bad();
    s.part = *part;
    s.scale = 0.0;
    if (end == " at base") {
      s.kind = WhatIfSpec::Kind::kPartAtBase;
    } else {
      s.kind = *part < 0 ? WhatIfSpec::Kind::kCommunication : WhatIfSpec::Kind::kPart;
    }
    return s;
  }
  const size_t space = t.find(' ');
  for (size_t cut = space; cut != std::string::npos; cut = t.find(' ', cut + 1)) {
    const std::optional<int> part = target_part(std::string_view(t).substr(0, cut));
    if (!part) continue;
    const std::optional<double> scale = faster(std::string_view(t).substr(cut + 1));
    if (!scale) return bad();
    s.part = *part;
    s.scale = *scale;
    s.kind = *part < 0 ? WhatIfSpec::Kind::kCommunication : WhatIfSpec::Kind::kPart;
    return s;
  }
  // NAME Fx faster: an operator, annotation or kernel.
  if (t.ends_with(" faster")) {
    const size_t cut = t.rfind(' ', t.size() - 8);
    if (cut != std::string::npos && cut > 0) {
      if (const std::optional<double> scale = faster(std::string_view(t).substr(cut + 1))) {
        return named(s.text.substr(0, cut), *scale);
      }
    }
  }
  return bad();
}

std::vector<std::string> what_if_targets(const std::vector<WhatIfSpec>& specs) {
  std::vector<std::string> out;
  for (const WhatIfSpec& s : specs) {
    if (s.kind == WhatIfSpec::Kind::kNamed && std::find(out.begin(), out.end(), s.name) == out.end()) {
      out.push_back(s.name);
    }
  }
  return out;
}

Status check_targets_ran(const std::vector<std::string>& targets, const std::vector<const tables::RunTimeline*>& runs) {
  for (size_t k = 0; k < targets.size(); ++k) {
    bool ran = false;
    for (const RunTimeline* t : runs) {
      for (const tables::TimelineStep& st : t->steps) {
        for (const tables::TimelineJoin& j : st.joins) ran = ran || (k < j.target_ns.size() && j.target_ns[k] > 0);
      }
    }
    if (!ran) {
      return Error{fmt::format("--what-if: no operator, annotation or kernel whose name contains '{}' ran in a "
                               "profiled step (names are case-sensitive; `scaleprof trace ops` lists them)",
                               targets[k]),
                   ErrorKind::kBadInput};
    }
  }
  return Ok{};
}

Status check_what_ifs_apply(const std::vector<WhatIfSpec>& specs, const std::vector<const RunTimeline*>& runs) {
  if (Status ran = check_targets_ran(what_if_targets(specs), runs); !ran) return ran;
  for (const WhatIfSpec& spec : specs) {
    if (spec.kind != WhatIfSpec::Kind::kAlltoallBalanced) continue;
    const bool any = std::any_of(runs.begin(), runs.end(), [](const RunTimeline* t) {
      return std::any_of(t->calls.begin(), t->calls.end(),
                         [](const tables::TimelineCall& c) { return c.alltoall_balance >= 0; });
    });
    if (!any) {
      return Error{fmt::format("--what-if '{}': no all-to-all whose split sizes are in the trace was matched across "
                               "ranks in a profiled step (on gloo, profile with record_shapes=True; `scaleprof trace "
                               "collectives` lists the all-to-alls and their bytes per peer)",
                               spec.text),
                   ErrorKind::kBadInput};
    }
  }
  return Ok{};
}

WhatIfOutcome apply_what_if(const WhatIfSpec& spec, const WhatIfScale& base, const WhatIfScale& at, bool weak) {
  WhatIfOutcome out;
  if (!at.has_model()) return out;
  WhatIf fixed;
  std::function<WhatIf(const RunTimeline&)> change = [&](const RunTimeline&) { return fixed; };
  switch (spec.kind) {
    case WhatIfSpec::Kind::kRankAtMedian:
      fixed.ranks_at_median = {spec.rank};
      break;
    case WhatIfSpec::Kind::kStragglersAtMedian:
      change = straggler_fix;
      break;
    case WhatIfSpec::Kind::kCommunication:
      fixed.transfer_scale = spec.scale;
      break;
    case WhatIfSpec::Kind::kPart:
      fixed.part_scale[static_cast<size_t>(spec.part)] = spec.scale;
      break;
    case WhatIfSpec::Kind::kNamed:
      fixed.target = spec.name;
      fixed.target_scale = spec.scale;
      break;
    case WhatIfSpec::Kind::kAlltoallBalanced:
      fixed.balance_alltoall = true;
      break;
    case WhatIfSpec::Kind::kPartAtBase: {
      if (!base.has_model()) return out;
      const CauseFixes f = cause_fixes(base, at, weak);
      fixed.scale_typical_only = true;  // as the cause's own gain: never another rank's excess
      if (spec.part < 0) {
        fixed.transfer_scale = f.transfer_scale;
      } else {
        fixed.part_scale[static_cast<size_t>(spec.part)] = f.part_scale[static_cast<size_t>(spec.part)];
      }
      break;
    }
  }
  const Pooled p = pooled_replay(at, change);
  if (!p.ok || p.rank_steps <= 0) return out;
  out.ok = true;
  out.epoch_s = at.seconds;
  out.predicted_epoch_s = at.seconds - at.seconds * at.in_steps * (1.0 - p.ratio());
  out.step_ms = p.measured_ns / static_cast<double>(p.rank_steps) / 1e6;
  out.predicted_step_ms = p.predicted_ns / static_cast<double>(p.rank_steps) / 1e6;
  out.predicted_step_ms_min = p.step_min_ns / 1e6;
  out.predicted_step_ms_max = p.step_max_ns / 1e6;
  out.steps = p.steps;
  return out;
}

void add_what_if_gains(const WhatIfScale& base, const WhatIfScale& at, ScaleLoss* loss) {
  if (!base.has_model() || !at.has_model() || !(loss->t1 > 0)) return;
  const bool weak = loss->weak;
  const double by = shrink(base, at, weak);
  const CauseFixes fixes = cause_fixes(base, at, weak);
  auto gain_of = [&](const std::function<WhatIf(const RunTimeline&)>& change, bool at_base_too) {
    const double g1 = saved_seconds(at, change);
    const double g0 = at_base_too ? saved_seconds(base, change) : 0.0;
    return g1 - (std::isnan(g0) ? 0.0 : g0 * by);
  };
  auto add = [&](std::string name, double seconds, double factor, int64_t rank = -1) {
    if (std::isnan(seconds)) return;
    // A fix that changes nothing replays the trace to within floating-point noise: 0, never "-0.0".
    if (std::abs(seconds) < 1e-9 * loss->t1) seconds = 0.0;
    CauseGain g;
    g.name = std::move(name);
    g.seconds = seconds;
    g.points = seconds / loss->t1;
    g.predicted_epoch_s = loss->t1 - seconds;
    g.factor = factor;
    g.rank = rank;
    loss->gains.push_back(std::move(g));
  };
  // Outside the steps: its excess, as the exclusive split has it (no model needed), never below 0. The
  // pipeline bubble likewise: the model replays each rank's steps, not the pipeline's schedule, so what
  // removing the bubble's growth would gain is its excess in the exclusive split.
  double outside = 0;
  for (const LossCause& c : loss->causes) {
    if (c.name == kOutsideStepsCause || c.name == kPipelineBubbleCause) {
      const double excess = std::max(0.0, c.points * loss->t1);
      outside += excess;
      add(c.name, excess, tables::kNaN);
    }
  }
  for (size_t p : {kCompute, kDataLoading, kOptimizer, kHostOverhead, kIdle}) {
    WhatIf w;
    w.scale_typical_only = true;
    w.part_scale[p] = fixes.part_scale[p];
    add(part_cause(p), gain_of([&](const RunTimeline&) { return w; }, false), fixes.part_scale[p]);
  }
  {
    WhatIf w;
    w.transfer_scale = fixes.transfer_scale;
    add("communication", gain_of([&](const RunTimeline&) { return w; }, false), fixes.transfer_scale);
  }
  {
    // The slow rank named: the one of the largest excess over the runs at this scale.
    SlowRank slowest;
    for (const RunTimeline* t : at.runs) {
      const SlowRank s = slowest_rank(*t);
      if (s.excess_ns > slowest.excess_ns) slowest = s;
    }
    add(kWaitingCause, gain_of(straggler_fix, true), tables::kNaN, slowest.rank);
  }
  // Every cause fixed at once.
  auto all = [&](const RunTimeline& t) {
    WhatIf w = straggler_fix(t);
    w.scale_typical_only = true;
    w.part_scale = fixes.part_scale;
    w.transfer_scale = fixes.transfer_scale;
    return w;
  };
  const double all_in_steps = gain_of(all, false) - [&] {
    const double g0 = saved_seconds(base, straggler_fix);  // the straggler's part at n0, as in its own gain
    return std::isnan(g0) ? 0.0 : g0 * by;
  }();
  double sum = 0;
  for (const CauseGain& g : loss->gains) sum += g.seconds;
  const double all_seconds = all_in_steps + outside;
  loss->interaction = (all_seconds - sum) / loss->t1;
  loss->gains_rest = loss->lost - all_seconds / loss->t1;
  loss->all_fixed_epoch_s = loss->t1 - all_seconds;
  // Exactly 0 where nothing overlaps (floating-point noise otherwise reads "-0.0").
  if (std::abs(loss->interaction) < 1e-9) loss->interaction = 0.0;
  std::stable_sort(loss->gains.begin(), loss->gains.end(),
                   [](const CauseGain& a, const CauseGain& b) { return a.seconds > b.seconds; });
}

namespace {

// a + b/n through (n0, y0) and (n1, y1), a and b kept >= 0: a time that grew is held at y1, one that
// shrank faster than 1/n shrinks as 1/n from n1.
double fit_amdahl_part(double n0, double y0, double n1, double y1, double n) {
  if (n0 == n1) return y1;
  double b = (y0 - y1) / (1.0 / n0 - 1.0 / n1);
  double a = y0 - b / n0;
  if (b < 0) {
    b = 0;
    a = y1;
  } else if (a < 0) {
    a = 0;
    b = y1 * n1;
  }
  return a + b / n;
}

// A part of the typical rank's work per epoch, through both scales: a + b/n (a, b >= 0; held at the
// larger scale's value when it grew), except data loading that grew: a + b n (contention for a shared
// store: a loader whose cost rises with its readers keeps rising). Other parts are not expected to
// grow with the workers; where they did between two scales it was noise or the workers sharing cores
// (idle 37 -> 101 ms over 12 steps in a test run), and a line through it overshot the projection.
double fit_part(double n0, double y0, double n1, double y1, double n, bool may_grow) {
  if (!may_grow || n0 == n1 || !(y1 > y0)) return fit_amdahl_part(n0, y0, n1, y1, n);
  return y1 + (y1 - y0) / (n1 - n0) * (n - n1);
}

double ring_factor(double n) {
  return n > 1 ? 2.0 * (n - 1.0) / n : 0.0;
}

}  // namespace

ModelProjection project_epoch(const WhatIfScale& base, const WhatIfScale& at, int64_t workers, bool weak) {
  ModelProjection out;
  out.workers = workers;
  if (!base.has_model() || !at.has_model() || workers <= at.workers) return out;
  const auto n0 = static_cast<double>(base.workers), n1 = static_cast<double>(at.workers);
  const auto n = static_cast<double>(workers);
  auto no_transfer = [](const RunTimeline&) {
    WhatIf w;
    w.transfer_scale = 0;
    return w;
  };
  const double e1 = std::max(0.0, saved_seconds(at, no_transfer));
  const Pooled p0 = pooled_replay(base, [](const RunTimeline&) { return WhatIf{}; });
  const Pooled p1 = pooled_replay(at, [](const RunTimeline&) { return WhatIf{}; });
  if (!p0.ok || !p1.ok || p0.rank_steps <= 0 || p1.rank_steps <= 0 || std::isnan(e1)) return out;
  const double in0 = base.seconds * base.in_steps, in1 = at.seconds * at.in_steps;
  // Steps per epoch: the time in the steps over the mean profiled step.
  const double s0 = in0 / (p0.measured_ns / static_cast<double>(p0.rank_steps) / 1e9);
  const double s1 = in1 / (p1.measured_ns / static_cast<double>(p1.rank_steps) / 1e9);
  const double beta = std::log(s1 / s0) / std::log(n1 / n0);
  const double steps = s1 * std::pow(n / n1, std::isfinite(beta) ? beta : 0.0);
  const double outside = fit_amdahl_part(n0, base.seconds - in0, n1, at.seconds - in1, n);
  // The typical rank's local work per epoch, part by part, each fitted through both scales on its own
  // (fit_part): a part that shrinks and one that grows summed before the fit would hide each other.
  const auto shares0 = part_shares(base), shares1 = part_shares(at);
  double local = 0, local1 = 0;
  for (size_t p = 0; p < shares1.size(); ++p) {
    if (p == 1 || p == 2) continue;  // exposed communication and waiting: below
    local += fit_part(n0, in0 * shares0[p], n1, in1 * shares1[p], n, p == kDataLoading);
    local1 += in1 * shares1[p];
  }
  // What the steps held at n1 besides local work and transfer: the wait for late ranks (a straggler's
  // excess per step does not shrink with the batch), kept per step.
  const double waiting = std::max(0.0, in1 - local1 - e1) / s1 * steps;
  const double transfer = at.workers > 1 ? e1 / s1 * ring_factor(n) / ring_factor(n1) * steps : 0.0;
  out.predicted_epoch_s = outside + local + waiting + transfer;
  out.ok = std::isfinite(out.predicted_epoch_s) && out.predicted_epoch_s > 0;
  out.assumptions = fmt::format(
      "projection from {} and {} workers: the time outside the steps fitted as a + b/n; each part of a "
      "typical rank's work per epoch fitted on its own as a + b/n (held where it grew), data loading that "
      "grew as a + b n; the wait for late ranks per step as at {} workers; the exposed transfer per step scaled by the "
      "ring all-reduce's 2(n-1)/n at the bandwidth measured at {} workers; {:.1f} steps per epoch{}",
      base.workers, at.workers, at.workers, at.workers, steps, weak ? " (weak scaling)" : "");
  return out;
}

}  // namespace scaleprof::analysis

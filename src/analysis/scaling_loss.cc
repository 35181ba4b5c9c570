#include "analysis/scaling_loss.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace scaleprof::analysis {

const char* loss_basis_name(LossBasis basis) {
  switch (basis) {
    case LossBasis::kDecomposition:
      return "decomposition";
    case LossBasis::kTraces:
      return "traces";
    case LossBasis::kTracesCollectives:
      return "traces+collectives";
    case LossBasis::kCollectives:
      return "collectives";
    case LossBasis::kSteps:
      return "steps";
    case LossBasis::kComputationFraction:
      return "computation_fraction";
    case LossBasis::kNone:
      break;
  }
  return "none";
}

bool is_attributed(LossBasis basis) {
  return basis == LossBasis::kDecomposition || basis == LossBasis::kTraces || basis == LossBasis::kTracesCollectives ||
         basis == LossBasis::kCollectives || basis == LossBasis::kSteps;
}

namespace {

// The same cause names in the same order at both scales.
bool same_causes(const std::vector<NamedShare>& a, const std::vector<NamedShare>& b) {
  if (a.empty() || a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name) return false;
  }
  return true;
}

// The operators whose time per epoch grew most beyond shrinking with the workers (at most 3, growth
// > 0): an operator missing at one scale has no time there. Shares are of the time in the steps.
std::vector<OperatorGrowth> operator_growth(const ScaleShares& base, const ScaleShares& at, double in0, double in1) {
  std::vector<OperatorGrowth> out;
  const double ratio =
      base.weak_scaling && at.weak_scaling ? 1.0 : static_cast<double>(base.workers) / static_cast<double>(at.workers);
  auto seconds = [](const std::vector<OperatorShare>& ops, const std::string& name, double epoch) {
    for (const OperatorShare& o : ops) {
      if (o.name == name) return o.share * epoch;
    }
    return 0.0;
  };
  std::vector<std::string> names;
  for (const auto* ops : {&base.operators, &at.operators}) {
    for (const OperatorShare& o : *ops) {
      if (std::find(names.begin(), names.end(), o.name) == names.end()) names.push_back(o.name);
    }
  }
  for (const std::string& name : names) {
    OperatorGrowth g;
    g.name = name;
    g.seconds0 = seconds(base.operators, name, base.seconds * in0);
    g.seconds1 = seconds(at.operators, name, at.seconds * in1);
    g.excess_s = g.seconds1 - g.seconds0 * ratio;
    if (g.excess_s > 0 && std::isfinite(g.excess_s)) out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.excess_s > b.excess_s; });
  if (out.size() > 3) out.resize(3);
  return out;
}

// Communication's named parts at both scales (a part one scale lacks is 0 there), as shares of the epoch
// time like the causes, with the points they account for inside communication's.
std::vector<CauseDetail> communication_details(const ScaleShares& base, const ScaleShares& at, const ScaleLoss& loss,
                                               bool outside) {
  std::vector<std::string> names;
  for (const auto* list : {&base.communication_details, &at.communication_details}) {
    for (const NamedShare& d : *list) {
      if (std::find(names.begin(), names.end(), d.name) == names.end()) names.push_back(d.name);
    }
  }
  auto share_of = [](const ScaleShares& s, const std::string& name) {
    for (const NamedShare& d : s.communication_details) {
      if (d.name == name) return d.share;
    }
    return 0.0;
  };
  const double in0 = outside ? 1.0 - base.outside_steps : 1.0;
  const double in1 = outside ? 1.0 - at.outside_steps : 1.0;
  std::vector<CauseDetail> out;
  for (const std::string& name : names) {
    CauseDetail d;
    d.name = name;
    d.share0 = share_of(base, name) * in0;
    d.share1 = share_of(at, name) * in1;
    d.seconds0 = d.share0 * loss.t0;
    d.seconds1 = d.share1 * loss.t1;
    const double f0[] = {d.share0};
    const double f1[] = {d.share1};
    d.points = attribute_efficiency_loss(loss.n0, loss.t0, f0, loss.n1, loss.t1, f1, loss.weak).parts[0];
    out.push_back(std::move(d));
  }
  return out;
}

// The pipeline bubble beside its ideal: each scale's p and m, the bubble and the ideal (p-1)/(m+p-1) as
// fractions of the profiled steps, and the points the ideal bubble would cost (the same attribution, the
// ideal's shares of the epoch in place of the measured ones; NaN where m is unknown at a scale with a pipeline).
void add_pipeline_figures(const ScaleShares& base, const ScaleShares& at, const ScaleLoss& loss, bool outside,
                          LossCause* c) {
  auto step_share = [](const ScaleShares& s) {
    for (const NamedShare& n : s.trace_shares) {
      if (n.name == kPipelineBubbleCause) return n.share;
    }
    return tables::kNaN;
  };
  c->stages0 = base.pipeline_stages;
  c->stages1 = at.pipeline_stages;
  c->micro_batches0 = base.pipeline_micro_batches;
  c->micro_batches1 = at.pipeline_micro_batches;
  c->step_fraction0 = step_share(base);
  c->step_fraction1 = step_share(at);
  c->ideal_fraction0 = base.pipeline_ideal;
  c->ideal_fraction1 = at.pipeline_ideal;
  const double in0 = outside ? 1.0 - base.outside_steps : 1.0;
  const double in1 = outside ? 1.0 - at.outside_steps : 1.0;
  const double f0[] = {c->ideal_fraction0 * in0};
  const double f1[] = {c->ideal_fraction1 * in1};
  c->ideal_points = attribute_efficiency_loss(loss.n0, loss.t0, f0, loss.n1, loss.t1, f1, loss.weak).parts[0];
}

}  // namespace

ScaleLoss attribute_scale_loss(const ScaleShares& base, const ScaleShares& at) {
  ScaleLoss out;
  out.n0 = base.workers;
  out.n1 = at.workers;
  out.t0 = base.seconds;
  out.t1 = at.seconds;
  if (!std::isnan(base.computation_fraction) && !std::isnan(at.computation_fraction)) {
    out.non_computation0 = 1.0 - base.computation_fraction;
    out.non_computation1 = 1.0 - at.computation_fraction;
  }
  std::vector<std::string> names;
  std::vector<double> f0;
  std::vector<double> f1;
  out.steps0 = !std::isnan(base.outside_steps);
  out.steps1 = !std::isnan(at.outside_steps);
  const bool outside = out.steps0 && out.steps1;
  if (outside) {
    names.emplace_back(kOutsideStepsCause);
    f0.push_back(base.outside_steps);
    f1.push_back(at.outside_steps);
  }
  if (base.shares_basis == at.shares_basis && is_attributed(base.shares_basis) &&
      same_causes(base.trace_shares, at.trace_shares)) {
    out.basis = base.shares_basis;
    // Shares of the time in the steps, as parts of the epoch time (all of it without step records).
    const double in0 = outside ? 1.0 - base.outside_steps : 1.0;
    const double in1 = outside ? 1.0 - at.outside_steps : 1.0;
    for (size_t i = 0; i < base.trace_shares.size(); ++i) {
      names.push_back(base.trace_shares[i].name);
      f0.push_back(base.trace_shares[i].share * in0);
      f1.push_back(at.trace_shares[i].share * in1);
    }
  } else if (outside) {
    out.basis = LossBasis::kSteps;
  } else if (!std::isnan(out.non_computation0)) {
    out.basis = LossBasis::kComputationFraction;  // nothing attributed: see the header
  }
  out.weak = base.weak_scaling && at.weak_scaling;
  const LossAttribution a = attribute_efficiency_loss(out.n0, out.t0, f0, out.n1, out.t1, f1, out.weak);
  out.efficiency = a.efficiency;
  out.lost = a.lost;
  out.rest = a.rest;
  // Exclusive shares that add up to the epoch leave only floating-point noise (1e-17): zero, so that
  // no output reads "-0.0" or "gives back 0.0 points".
  if (std::abs(out.rest) < 1e-12) out.rest = 0.0;
  for (size_t i = 0; i < f0.size(); ++i) {
    LossCause c;
    c.name = names[i];
    c.share0 = f0[i];
    c.share1 = f1[i];
    c.seconds0 = f0[i] * out.t0;
    c.seconds1 = f1[i] * out.t1;
    c.points = a.parts[i];
    if (out.basis == LossBasis::kDecomposition && c.name == kWaitingCause) c.rank = at.straggler_rank;
    if (out.basis == LossBasis::kDecomposition && c.name == kComputationCause) {
      c.operators =
          operator_growth(base, at, outside ? 1.0 - base.outside_steps : 1.0, outside ? 1.0 - at.outside_steps : 1.0);
      if (base.samples_per_worker > 0 && at.samples_per_worker > 0) {
        c.seconds_per_sample0 = c.seconds0 / base.samples_per_worker;
        c.seconds_per_sample1 = c.seconds1 / at.samples_per_worker;
      }
    }
    if (out.basis == LossBasis::kDecomposition && c.name == kCommunicationCause) {
      c.details = communication_details(base, at, out, outside);
    }
    if (out.basis == LossBasis::kDecomposition && c.name == kPipelineBubbleCause) {
      add_pipeline_figures(base, at, out, outside, &c);
    }
    out.causes.push_back(std::move(c));
  }
  return out;
}

bool outside_steps_beside_step_shares(const ScaleLoss& loss) {
  return !loss.causes.empty() && loss.causes.front().name == kOutsideStepsCause && loss.basis != LossBasis::kSteps;
}

MainLossCause main_loss_cause(const ScaleLoss& loss) {
  MainLossCause out;
  if (!(loss.lost > 0) || !is_attributed(loss.basis)) return out;
  if (!loss.gains.empty()) {
    // What fixing it would gain: the cause a user acts on (whatif_gains.h).
    for (const CauseGain& g : loss.gains) {
      if (g.points > 0 && (out.name.empty() || g.points > out.points)) out = {g.name, g.points};
    }
    if (loss.gains_rest > 0 && (out.name.empty() || loss.gains_rest > out.points))
      out = {kUnattributed, loss.gains_rest};
    return out;
  }
  for (const LossCause& c : loss.causes) {
    if (c.points > 0 && (out.name.empty() || c.points > out.points)) out = {c.name, c.points};
  }
  if (loss.rest > 0 && (out.name.empty() || loss.rest > out.points)) out = {kUnattributed, loss.rest};
  return out;
}

}  // namespace scaleprof::analysis

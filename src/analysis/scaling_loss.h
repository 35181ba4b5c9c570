// Where the parallel efficiency between two scales of one strategy went: a list of causes, each with
// its share of the epoch time at both scales and the efficiency points it accounts for, attributed
// only where the data supports it.
//
// Only shares OF THE EPOCH TIME can be attributed (analysis/scaling.h, attribute_efficiency_loss):
// with device traces at both scales, the shares of GPU time in the profiled steps (communication,
// idle, ...), applied to the epoch time. itwinai's computation fraction is a share of summed operator
// self time, which itwinai itself says is not a share of wall time (it ignores parallelism and
// overlap): it is kept as an indication, and the loss stays unattributed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/scaling.h"

namespace scaleprof::analysis {

struct NamedShare {
  std::string name;     // "communication", "idle", ...
  double share = kNaN;  // fraction of the epoch time
};

// One scale of a strategy, as the loss attribution needs it.
struct ScaleShares {
  int64_t workers = 0;
  double seconds = kNaN;                 // mean epoch time
  std::vector<NamedShare> trace_shares;  // empty without device traces
  double computation_fraction = kNaN;    // itwinai's, share of operator self time
};

struct LossCause {
  std::string name;
  double share0 = kNaN, share1 = kNaN;  // of the epoch time at the base and at this scale
  double points = kNaN;                 // efficiency lost to it (fraction; negative: gives back)
};

enum class LossBasis {
  kTraces,               // shares of GPU time in the profiled steps, applied to the epoch time
  kComputationFraction,  // only itwinai's fraction: an indication, nothing attributed
  kNone,                 // neither at both scales
};
const char* loss_basis_name(LossBasis basis);  // "traces", "computation_fraction", "none"

struct ScaleLoss {
  int64_t n0 = 0, n1 = 0;
  double t0 = kNaN, t1 = kNaN;
  LossBasis basis = LossBasis::kNone;
  double efficiency = kNaN;       // at n1 against n0
  double lost = kNaN;             // 1 - efficiency
  std::vector<LossCause> causes;  // attributed causes (traces basis only)
  double rest = kNaN;             // lost - sum of the causes: everything else (all of it when unattributed)
  // The non-computation share of operator self time at n0 and n1 (itwinai's 1 - fraction), when
  // both are known: shown as an indication whatever the basis.
  double non_computation0 = kNaN, non_computation1 = kNaN;
};

// Trace shares are used when both scales have them with the same names, in the base's order.
ScaleLoss attribute_scale_loss(const ScaleShares& base, const ScaleShares& at);

// The cause that lost the most points (> 0) and its points; "everything else" when the rest is
// larger than every named cause; "" when nothing was lost or nothing is attributed.
struct MainLossCause {
  std::string name;
  double points = kNaN;
};
MainLossCause main_loss_cause(const ScaleLoss& loss);

}  // namespace scaleprof::analysis

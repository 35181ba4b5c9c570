// Where the parallel efficiency between two scales of one strategy went: a list of causes, each with
// its share of the epoch time at both scales and the efficiency points it accounts for, attributed
// only where the data supports it.
//
// Only shares OF THE EPOCH TIME can be attributed (analysis/scaling.h, attribute_efficiency_loss),
// measured in the profiled steps and applied to the epoch time, on one of four bases:
// * decomposition: profiler traces with ProfilerSteps at both scales: each scale's profiled steps of
//   one rank split into exclusive parts that add up to them (analysis/step_decomposition.h; the rank
//   that waited longest at the matched collectives, engine/run_trace_metrics.h): computation,
//   communication (exposed), waiting for stragglers, data loading, optimizer, host overhead, idle.
//   Every cause is a slice of wall time, so no two causes count the same instant and their sum can
//   never exceed what was lost (beyond rounding); GPU and CPU traces alike. Preferred over the three
//   below, which stay for traces the decomposition cannot split (no ProfilerStep at one scale);
// * traces: device traces at both scales: shares of GPU time (communication not hidden under
//   computation, idle);
// * traces+collectives: the same, with the collectives matched across ranks at both scales: the
//   exposed communication is split into the transfer itself (communication) and waiting for the last
//   rank to arrive (waiting for stragglers), in the proportion of the matched calls' latency and waits;
// * collectives: CPU runs (gloo), collectives matched across ranks at both scales: per rank, each
//   call's latency (communication) and the rank's wait for the last to arrive (waiting for
//   stragglers), as shares of the profiled step time. Collective time is counted whole, including
//   any part that overlaps computation on other threads: an upper bound of what it costs.
// Where both scales have step records, the time outside the training steps (epoch time minus the
// steps) is a cause of its own on every basis, and the shares measured in the steps are scaled to
// the part of the epoch spent in them, so that the causes are exclusive parts of the epoch time;
// with step records and no trace basis, the basis is "steps": that cause alone is attributed.
// itwinai's computation fraction is a share of summed operator self time, which itwinai itself says
// is not a share of wall time (it ignores parallelism and overlap): it is kept as an indication, and
// the loss stays unattributed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/scaling.h"

namespace scaleprof::analysis {

enum class LossBasis {
  kDecomposition,        // the profiled steps split into exclusive parts (step_decomposition.h)
  kTraces,               // shares of GPU time in the profiled steps, applied to the epoch time
  kTracesCollectives,    // the same, exposed communication split by the matched collectives
  kCollectives,          // shares of profiled step time in matched collectives (CPU runs)
  kSteps,                // step records only: the time outside the steps
  kComputationFraction,  // only itwinai's fraction: an indication, nothing attributed
  kNone,                 // neither at both scales
};
// "decomposition", "traces", "traces+collectives", "collectives", "steps", "computation_fraction", "none"
const char* loss_basis_name(LossBasis basis);
// The cause name of the time outside the training steps.
inline constexpr const char* kOutsideStepsCause = "outside the steps";
// The cause names of the decomposition basis, in its order.
inline constexpr const char* kComputationCause = "computation";
inline constexpr const char* kWaitingCause = "waiting for stragglers";
inline constexpr const char* kCommunicationCause = "communication";
// A detail of communication (decomposition basis): the time the all-to-alls' imbalance cost inside the
// exposed communication (analysis/all_to_all_cost.h). Part of communication's points, not a cause beside it.
inline constexpr const char* kAlltoallImbalanceDetail = "all-to-all imbalance";
// A cause of the decomposition basis where a scale's traces show a pipeline schedule
// (analysis/pipeline_bubbles.h): the decomposed rank's wait for its neighbouring stages at the P2P sends
// and receives, taken out of its exposed communication (so the causes still add up to the loss). The
// cause is listed at both scales when either has a pipeline (0 at the one without).
inline constexpr const char* kPipelineBubbleCause = "pipeline bubble";
// What the rest of the loss beyond the named causes is called in every output.
inline constexpr const char* kUnattributed = "unattributed";
// The bases whose causes are attributed points (decomposition, traces, traces+collectives, collectives, steps).
bool is_attributed(LossBasis basis);

struct NamedShare {
  std::string name;             // "communication", "idle", ...
  double share = tables::kNaN;  // fraction of the epoch time
};

// One operator's self time as a share of the epoch time (computation's detail).
struct OperatorShare {
  std::string name;
  double share = tables::kNaN;
};

// One scale of a strategy, as the loss attribution needs it.
struct ScaleShares {
  int64_t workers = 0;
  double seconds = tables::kNaN;                // mean epoch time
  std::vector<NamedShare> trace_shares;         // empty without traces to attribute from
  double computation_fraction = tables::kNaN;   // itwinai's, share of operator self time
  LossBasis shares_basis = LossBasis::kTraces;  // what trace_shares are shares of (an attributed basis)
  // Share of the epoch time outside the training steps (ScaleGroup::outside_steps_share); NaN unknown.
  double outside_steps = tables::kNaN;
  // Decomposition basis: the rank the others waited for most at the matched collectives (-1 none), and
  // the operators' self time as shares of the time in the profiled steps (computation's detail).
  int64_t straggler_rank = -1;
  std::vector<OperatorShare> operators{};
  // Decomposition basis: parts of communication's share named apart (kAlltoallImbalanceDetail), as
  // shares of the time in the profiled steps; empty when none.
  std::vector<NamedShare> communication_details{};
  // Decomposition basis with a pipeline (the kPipelineBubbleCause share in trace_shares): its p stages and m
  // micro-batches per step (0 / -1: none, unknown) and the ideal bubble (p-1)/(m+p-1) as a share of the
  // time in the profiled steps (NaN where m is unknown, 0 without a pipeline).
  int64_t pipeline_stages = 0;
  int64_t pipeline_micro_batches = -1;
  double pipeline_ideal = tables::kNaN;
  // Samples each worker processed per epoch (NaN unknown): computation per sample (LossCause).
  double samples_per_worker = tables::kNaN;
  // The series is a weak scaling test (analysis/throughput.h): the ideal is the same epoch time at every
  // scale, not one shrinking with the workers.
  bool weak_scaling = false;
};

// An operator whose time per epoch grew beyond what shrinking with the workers would give.
struct OperatorGrowth {
  std::string name;
  double seconds0 = tables::kNaN, seconds1 = tables::kNaN;  // per epoch, at the base and at this scale
  double excess_s = tables::kNaN;                           // seconds1 - seconds0 * n0 / n1
};

// A named part of a cause's time (communication's all-to-all imbalance): its shares, seconds and points
// are inside the cause's, never added beside them.
struct CauseDetail {
  std::string name;
  double share0 = tables::kNaN, share1 = tables::kNaN;
  double seconds0 = tables::kNaN, seconds1 = tables::kNaN;
  double points = tables::kNaN;
};

struct LossCause {
  std::string name;
  double share0 = tables::kNaN, share1 = tables::kNaN;      // of the epoch time at the base and at this scale
  double seconds0 = tables::kNaN, seconds1 = tables::kNaN;  // per epoch: the shares times the epoch times
  double points = tables::kNaN;                             // efficiency lost to it (fraction; negative: gives back)
  // Waiting for stragglers (decomposition basis): the rank the others waited for most at this scale (-1
  // unknown). Computation: the operators whose time grew most (at most 3, excess > 0, largest first).
  int64_t rank = -1;
  std::vector<OperatorGrowth> operators;
  // Computation, where both scales know their samples per worker: seconds per sample on one worker.
  // It stays the same when computation shrinks with the workers; a smaller per-worker batch running
  // less efficiently makes it grow.
  double seconds_per_sample0 = tables::kNaN, seconds_per_sample1 = tables::kNaN;
  // Communication (decomposition basis): the parts of it named apart (CauseDetail), at either scale.
  std::vector<CauseDetail> details;
  // Pipeline bubble: each scale's pipeline (p stages, m micro-batches; 0 / -1 none or unknown), the bubble
  // and the schedule's ideal (p-1)/(m+p-1) as fractions of the profiled steps (not of the epoch: NaN
  // unknown), and the points the bubble would cost were it the ideal at both scales.
  int64_t stages0 = 0, stages1 = 0, micro_batches0 = -1, micro_batches1 = -1;
  double step_fraction0 = tables::kNaN, step_fraction1 = tables::kNaN;
  double ideal_fraction0 = tables::kNaN, ideal_fraction1 = tables::kNaN;
  double ideal_points = tables::kNaN;
};

// What fixing one cause would gain, from the what-if model (whatif_gains.h).
struct CauseGain {
  std::string name;                         // a cause name of the decomposition basis
  double seconds = tables::kNaN;            // per epoch at n1, beyond what the fix saves at n0 scaled
  double points = tables::kNaN;             // 100 x seconds / t1, as a fraction (like LossCause::points)
  double predicted_epoch_s = tables::kNaN;  // t1 - seconds
  int64_t rank = -1;                        // waiting for stragglers: the slow rank
  double factor = tables::kNaN;             // the scale the fix applied to the cause's time (1: none)
};

struct ScaleLoss {
  int64_t n0 = 0, n1 = 0;
  double t0 = tables::kNaN, t1 = tables::kNaN;
  LossBasis basis = LossBasis::kNone;
  double efficiency = tables::kNaN;  // at n1 against n0
  double lost = tables::kNaN;        // 1 - efficiency
  std::vector<LossCause> causes;     // attributed causes (attributed bases only)
  double rest = tables::kNaN;        // lost - sum of the causes: unattributed (all of it when nothing is attributed)
  // The non-computation share of operator self time at n0 and n1 (itwinai's 1 - fraction), when
  // both are known: shown as an indication whatever the basis.
  double non_computation0 = tables::kNaN, non_computation1 = tables::kNaN;
  // Whether each scale separates the time outside the steps (step records: ScaleShares::outside_steps).
  bool steps0 = false, steps1 = false;
  // Weak scaling (both scales' ScaleShares::weak_scaling): efficiency is t0 / t1, and each cause's
  // points are its growth in seconds per epoch over the epoch time, nothing expected to shrink.
  bool weak = false;
  // What removing each cause would gain (whatif_gains.h), largest first; empty without the model at
  // both scales. interaction: the gain of fixing every cause at once minus the sum of the gains (< 0
  // where causes overlap); gains_rest: what is lost beyond the fix of all (fractions, like points).
  std::vector<CauseGain> gains;
  double interaction = tables::kNaN;
  double gains_rest = tables::kNaN;
  double all_fixed_epoch_s = tables::kNaN;  // t1 with every cause fixed
};

// Trace shares are used when both scales have them on the same basis with the same names, in the
// base's order.
ScaleLoss attribute_scale_loss(const ScaleShares& base, const ScaleShares& at);

// The cause that lost the most points (> 0) and its points: by what fixing it would gain where the
// what-if model gave gains, else by the exclusive split; "unattributed" (kUnattributed) when the rest
// is larger than every named cause; "" when nothing was lost or nothing is attributed.
struct MainLossCause {
  std::string name;
  double points = tables::kNaN;
};
MainLossCause main_loss_cause(const ScaleLoss& loss);

// Whether the time outside the steps is attributed beside shares measured in the steps (any basis but
// `steps`): the sentences then say where each comes from.
bool outside_steps_beside_step_shares(const ScaleLoss& loss);

}  // namespace scaleprof::analysis

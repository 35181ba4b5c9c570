// Pipeline-parallel bubbles (`scaleprof trace pipeline`, issue 33 item 3): the stages of a pipeline
// found from the point-to-point sends and receives of the ranks' traces, the micro-batches per step,
// and per stage and ProfilerStep the time the stage computed and the time it waited for a neighbour.
//
// Per rank (rank_pipeline, while the trace is in memory):
// * the P2P calls are the `c10d::send` / `c10d::recv_` / `c10d::recv_any_source_` ops (every backend
//   records them on the calling thread). A call counts in the ProfilerStep holding its start.
// * the peer of a call, as a global rank: where the call carries its process group (a
//   `record_param_comms` op inside it on its thread, or a communication kernel launched from inside
//   it, with `Collective name` send / recv, `Dst Rank` / `Src Rank` and `Process Group Ranks`: NCCL,
//   PyTorch >= 2.2), the group-local Dst/Src Rank mapped through the group's ranks, so a pipeline over
//   a subgroup (ranks 0,2 of a 2x2 PP x DP mesh) is found; a Dst/Src Rank outside the group's ranks
//   leaves the call without a peer (a note). Otherwise (gloo, which records no such metadata) the
//   third `Concrete Inputs` value of the c10d op (dstRank / srcRank, PyTorch >= 2.4 with
//   record_shapes=True), the rank within the call's group, taken as the global rank: true for the
//   default group; when distributedInfo.pg_config lists groups smaller than the world, a note says
//   these peers may be group ranks.
// * the bubble of a step, on one of two bases (PipelineBasis):
//   - device, when the trace has device work (stream work, device_events.h): the time of the step's
//     window in which no computation runs on the rank's device (kernel_classify.h: communication,
//     memory and other device work do not count), i.e. the device waiting for its neighbours (NCCL's
//     SendRecv kernels spinning, the compute stream waiting on them) plus the device idle. The window
//     is the step's host window with the device work clipped to it, as the step decomposition takes it
//     (step_decomposition.h; its compute also holds copies, which are bubble here). Only on ranks with
//     P2P calls (0 elsewhere). NCCL's host calls return at once: the host's wait would be ~0 there.
//   - host, on CPU-only traces (gloo): on the step's thread, the union inside the step of the P2P calls
//     and of the transfers' own spans (gloo's `gloo:send`/`gloo:recv`, NCCL's `nccl:send`/`nccl:recv`,
//     which last until the transfer is done: a receive until its data is there, a send until the peer
//     took it), less the time other operators of that thread ran inside them (an irecv or isend
//     overlapped with compute counts as compute; compute that records no operator inside such a span
//     counts as waiting).
//   The rest of the step is the stage's busy time (its forward and backward, the optimizer, Python
//   between operators).
//
// Across ranks (analyse_pipeline, pure over the per-rank results):
// * ranks joined by P2P calls whose both ends have a trace form a pipeline; a pipeline whose ranks
//   make a chain (two ends, each rank with at most two neighbours) is ordered from the end whose
//   steps start with a send (the first stage has its input and sends activations; the others first
//   receive), the lower rank when no end does; stage k is the k-th rank of that chain;
// * m, the micro-batches per step: the median over the first stage's steps of its sends to stage 1;
// * per stage and step: step time, bubble (the wait above), busy = step - bubble, the bubble's share
//   of the step and the ideal (p-1)/(m+p-1) of GPipe and 1F1B with equal stages;
// * the slowest stage: the largest median busy time; the stages are unbalanced when it exceeds the
//   smallest by more than kUnbalancedRatio (the slow stage then makes the others wait).
// Malformed input (a send whose peer has no trace, or whose peer's receives from it are fewer, a
// branching or circular set of peers, one rank alone) gives notes, never a crash.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "trace/event_table.h"

namespace scaleprof::analysis {

// One ProfilerStep of one rank.
struct PipelineStepWait {
  int64_t step = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t wait_ns = 0;  // host basis: P2P wait on the step's thread, less other operators (above)
  int64_t sends = 0;    // P2P calls starting in the step
  int64_t recvs = 0;
  int64_t first_p2p = 0;       // the step's first P2P call: +1 a send, -1 a receive, 0 none
  int64_t device_wait_ns = 0;  // device basis: the step's window less its device computation (above)

  int64_t duration_ns() const { return end_ns - start_ns; }
};

// P2P calls of one rank to or from one peer in one step.
struct PipelinePeerCalls {
  int64_t step = -1;
  int64_t peer = -1;
  int64_t sends = 0;
  int64_t recvs = 0;
};

struct RankPipeline {
  int64_t rank = 0;
  std::string path;                      // the trace file, for notes
  std::vector<PipelineStepWait> steps;   // the analysed steps (phases.h: analysed_steps), by start
  std::vector<PipelinePeerCalls> peers;  // by step, then peer
  int64_t calls_without_peer = 0;        // P2P calls whose peer the trace does not say (no Concrete Inputs)
  int64_t calls_outside_steps = 0;
  int64_t calls_peer_outside_group = 0;  // Dst/Src Rank not a position in Process Group Ranks: no peer
  int64_t calls_peer_unmapped = 0;       // peers taken as global ranks without the group's ranks (gloo)
  bool subgroups = false;                // distributedInfo.pg_config lists a group smaller than the world
  bool device = false;                   // the trace has device work: the bubble is on the device basis
};

RankPipeline rank_pipeline(const trace::RankTrace& trace, bool include_last_step = false);

inline constexpr double kUnbalancedRatio = 1.10;

// What a bubble measures (above): the device's time without computation, or the host's wait in P2P.
enum class PipelineBasis : uint8_t { kHost, kDevice };
// "host", "device"
const char* pipeline_basis_name(PipelineBasis basis);

// One stage in one step.
struct PipelineStageStep {
  int64_t pipeline = 0;
  int64_t stage = 0;
  int64_t rank = 0;
  int64_t step = -1;
  int64_t step_ns = 0;
  int64_t busy_ns = 0;
  int64_t bubble_ns = 0;
  double bubble_fraction = 0;  // bubble / step; NaN for an empty step
  int64_t micro_batches = -1;  // sends of the first stage to the second in this step (-1: not in its trace)
  PipelineBasis basis = PipelineBasis::kHost;
  int64_t host_wait_ns = 0;  // the host's wait in P2P (the bubble on the host basis), for comparison
};

// One stage over its steps: medians.
struct PipelineStage {
  int64_t pipeline = 0;
  int64_t stage = 0;
  int64_t rank = 0;
  int64_t prev_rank = -1;  // the stage it receives activations from, -1 for the first
  int64_t next_rank = -1;
  int64_t steps = 0;
  double step_ns = 0;  // medians over the steps
  double busy_ns = 0;
  double bubble_ns = 0;
  double bubble_fraction = 0;  // median bubble / median step
  double ideal_fraction = 0;   // (p-1)/(m+p-1), NaN when m is unknown
  bool slowest = false;        // the largest busy time of its pipeline, shown when unbalanced
  PipelineBasis basis = PipelineBasis::kHost;
};

struct Pipeline {
  int64_t index = 0;
  std::vector<int64_t> ranks;  // by stage
  int64_t micro_batches = -1;  // m, -1 unknown
  double ideal_fraction = 0;   // NaN when m is unknown
  int64_t slowest_rank = -1;   // the stage whose compute makes the others wait; -1 when balanced
  double busy_ratio = 0;       // largest / smallest median busy time of its stages
};

struct PipelineAnalysis {
  std::vector<Pipeline> pipelines;
  std::vector<PipelineStage> stages;    // by pipeline, then stage
  std::vector<PipelineStageStep> rows;  // by pipeline, stage, step
  std::vector<std::string> notes;       // malformed or partial input, one line each
};

// The pipelines of a set of ranks (any order; ranks without P2P calls are left out silently).
PipelineAnalysis analyse_pipeline(std::span<const RankPipeline> ranks);

}  // namespace scaleprof::analysis

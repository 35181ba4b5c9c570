// The profiled steps of every rank of one run, reduced to what the what-if model re-times
// (analysis/whatif.h): per rank and step, the instants where its progress can depend on the other
// ranks (its arrival at each collective matched across ranks, and the step's end), and between two
// of them how long each exclusive part of the step lasted (analysis/step_decomposition.h's parts);
// per matched collective, each rank's arrival and completion. Times are on the clock the collectives
// were matched on (collective_match.h: each host's offset removed).
//
// Plain values only: the trace stage (engine/run_trace_metrics.h) fills it once each rank has been
// reduced and freed, the analysis reads it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace scaleprof::tables {

// The exclusive parts of a step, in analysis::StepPart's order: compute, exposed communication,
// collective wait (always 0 here: waiting is what the model derives), data loading, optimizer, host
// overhead, idle.
inline constexpr int kTimelineParts = 7;
using TimelineParts = std::array<int64_t, kTimelineParts>;

// One instant of a rank's step where it may wait for others: its arrival at a matched collective
// (`call` >= 0, an index into RunTimeline::calls) or the step's end (`call` -1).
struct TimelineJoin {
  int64_t call = -1;
  int64_t time_ns = 0;
  TimelineParts parts{};  // the exclusive parts since the previous join (or the step's start)
  // Per RunTimeline::targets, the time since the previous join when an event of that name ran on
  // the rank (the union over its host and device tracks); empty without targets.
  std::vector<int64_t> target_ns;
};

struct TimelineStep {
  int64_t rank = 0;
  int64_t step = 0;
  int64_t start_ns = 0;
  std::vector<TimelineJoin> joins;  // in time order; the step's end last

  int64_t end_ns() const { return joins.empty() ? start_ns : joins.back().time_ns; }
};

// One rank's part in a matched collective.
struct TimelineCallRank {
  int64_t rank = 0;
  int64_t arrival_ns = 0;     // the call's start on this rank
  int64_t completion_ns = 0;  // its end on this rank
};

struct TimelineCall {
  int64_t group = 0;   // calls of one group run one after another (their order in `calls`)
  int64_t bytes = -1;  // message size, -1 unknown
  std::string type;    // allreduce, allgather, ...
  double busbw_gbps = -1;
  // An all-to-all whose split sizes are in the trace: its mean over its largest bytes from one rank to
  // one peer, over the pairs of distinct ranks (analysis/all_to_all_cost.h), which is what its transfer
  // would be multiplied by with the same bytes spread evenly over the pairs (<= 1; 1: balanced). -1: not
  // an all-to-all, or its split sizes are not in the trace.
  double alltoall_balance = -1;
  std::vector<TimelineCallRank> ranks;  // by rank
};

struct RunTimeline {
  std::vector<TimelineCall> calls;  // by group, then position
  std::vector<TimelineStep> steps;  // by rank, then step
  // Names a what-if makes faster ("aten::mm 2x faster"): operators, annotations or kernels whose
  // name contains the text, timed per join (TimelineJoin::target_ns).
  std::vector<std::string> targets;
};

}  // namespace scaleprof::tables

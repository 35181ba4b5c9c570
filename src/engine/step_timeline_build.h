// The what-if model's input (tables/step_timeline.h) from what the trace stage keeps of each rank:
// its profiled steps split into exclusive parts with the parts so far at each of its collective
// calls' starts (analysis::decompose_steps' cuts), and the collectives matched across the run's ranks.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/collective_calls.h"
#include "analysis/collective_match.h"
#include "analysis/named_intervals.h"
#include "analysis/step_decomposition.h"
#include "core/result.h"
#include "tables/step_timeline.h"
#include "trace/trace_set.h"

namespace scaleprof::engine {

// The instants to cut a rank's steps at: the starts of its collective calls, sorted.
std::vector<int64_t> collective_cuts(const analysis::RankCollectives& collectives);

struct RankSteps {
  int64_t rank = 0;
  const analysis::RankDecomposition* steps = nullptr;  // decomposed with collective_cuts
  // Per named target of the timeline, when it ran on the rank (analysis::named_intervals); null or
  // empty without targets.
  const std::vector<analysis::Intervals>* targets = nullptr;
};

// A call is a join of the timeline when it was matched on every rank of its group and each rank's
// arrival falls in one of that rank's decomposed steps; the others are left to the ranks' own work.
// `targets`: the names a what-if makes faster, timed per join from each rank's RankSteps::targets.
tables::RunTimeline build_step_timeline(std::span<const RankSteps> ranks, const analysis::CollectiveAnalysis& matched,
                                        const std::vector<std::string>& targets = {});

// The timeline of a set of traces read on their own (`scaleprof trace what-if`, TraceAnalysis.what_if):
// every rank read, reduced to its decomposed steps and collective rows, and freed (rank_stream.h).
struct TimelineRead {
  trace::StreamedSet set;                 // the files, their final ranks, errors and warnings
  std::vector<std::string> repair_notes;  // "FILE: repaired N invalid JSON spots ..."
  tables::RunTimeline timeline;
  int64_t ranks_without_steps = 0;  // ranks read that have no ProfilerStep to replay
};
Result<TimelineRead> read_step_timeline(const std::vector<std::string>& paths, const trace::LoadOptions& load,
                                        const std::vector<std::string>& targets = {});

}  // namespace scaleprof::engine

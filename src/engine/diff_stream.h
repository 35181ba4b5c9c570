// Streams one side of `scaleprof trace diff` through the engine's per-rank driver
// (engine/rank_stream.h): each file is read, reduced to its DiffRankSummary (analysis/diff_summary.h)
// on the thread that read it, and freed, so a side of many ranks costs (threads x one trace) plus the
// summaries (names x steps per rank).
#pragma once

#include <string>
#include <vector>

#include "analysis/diff_summary.h"
#include "core/result.h"
#include "trace/trace_set.h"

namespace scaleprof::engine {

struct StreamedDiffSide {
  trace::StreamedSet set;                        // the files, their final ranks, errors and warnings
  std::vector<std::string> repair_notes;         // "FILE: repaired N invalid JSON spots ...", in rank order
  std::vector<analysis::DiffRankSummary> ranks;  // every rank read, in rank order
};

// One side. Fails only as trace::stream_traces does.
Result<StreamedDiffSide> stream_diff_side(const std::vector<std::string>& paths, const trace::LoadOptions& load,
                                          const analysis::DiffSummaryOptions& options);

struct StreamedDiffSides {
  Result<StreamedDiffSide> a;
  Result<StreamedDiffSide> b;
};

// Both sides at once, the threads of `load` (0: one per core) divided between them: each side's
// summaries are made on one thread per file after reading, so with the sides in turn one core would
// idle during each side's analysis. With a single thread the sides are read in turn.
StreamedDiffSides stream_diff_sides(const std::vector<std::string>& paths_a, const std::vector<std::string>& paths_b,
                                    const trace::LoadOptions& load, const analysis::DiffSummaryOptions& options);

}  // namespace scaleprof::engine

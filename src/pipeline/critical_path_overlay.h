// `scaleprof trace critical-path --overlay DIR` and TraceAnalysis.overlay_critical_path_analysis:
// each rank's trace with its critical path drawn on it (trace/trace_overlay.h), written to
// DIR/overlaid_critical_path_<file name> (".gz" dropped: the copy is plain JSON), as HTA names it.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "engine/rank_results_store.h"

namespace scaleprof::pipeline {

// Writes the overlay of every rank in `ranks` that has a path (`dir` is made when missing) and
// returns the files written, in rank order. Two inputs with one file name get the rank in theirs.
Result<std::vector<std::string>> write_critical_path_overlays(const engine::RankStore& ranks, const std::string& dir);

}  // namespace scaleprof::pipeline

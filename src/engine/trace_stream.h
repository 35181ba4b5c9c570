// Streams the ranks of a `scaleprof trace` report through the engine's per-rank driver
// (engine/rank_stream.h): each file is read, reduced to what the report needs of it (RankResults and
// its compact collective rows) on the thread that read it, and freed before that thread reads the next. Memory is
// (threads × one trace) plus those results, whatever the number of ranks (docs/scale.md); report_tables
// (report/trace_report.h) makes the tables from them (pipeline/trace_pipeline.h does both).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/collective_rows.h"
#include "core/result.h"
#include "engine/rank_results.h"
#include "engine/rank_results_store.h"
#include "trace/trace_set.h"

namespace scaleprof::engine {

struct StreamedRanks {
  trace::StreamedSet set;                 // the files, their final ranks, errors and warnings
  std::vector<std::string> repair_notes;  // "FILE: repaired N invalid JSON spots ...", in rank order
  bool any_read = false;                  // some file was read
  bool any_selected = false;              // some file read has a rank options.ranks selects
  // The selected ranks' results and compact collective rows, in rank order; empty unless any_selected.
  std::shared_ptr<RankResultsStore> results;
  analysis::CollectiveRows rows;
};

// The ranks of the files of `paths`, each reduced to what `analyses` asks of it. A file whose rank is
// known when it is read and not selected is not analysed; `load.wanted_rank` may also skip reading
// files whose rank their name gives. Fails only as trace::stream_traces does.
Result<StreamedRanks> stream_ranks(const RankAnalyses& analyses, const std::vector<std::string>& paths,
                                   const trace::LoadOptions& load, const ReduceOptions& options);

}  // namespace scaleprof::engine

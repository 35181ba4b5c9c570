#include "engine/trace_stream.h"

#include <memory>
#include <optional>
#include <utility>

#include "engine/rank_stream.h"

namespace scaleprof::engine {

// A client of the engine's one per-rank driver (engine/rank_stream.h): it supplies the reduction to
// RankResults and a store that spills them past a budget.
Result<StreamedRanks> stream_ranks(const RankAnalyses& analyses, const std::vector<std::string>& paths,
                                   const trace::LoadOptions& load, const ReduceOptions& options) {
  // Past 512 KiB (RankResultsStore::kMemoryBudgetBytes), the ranks' results go to a temporary file
  // as they come, so what stays in memory per rank is an index entry.
  std::shared_ptr<RankResultsStore> results = RankResultsStore::spilling();
  auto reduce = [&](const trace::RankTrace& t, unsigned threads_per_file) {
    engine::RankReduction<RankResults> out;
    // A rank known now is final; a file with none (-1) is numbered once all are read, so its results
    // are kept until then.
    const bool keep = t.rank < 0 || rank_selected(options.ranks, t.rank);
    // The rank's analyses run on the threads that read it (divided between the files read at once),
    // rather than on one while the others idle after reading.
    if (keep && (analyses.per_rank() || analyses.collective_rows)) {
      RankResults r =
          reduce_rank(t, analyses, options, threads_per_file, analyses.collective_rows ? &out.collectives : nullptr);
      if (analyses.per_rank()) out.parts = std::move(r);
    }
    return out;
  };
  auto selected = [&](int64_t rank) { return rank >= 0 && rank_selected(options.ranks, rank); };
  auto reduced = engine::reduce_ranks(paths, load, reduce, selected, results.get());
  if (!reduced) return reduced.error();
  engine::ReducedRanks& ranks = reduced.value();
  StreamedRanks out;
  out.set = std::move(ranks.set);
  out.repair_notes = std::move(ranks.repair_notes);
  for (int64_t rank : out.set.rank_of_file) {
    out.any_read |= rank >= 0;
    out.any_selected |= selected(rank);
  }
  if (!out.any_selected) return out;
  out.results = std::move(results);
  out.rows = std::move(ranks.rows);
  return out;
}

}  // namespace scaleprof::engine

#include "engine/trace_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "trace/streamed_order.h"

namespace scaleprof::report {

Result<StreamedRanks> stream_ranks(const ReportSections& sections, const std::vector<std::string>& paths,
                                   const trace::LoadOptions& load, const TraceReportOptions& options) {
  std::mutex mutex;
  // Past 512 KiB (RankResultsStore::kMemoryBudgetBytes), the ranks' results go to a temporary file
  // as they come, so what stays in memory per rank is an index entry.
  std::shared_ptr<RankResultsStore> results = RankResultsStore::spilling();
  trace::StreamedOrder results_order;                 // the file of each entry of `results`
  analysis::CollectiveRows rows;                      // compact rows, in the order reading finished
  trace::StreamedOrder rows_order;                    // the file of each rank of `rows`
  std::vector<std::pair<size_t, std::string>> notes;  // file index -> repair note
  // The files are listed once more here (stream_traces lists them too) to know how many share the threads.
  const Result<std::vector<std::string>> files = trace::expand_trace_paths(paths);
  const unsigned threads_per_file = trace::threads_per_file(load, files ? files.value().size() : 1);
  auto streamed = trace::stream_traces(paths, load, [&](size_t i, trace::RankTrace&& t) {
    // A rank known now is final; a file with none (-1) is numbered once all are read, so its results
    // are kept until then.
    const bool keep = t.rank < 0 || rank_selected(options, t.rank);
    std::optional<RankResults> reduced;
    std::optional<analysis::RankCollectives> collectives;
    // The rank's analyses run on the threads that read it (divided between the files read at once),
    // rather than on one while the others idle after reading.
    if (keep && (sections.per_rank() || sections.collective_rows())) {
      RankResults r =
          reduce_rank(t, sections, options, threads_per_file, sections.collective_rows() ? &collectives : nullptr);
      if (sections.per_rank()) reduced = std::move(r);
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (t.stats.repairs > 0) {
      notes.emplace_back(
          i, fmt::format("{}: repaired {} invalid JSON spots written by old Kineto versions", t.path, t.stats.repairs));
    }
    if (reduced) {
      results->add(std::move(*reduced));
      results_order.add(i);
    }
    if (collectives) {
      rows.add(*collectives);
      rows_order.add(i);
    }
  });
  if (!streamed) return streamed.error();
  StreamedRanks out;
  out.set = std::move(streamed).value();
  const std::vector<int64_t>& rank_of_file = out.set.rank_of_file;
  auto selected = [&](int64_t rank) { return rank >= 0 && rank_selected(options, rank); };
  for (int64_t rank : rank_of_file) {
    out.any_read |= rank >= 0;
    out.any_selected |= selected(rank);
  }

  std::sort(notes.begin(), notes.end(),
            [&](const auto& a, const auto& b) { return rank_of_file[a.first] < rank_of_file[b.first]; });
  for (auto& note : notes) out.repair_notes.push_back(std::move(note.second));
  if (!out.any_selected) return out;

  // Results and rows were added in the order reading finished, with the rank the trace said.
  results_order.apply(out.set, selected, results.get());
  rows_order.apply(out.set, selected, &rows);
  out.results = std::move(results);
  out.rows = std::move(rows);
  return out;
}

}  // namespace scaleprof::report

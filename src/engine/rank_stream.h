// The one per-rank driver of the trace engine. Both `scaleprof trace` (engine/trace_stream.h) and the
// trace stage of `scaleprof report` (engine/run_trace_metrics.h) go through it: it streams the files
// on threads (trace::stream_traces), has each rank reduced on the thread that read it, frees the rank
// before that thread reads the next, collects the compact collective rows, and once every file is read
// puts the caller's results and the rows in final rank order. Memory is (threads x one trace) plus
// what the reductions keep, whatever the number of ranks (docs/scale.md).
//
// A client supplies only what differs: its reduction of one rank, where the results go (a vector of
// structs with a `rank` member, or a store that renumbers itself such as RankResultsStore,
// which spills past a budget), and which final ranks it keeps.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/collective_calls.h"
#include "analysis/collective_rows.h"
#include "core/result.h"
#include "trace/streamed_order.h"
#include "trace/trace_set.h"

namespace scaleprof::engine {

// What a reduction keeps of one rank: its results (none: nothing of this rank is kept) and its compact
// collective rows (none: the client wants no rows, or not of this rank).
template <class Parts>
struct RankReduction {
  std::optional<Parts> parts;
  std::optional<analysis::RankCollectives> collectives;
};

// What the driver learnt besides the client's results.
struct ReducedRanks {
  trace::StreamedSet set;                 // the files, their final ranks, errors and warnings
  std::vector<std::string> repair_notes;  // "FILE: repaired N invalid JSON spots ...", in rank order
  analysis::CollectiveRows rows;          // the kept ranks' compact collective rows, in rank order
};

namespace detail {
template <class Store, class Parts>
void add_parts(Store* store, Parts&& parts) {
  if constexpr (requires { store->push_back(std::forward<Parts>(parts)); }) {
    store->push_back(std::forward<Parts>(parts));
  } else {
    store->add(std::forward<Parts>(parts));  // not thread-safe: called under the driver's lock
  }
}
}  // namespace detail

// Streams the files of `paths`, calling `reduce(const trace::RankTrace&, unsigned threads_per_file)`
// -> RankReduction<Parts> on each rank as it is read (on the reading thread, concurrently: it must not
// touch shared state; `threads_per_file` is its share of the threads, for reductions that run in
// parallel themselves). Once every file is read, the entries of `*parts` and the rows take their
// file's final rank (files without one are numbered then), and those `keep(rank)` accepts stay, in
// rank order. Fails only as trace::stream_traces does.
template <class Store, class Reduce, class Keep>
Result<ReducedRanks> reduce_ranks(const std::vector<std::string>& paths, const trace::LoadOptions& load, Reduce reduce,
                                  Keep keep, Store* parts) {
  std::mutex mutex;
  trace::StreamedOrder parts_order;                   // the file of each entry of `parts`
  analysis::CollectiveRows rows;                      // compact rows, in the order reading finished
  trace::StreamedOrder rows_order;                    // the file of each rank of `rows`
  std::vector<std::pair<size_t, std::string>> notes;  // file index -> repair note
  // The files are listed once more here (stream_traces lists them too) to know how many share the threads.
  const Result<std::vector<std::string>> files = trace::expand_trace_paths(paths);
  const unsigned threads_per_file = trace::threads_per_file(load, files ? files.value().size() : 1);
  auto streamed = trace::stream_traces(paths, load, [&](size_t i, trace::RankTrace&& t) {
    auto reduced = reduce(static_cast<const trace::RankTrace&>(t), threads_per_file);
    std::lock_guard<std::mutex> lock(mutex);
    if (t.stats.repairs > 0) {
      notes.emplace_back(
          i, fmt::format("{}: repaired {} invalid JSON spots written by old Kineto versions", t.path, t.stats.repairs));
    }
    if (reduced.parts) {
      detail::add_parts(parts, std::move(*reduced.parts));
      parts_order.add(i);
    }
    if (reduced.collectives) {
      rows.add(*reduced.collectives);
      rows_order.add(i);
    }
  });
  if (!streamed) return streamed.error();
  ReducedRanks out;
  out.set = std::move(streamed).value();
  const std::vector<int64_t>& rank_of_file = out.set.rank_of_file;
  std::sort(notes.begin(), notes.end(),
            [&](const auto& a, const auto& b) { return rank_of_file[a.first] < rank_of_file[b.first]; });
  for (auto& note : notes) out.repair_notes.push_back(std::move(note.second));
  // Results and rows were added in the order reading finished, with the rank the trace said.
  parts_order.apply(out.set, keep, parts);
  rows_order.apply(out.set, keep, &rows);
  out.rows = std::move(rows);
  return out;
}

}  // namespace scaleprof::engine

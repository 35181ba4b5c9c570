// Loads many trace files (one per rank) in parallel and assigns each its rank.
//
// Rank sources, in order: an explicit override (`--rank FILE=N`), distributedInfo.rank in the trace,
// a file name containing `rank-3`/`rank3`/`rank_3` or itwinai's `worker_3`, and finally a number given in file order
// with a warning. Two files with the same rank are an error naming both.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnostic.h"
#include "core/result.h"
#include "trace/event_table.h"
#include "trace/kineto_reader.h"

namespace scaleprof::trace {

struct LoadOptions {
  ParseOptions parse;
  unsigned threads = 0;                                         // 0: one per core
  std::vector<std::pair<std::string, int64_t>> rank_overrides;  // path -> rank
  // Called from worker threads as reading advances: files finished, files in all, bytes of the
  // files read so far and in all (compressed bytes for gzip). Used for a progress line.
  std::function<void(size_t, size_t, uint64_t, uint64_t)> progress;
  // stream_traces only: a file whose rank is known before reading (`--rank FILE=N`, else a `rank-N`
  // in its name) and for which this returns false is not read at all — a shard of a huge job
  // touches only its own files. Null: read every file.
  std::function<bool(int64_t)> wanted_rank;
};

struct TraceSet {
  std::vector<RankTrace> ranks;      // sorted by rank
  std::vector<Diagnostic> errors;    // one per file that could not be read (severity kError)
  std::vector<Diagnostic> warnings;  // rank assignment notes and per-event warnings
  // True when some input could not be used in full (a failed file or rejected events).
  bool partial() const;
};

// What stream_traces() learnt about the files, without their tables.
struct StreamedSet {
  std::vector<std::string> files;     // expanded paths, in order
  std::vector<int64_t> rank_of_file;  // final rank per file; -1: could not be read; -2: skipped (wanted_rank)
  std::vector<Diagnostic> errors;
  std::vector<Diagnostic> warnings;
  uint64_t rejected_events = 0;
  bool partial() const { return !errors.empty() || rejected_events > 0; }
};

// Reads every file on a pool of threads and hands each trace to `consume(file_index, trace)` on the
// reading thread, then drops it: memory stays at (threads × one trace) plus what `consume` keeps.
// The trace's rank is set when the override, distributedInfo or file name gives it (and is then
// final); files with no rank have -1 and are numbered after all are read, in file order — use
// rank_of_file for the final numbers (trace/streamed_order.h puts what was kept of each rank in that
// order).
// Fails only if the paths cannot be expanded or two files claim one rank.
Result<StreamedSet> stream_traces(const std::vector<std::string>& paths, const LoadOptions& options,
                                  const std::function<void(size_t, RankTrace&&)>& consume);

// The threads that read each file, and then run its analyses, when `files` files are read: the
// threads of `options` (0: one per core) are divided between them, not multiplied (one file alone
// gets them all).
unsigned threads_per_file(const LoadOptions& options, size_t files);

// Expands directories into their trace files (*.json, *.json.gz, *.pt.trace.json[.gz]), sorted; a
// scaleprof run directory into its ranks' traces (rank-*/traces/*).
Result<std::vector<std::string>> expand_trace_paths(const std::vector<std::string>& paths);

// Reads every file. Fails only if the paths cannot be expanded or two files claim one rank;
// unreadable files are listed in TraceSet::errors and the others are still loaded.
Result<TraceSet> load_traces(const std::vector<std::string>& paths, const LoadOptions& options = {});

// The rank a file name implies ("rank-3", "rank3", "rank_3", itwinai's "worker_3"), if any.
std::optional<int64_t> rank_from_file_name(std::string_view path);

}  // namespace scaleprof::trace

// What `scaleprof slurm analyze` splits into shards: the ranks of a trace directory or of a scaleprof
// run directory, each with the files only it needs, found without reading any trace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace scaleprof::pipeline {

// A scaleprof run directory: run.json, or rank-NNNNN/ folders (docs/run-directory.md).
bool is_run_directory(const std::string& path);

struct ShardRank {
  int64_t rank = 0;
  // The trace files of this rank alone (a run directory's rank-NNNNN/traces/); empty when the rank
  // comes from a file name in a trace directory, which every shard lists (`--ranks` skips the rest).
  std::vector<std::string> files;
};

struct ShardInputs {
  bool run_directory = false;
  std::vector<std::string> common_paths;  // given to every shard: the trace directory, or nothing
  std::vector<ShardRank> ranks;           // sorted by rank
  // Trace files whose name says no rank (a trace directory): every shard reads them to learn their
  // rank from inside (distributedInfo); the ranks are then taken as 0 .. files-1.
  size_t unnamed_files = 0;
};

// The ranks of `path`: a run directory's ranks (rank.json or the folder's number) with their
// traces/ files, or a trace directory's files with the rank their name gives (trace::rank_from_file_name).
// An error when there is no trace, or two files of a trace directory name the same rank.
Result<ShardInputs> shard_inputs(const std::string& path);

}  // namespace scaleprof::pipeline

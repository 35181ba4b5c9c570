#include "pipeline/shard_inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "importers/run_reader.h"  // collect::kRunJson too
#include "trace/trace_set.h"

namespace scaleprof::pipeline {

namespace fs = std::filesystem;

bool is_run_directory(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return false;
  if (fs::exists(fs::path(path) / collect::kRunJson, ec)) return true;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (entry.path().filename().string().starts_with("rank-") && entry.is_directory(ec)) return true;
  }
  return false;
}

Result<ShardInputs> shard_inputs(const std::string& path) {
  ShardInputs in;
  if (is_run_directory(path)) {
    in.run_directory = true;
    importers::ReadOptions read;
    read.read_gpu = false;
    read.read_steps = false;
    auto run = importers::read_run(path, read);
    if (!run) return run.error();
    for (const importers::RankData& r : run.value().ranks) {
      if (r.trace_files.empty()) continue;
      in.ranks.push_back({r.rank, r.trace_files});
    }
    if (in.ranks.empty()) {
      return Error{fmt::format("{}: the run directory has no traces (rank-*/traces/*.json[.gz])", path),
                   ErrorKind::kNotFound};
    }
    std::sort(in.ranks.begin(), in.ranks.end(), [](const ShardRank& a, const ShardRank& b) { return a.rank < b.rank; });
    for (size_t i = 1; i < in.ranks.size(); ++i) {
      if (in.ranks[i].rank == in.ranks[i - 1].rank) {
        return Error{fmt::format("{}: two rank folders hold rank {}", path, in.ranks[i].rank)};
      }
    }
    return in;
  }
  // A trace directory (or one file): the ranks the file names give. Listing is the trace reader's
  // own, so a shard sees exactly these files.
  auto files = trace::expand_trace_paths({path});
  if (!files) return files.error();
  std::map<int64_t, std::string> named;
  for (const std::string& f : files.value()) {
    const std::optional<int64_t> rank = trace::rank_from_file_name(f);
    if (!rank) {
      ++in.unnamed_files;
      continue;
    }
    if (auto [it, fresh] = named.emplace(*rank, f); !fresh) {
      return Error{fmt::format("{} and {} both name rank {}", it->second, f, *rank)};
    }
  }
  in.common_paths = {path};
  if (in.unnamed_files > 0) {
    // Their ranks are inside them: the set is taken as ranks 0 .. files-1, as one run over all would
    // number a complete job.
    for (int64_t r = 0; r < static_cast<int64_t>(files.value().size()); ++r) in.ranks.push_back({r, {}});
  } else {
    for (const auto& [rank, file] : named) in.ranks.push_back({rank, {}});
  }
  return in;
}

}  // namespace scaleprof::pipeline

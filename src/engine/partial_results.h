// Partial results: one shard's reduced per-rank rows, written by `scaleprof trace collectives|
// stragglers --partial FILE` and merged by `scaleprof trace merge FILE...` into exactly the output
// of one run over all ranks (the tables are made from these rows alone).
//
// The file is one JSON object: {"format": "scaleprof-partial", "version": 1, "report": NAME,
// "ranks": [RANK...]} with each RANK {"rank", "path", "host", "world_size", "gpu", "groups": [[name,
// desc, size, [ranks]]...], "calls": [[type, group, group_ranks, group_size, seq, step, bytes, dtype,
// start_ns, end_ns, device, [in_split_bytes], [out_split_bytes], annotation]...] (annotation, the
// all-to-all's enclosing record_function, only when there is one), "steps": [[step, start_ns,
// end_ns, host_busy_ns, dataloader_ns, gpu_busy_ns, comm_ns, host_idle_ns]...]}. Integers are exact;
// group_ranks is the canonical rank-list text ("0-1023", "0-3,8"; analysis::format_rank_list).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/collective_calls.h"
#include "core/result.h"

namespace scaleprof::engine {

struct PartialResults {
  std::string report;  // "collectives" or "stragglers"
  std::vector<analysis::RankCollectives> ranks;
};

std::string write_partial(const PartialResults& partial);

// Parses a partial file's text; `path` names the file in errors ("FILE: ranks[2].calls[5]: ...").
Result<PartialResults> parse_partial(std::string_view path, std::string_view text);

// Reads and merges shards: every file must come from the same report and no rank may appear twice.
// Ranks are sorted.
Result<PartialResults> merge_partials(const std::vector<std::string>& paths);

}  // namespace scaleprof::engine

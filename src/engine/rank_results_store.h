// Where the per-rank results of a `scaleprof trace` report wait until its tables are rendered.
//
// A streamed report keeps no trace, but it still keeps each rank's RankResults: a few KB (top
// operators, kernels and launches with their names, streams, steps), which at thousands of ranks
// outgrows the two traces being read. A spilling store keeps them in memory while they are few;
// once they pass its byte budget it writes them all to an unnamed temporary file, and every later
// rank's as it arrives, then reads one rank back at a time while the tables are rendered (their rows
// come from Table::row_source), so memory per rank is one index entry. A store in memory (a set
// loaded whole, or no temporary file could be made) keeps them as they are; all give the same ranks
// in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/rank_results.h"

namespace scaleprof::engine {

class RankResultsStore {
 public:
  // What a spilling store keeps in memory before it moves to a temporary file. One rank's results
  // hold 14-45 KB in memory on the shared traces (3 KB in the benchmark's thinned ranks), so sets of
  // up to some 12-35 such ranks, one rank included, never touch the disk: no file made, no rank
  // written, then read back and decoded for each per-rank table. The budget is also what the results
  // can add to peak memory whatever the number of ranks, nearly byte for byte (1,024 benchmark ranks:
  // +0.2 MiB with this budget, +0.6 with 1 MiB, +1.6 with 2, +3.0 with 4), and the benchmark's 1,024
  // ranks must stay within 1.25x of 64 (bench/collectives_scale.py; docs/scale.md): 1 MiB and more
  // broke that.
  static constexpr size_t kMemoryBudgetBytes = size_t{512} << 10;

  // In memory, however many results.
  RankResultsStore() = default;
  // In memory until the results held pass `memory_budget` bytes (resident_bytes), then all of them,
  // and every later rank's, in an unnamed temporary file in $TMPDIR (else /tmp). They stay in
  // memory where no file can be made or a write fails.
  static std::shared_ptr<RankResultsStore> spilling(size_t memory_budget = kMemoryBudgetBytes);
  ~RankResultsStore();
  RankResultsStore(const RankResultsStore&) = delete;
  RankResultsStore& operator=(const RankResultsStore&) = delete;

  // Adds one rank's results (not thread-safe: callers add under their lock).
  void add(RankResults results);
  // The k-th added results get rank `rank` (the final rank, known once every file is read).
  void set_rank(size_t k, int64_t rank);
  // Keeps the results whose rank `keep` accepts, in rank order.
  void keep_sorted(const std::function<bool(int64_t)>& keep);

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // Whether the results moved to the temporary file, and what is still held in memory (for tests).
  bool spilled() const { return fd_ >= 0; }
  size_t bytes_in_memory() const { return memory_bytes_; }
  // Calls `visit` with each rank's results, in order (read back one at a time when spilled).
  void for_each(const std::function<void(const RankResults&)>& visit) const;

 private:
  struct Entry {
    int64_t rank = 0;
    uint64_t offset = 0;  // in the file; unused for results in memory
    uint64_t size = 0;
    int64_t memory = -1;  // index into memory_, or -1: in the file
  };
  // Moves every result held in memory to the file, made now; stays in memory on failure.
  void spill();
  // Appends one rank's results to the file; false when the write fails.
  bool write(const RankResults& results, Entry* entry);

  size_t memory_budget_ = SIZE_MAX;  // SIZE_MAX: never spill (in memory, or spilling failed)
  size_t memory_bytes_ = 0;          // resident_bytes of the results in memory_
  int fd_ = -1;                      // the temporary file, already unlinked; -1: none
  uint64_t file_size_ = 0;
  std::vector<Entry> entries_;
  std::vector<RankResults> memory_;
};

// The binary form of one rank's results in a spilled store (same process, same build: fields are
// written as their bytes). Exposed for the round-trip test.
std::string encode_rank_results(const RankResults& results);
bool decode_rank_results(const std::string& bytes, RankResults* results);
// About how many bytes one rank's results hold in memory (the objects and the heap their strings and
// vectors use): what a spilling store counts against its budget.
size_t resident_bytes(const RankResults& results);

// The selected ranks' results in rank order. The tables with a row per rank keep it (shared) and
// make those rows from it as they are rendered (Table::row_source), one rank at a time, so no rank's
// cells are held; what a table needs of all ranks (pooled rows, column choices) is computed first.
using RankStore = std::shared_ptr<const RankResultsStore>;

}  // namespace scaleprof::engine

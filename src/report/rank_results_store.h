// Where the per-rank results of a `scaleprof trace` report wait until its tables are rendered.
//
// A streamed report keeps no trace, but it still keeps each rank's RankResults: a few KB (top
// operators, kernels and launches with their names, streams, steps), which at thousands of ranks
// outgrows the two traces being read. A spilled store writes each rank's results to an unnamed
// temporary file as they arrive and reads one rank back at a time while the tables are rendered
// (their rows come from Table::row_source), so memory per rank is one index entry. A store in
// memory (a set loaded whole, or no temporary file could be made) keeps them as they are; both give
// the same ranks in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "report/rank_results.h"

namespace scaleprof::report {

class RankResultsStore {
 public:
  // In memory.
  RankResultsStore() = default;
  // Spilled to an unnamed temporary file in $TMPDIR (else /tmp), in memory where none can be made
  // or a write fails.
  static std::shared_ptr<RankResultsStore> spilled();
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
  // Calls `visit` with each rank's results, in order (read back one at a time when spilled).
  void for_each(const std::function<void(const RankResults&)>& visit) const;

 private:
  struct Entry {
    int64_t rank = 0;
    uint64_t offset = 0;  // in the file; unused for results in memory
    uint64_t size = 0;
    int64_t memory = -1;  // index into memory_, or -1: in the file
  };
  int fd_ = -1;  // the temporary file, already unlinked; -1: none
  uint64_t file_size_ = 0;
  std::vector<Entry> entries_;
  std::vector<RankResults> memory_;
};

// The binary form of one rank's results in a spilled store (same process, same build: fields are
// written as their bytes). Exposed for the round-trip test.
std::string encode_rank_results(const RankResults& results);
bool decode_rank_results(const std::string& bytes, RankResults* results);

}  // namespace scaleprof::report

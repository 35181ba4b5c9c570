// Puts what a stream_traces() consumer made of each rank into final rank order.
//
// stream_traces hands the ranks over in the order reading finishes, and a file with no rank is
// numbered only once every file is read (StreamedSet::rank_of_file). A consumer that keeps one entry
// per rank notes, under its lock, the file each entry came from; once streaming is done, every entry
// takes its file's final rank, and those selected are kept in rank order (stable). The engine's
// per-rank driver (engine/rank_stream.h) uses it for both streamed paths: `scaleprof trace` and the
// trace stage of `scaleprof report`.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "trace/trace_set.h"

namespace scaleprof::trace {

// A container that renumbers and orders its own entries (engine::RankResultsStore,
// analysis::CollectiveRows): set_rank(k, rank) for the k-th entry added, then keep_sorted(keep).
template <class T>
concept RenumbersInPlace = requires(T& entries, size_t k, int64_t rank, bool (*keep)(int64_t)) {
  entries.set_rank(k, rank);
  entries.keep_sorted(keep);
};

class StreamedOrder {
 public:
  // The next entry the consumer adds came from file `file` (the index stream_traces passed).
  void add(size_t file) { files_.push_back(file); }
  size_t size() const { return files_.size(); }

  // Gives the k-th entry added its file's final rank, then keeps those `keep` accepts, in rank order.
  template <RenumbersInPlace Entries, class Keep>
  void apply(const StreamedSet& set, Keep keep, Entries* entries) const {
    for (size_t k = 0; k < files_.size(); ++k) entries->set_rank(k, set.rank_of_file[files_[k]]);
    entries->keep_sorted(keep);
  }
  // The same for a vector of structs with a `rank` member.
  template <class T, class Keep>
  void apply(const StreamedSet& set, Keep keep, std::vector<T>* entries) const {
    for (size_t k = 0; k < files_.size(); ++k) (*entries)[k].rank = set.rank_of_file[files_[k]];
    std::erase_if(*entries, [&](const T& e) { return !keep(e.rank); });
    std::stable_sort(entries->begin(), entries->end(), [](const T& a, const T& b) { return a.rank < b.rank; });
  }

 private:
  std::vector<size_t> files_;  // file index of each entry, in the order they were added
};

}  // namespace scaleprof::trace

// A stable sort for lists that are already almost in order. Kineto writes each thread's host events,
// and the correlation and External ids of its launches, in nearly increasing order (df_index_resolver:
// 1 to 3 out of place among 42,000 to 70,000), where std::sort and std::stable_sort still pay their
// n log n comparisons: sorting them was a fifth of `trace diff`'s per-rank summary (issue 20's speed
// bound). Here such a list costs one pass to find its ascending runs and one merge per run.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <vector>

namespace scaleprof {

// Sorts [first, last) by `less`, stably: the same result as std::stable_sort(first, last, less).
// Input made of at most `max_runs` ascending runs is merged run by run (linear per run); more runs
// fall back to std::stable_sort, so unordered input costs one extra pass, not n x runs.
template <class It, class Less>
void stable_sort_runs(It first, It last, Less less, size_t max_runs = 16) {
  if (std::distance(first, last) < 2) return;
  std::vector<It> run_starts;  // where each ascending run after the first begins
  for (It prev = first, i = std::next(first); i != last; prev = i, ++i) {
    if (!less(*i, *prev)) continue;
    if (run_starts.size() + 1 >= max_runs) {
      std::stable_sort(first, last, less);
      return;
    }
    run_starts.push_back(i);
  }
  // [first, run_starts[k]) is sorted once the runs before it are merged; merging the next run in
  // keeps equal elements in their order (inplace_merge is stable).
  for (size_t k = 0; k < run_starts.size(); ++k) {
    const It run_end = k + 1 < run_starts.size() ? run_starts[k + 1] : last;
    std::inplace_merge(first, run_starts[k], run_end, less);
  }
}

}  // namespace scaleprof

// Entries made from streamed ranks arrive in the order reading finished and take their final ranks
// only once every file is read (trace/streamed_order.h): each must get its own file's rank, the
// unselected ones must go, and the rest must come out in rank order, equal ranks as they were added.
#include "trace/streamed_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace scaleprof {
namespace {

struct Entry {
  int64_t rank = -1;  // what the trace said; -1: no rank in the file
  std::string file;
};

// A container that renumbers and orders its own entries, as RankResultsStore and CollectiveRows do.
struct OwnOrder {
  std::vector<Entry> entries;
  void set_rank(size_t k, int64_t rank) { entries[k].rank = rank; }
  template <class Keep>
  void keep_sorted(Keep keep) {
    std::erase_if(entries, [&](const Entry& e) { return !keep(e.rank); });
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.rank < b.rank; });
  }
};

std::vector<std::pair<int64_t, std::string>> ranks_and_files(const std::vector<Entry>& entries) {
  std::vector<std::pair<int64_t, std::string>> out;
  for (const Entry& e : entries) out.emplace_back(e.rank, e.file);
  return out;
}

TEST(StreamedOrder, EntriesTakeTheirFilesFinalRanksInRankOrder) {
  trace::StreamedSet set;
  set.files = {"a", "b", "c", "d", "e"};
  // b and e had no rank and were numbered after the others were read; d could not be read.
  set.rank_of_file = {2, 0, 5, -1, 1};
  const std::vector<size_t> finished = {2, 4, 0, 1};  // the order reading finished
  std::vector<Entry> vector_entries;
  OwnOrder own;
  trace::StreamedOrder order;
  for (size_t file : finished) {
    const Entry e{file == 1 || file == 4 ? -1 : set.rank_of_file[file], set.files[file]};
    vector_entries.push_back(e);
    own.entries.push_back(e);
    order.add(file);
  }
  ASSERT_EQ(order.size(), 4U);
  auto not_two = [](int64_t rank) { return rank != 2; };
  order.apply(set, not_two, &vector_entries);
  order.apply(set, not_two, &own);
  const std::vector<std::pair<int64_t, std::string>> expected = {{0, "b"}, {1, "e"}, {5, "c"}};
  EXPECT_EQ(ranks_and_files(vector_entries), expected);
  EXPECT_EQ(ranks_and_files(own.entries), expected);
}

TEST(StreamedOrder, EqualRanksKeepTheOrderTheyWereAdded) {
  trace::StreamedSet set;
  set.rank_of_file = {7, 3, 7};
  std::vector<Entry> entries;
  trace::StreamedOrder order;
  for (size_t file : {2, 1, 0}) {
    entries.push_back({-1, std::to_string(file)});
    order.add(file);
  }
  order.apply(
      set, [](int64_t) { return true; }, &entries);
  EXPECT_EQ(ranks_and_files(entries), (std::vector<std::pair<int64_t, std::string>>{{3, "1"}, {7, "2"}, {7, "0"}}));
}

}  // namespace
}  // namespace scaleprof

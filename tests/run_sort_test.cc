// core/run_sort.h: stable_sort_runs must give std::stable_sort's order exactly (equal keys in their
// input order), on input of a few ascending runs (the merge path) and of many (the fallback).
#include "core/run_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace scaleprof {
namespace {

// (key, input position): compared by key only, so the positions show whether ties kept their order.
using Item = std::pair<int, int>;
bool key_less(const Item& a, const Item& b) {
  return a.first < b.first;
}

std::vector<Item> numbered(const std::vector<int>& keys) {
  std::vector<Item> out;
  for (size_t i = 0; i < keys.size(); ++i) out.emplace_back(keys[i], static_cast<int>(i));
  return out;
}

std::vector<Item> expected(std::vector<Item> v) {
  std::stable_sort(v.begin(), v.end(), key_less);
  return v;
}

TEST(RunSort, AlreadySortedIsUnchanged) {
  std::vector<Item> v = numbered({1, 2, 2, 3, 7, 7, 9});
  const std::vector<Item> before = v;
  stable_sort_runs(v.begin(), v.end(), key_less);
  EXPECT_EQ(v, before);
}

TEST(RunSort, OneElementOutOfPlaceKeepsTiesInOrder) {
  // Runs [1 4 4 6] [2 4 5]: the 4s of the first run stay before the 4 of the second.
  std::vector<Item> v = numbered({1, 4, 4, 6, 2, 4, 5});
  stable_sort_runs(v.begin(), v.end(), key_less);
  EXPECT_EQ(v, (std::vector<Item>{{1, 0}, {2, 4}, {4, 1}, {4, 2}, {4, 5}, {5, 6}, {6, 3}}));
}

TEST(RunSort, FewRunsAndManyRunsMatchStableSort) {
  std::mt19937 random(20);
  for (const size_t swaps : {size_t{1}, size_t{3}, size_t{7}, size_t{200}}) {
    std::vector<int> keys(5000);
    for (size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<int>(i / 3);  // ties of three
    std::uniform_int_distribution<size_t> at(0, keys.size() - 1);
    for (size_t s = 0; s < swaps; ++s) std::swap(keys[at(random)], keys[at(random)]);
    std::vector<Item> v = numbered(keys);
    const std::vector<Item> want = expected(v);
    stable_sort_runs(v.begin(), v.end(), key_less);
    EXPECT_EQ(v, want) << swaps << " swaps";
  }
}

TEST(RunSort, DescendingInputFallsBack) {
  std::vector<int> keys;
  for (int k = 40; k > 0; --k) keys.push_back(k % 5);
  std::vector<Item> v = numbered(keys);
  const std::vector<Item> want = expected(v);
  stable_sort_runs(v.begin(), v.end(), key_less, 4);
  EXPECT_EQ(v, want);
}

TEST(RunSort, EmptyAndSingle) {
  std::vector<Item> none;
  stable_sort_runs(none.begin(), none.end(), key_less);
  EXPECT_TRUE(none.empty());
  std::vector<Item> one = numbered({5});
  stable_sort_runs(one.begin(), one.end(), key_less);
  EXPECT_EQ(one, (std::vector<Item>{{5, 0}}));
}

}  // namespace
}  // namespace scaleprof

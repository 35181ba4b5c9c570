// StringPool: every view stays valid and exact whatever the order and length of the strings.
#include "trace/string_pool.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace scaleprof::trace {
namespace {

// Issue 7 item 1: a first string longer than 16 KiB got a block of its own, and the next short
// strings were appended to that same block, reallocating it under the long string's view.
TEST(StringPool, LongFirstStringThenShortOnesKeepEveryView) {
  for (size_t long_size : {20'000UL, 200'000UL}) {
    StringPool pool;
    const std::string long_name(long_size, 'k');
    const StringId long_id = pool.intern(long_name);
    std::vector<std::pair<StringId, std::string>> short_names;
    for (int i = 0; i < 5000; ++i) {
      std::string s = "kernel_" + std::to_string(i);
      short_names.emplace_back(pool.intern(s), s);
    }
    EXPECT_EQ(pool.view(long_id), long_name) << long_size;
    for (const auto& [id, s] : short_names) ASSERT_EQ(pool.view(id), s);
    // The index must still find the long string by its text.
    StringId found = 0;
    ASSERT_TRUE(pool.find(long_name, &found));
    EXPECT_EQ(found, long_id);
    EXPECT_EQ(pool.intern(long_name), long_id);
  }
}

TEST(StringPool, InterleavedLongAndShortStringsSurviveAMove) {
  StringPool pool;
  std::vector<std::pair<StringId, std::string>> all;
  for (int i = 0; i < 200; ++i) {
    std::string s = (i % 7 == 0) ? std::string(17'000 + i, static_cast<char>('a' + i % 26)) : "op" + std::to_string(i);
    all.emplace_back(pool.intern(s), s);
  }
  StringPool moved = std::move(pool);
  for (const auto& [id, s] : all) ASSERT_EQ(moved.view(id), s);
  EXPECT_EQ(moved.view(0), "");
  EXPECT_EQ(moved.size(), all.size() + 1);
}

}  // namespace
}  // namespace scaleprof::trace

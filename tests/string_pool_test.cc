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

// The index hashes 8 bytes at a time and the tail as one overlapping word: strings of every length
// that differ in one byte anywhere, or only in length, must all get ids of their own, and find the
// same ids again after the index has grown many times.
TEST(StringPool, StringsDifferingInOneByteOrInLengthKeepTheirOwnIds) {
  StringPool pool;
  std::vector<std::pair<std::string, StringId>> all;
  for (size_t length = 1; length <= 40; ++length) {
    const std::string base(length, 'a');
    all.emplace_back(base, pool.intern(base));
    for (size_t at = 0; at < length; ++at) {
      std::string s = base;
      s[at] = 'b';
      all.emplace_back(s, pool.intern(s));
    }
  }
  EXPECT_EQ(pool.size(), all.size() + 1);
  for (const auto& [s, id] : all) {
    ASSERT_EQ(pool.view(id), s);
    ASSERT_EQ(pool.intern(s), id) << s;
    StringId found = 0;
    ASSERT_TRUE(pool.find(s, &found)) << s;
    ASSERT_EQ(found, id) << s;
  }
  StringId found = 7;
  EXPECT_FALSE(pool.find("c", &found));
  EXPECT_FALSE(pool.find(std::string(41, 'a'), &found));
  EXPECT_EQ(pool.intern(""), 0u);
  ASSERT_TRUE(pool.find("", &found));
  EXPECT_EQ(found, 0u);
}

// intern_from (the parallel reader's merge of a window's pool into the rank's) uses the hash the
// other pool stored: the ids must be those intern() of the same text gives, before and after the
// index grows, and strings already present must keep their ids.
TEST(StringPool, InternFromAnotherPoolGivesTheIdsOfItsText) {
  StringPool rank;
  const StringId existing = rank.intern("aten::mm");
  StringPool part;
  std::vector<std::string> texts;
  for (int i = 0; i < 3000; ++i) texts.push_back(i % 3 == 0 ? "aten::mm" : "kernel_" + std::to_string(i));
  std::vector<StringId> part_ids;
  for (const std::string& s : texts) part_ids.push_back(part.intern(s));
  for (size_t k = 0; k < texts.size(); ++k) {
    const StringId id = rank.intern_from(part, part_ids[k]);
    ASSERT_EQ(rank.view(id), texts[k]);
    if (texts[k] == "aten::mm") {
      ASSERT_EQ(id, existing);
    }
  }
  EXPECT_EQ(rank.size(), 1 + 1 + 2000);  // the empty string, aten::mm, 2,000 kernels
  EXPECT_EQ(rank.intern_from(part, 0), 0u);
  for (const std::string& s : texts) {
    StringId found = 0;
    ASSERT_TRUE(rank.find(s, &found)) << s;
    ASSERT_EQ(rank.view(found), s);
  }
}

}  // namespace
}  // namespace scaleprof::trace

// core/number_text.h: the one parser of numbers written as text, its syntax choices, and the
// prefix and hex forms that the interval, SLURM-count, FLOP-formula and bit-mask readers use.
#include "core/number_text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace scaleprof {
namespace {

TEST(NumberText, StrictNumbersAreTheWholeText) {
  EXPECT_EQ(parse_double("0.125"), 0.125);
  EXPECT_EQ(parse_int64("-42"), -42);
  EXPECT_FALSE(parse_double("12abc"));
  EXPECT_FALSE(parse_double(" 1"));
  EXPECT_FALSE(parse_double("+1"));
  EXPECT_FALSE(parse_double(""));
  EXPECT_FALSE(parse_int64("4.0"));
  EXPECT_FALSE(parse_double("1e999"));  // out of range is no number, never infinity
  EXPECT_FALSE(parse_int64("99999999999999999999"));
  EXPECT_TRUE(std::isnan(*parse_double("nan")));
}

TEST(NumberText, CellNumbersAllowBlanksPlusAndIntegralFloats) {
  EXPECT_EQ(parse_double(" +2.5\t", kCellNumber), 2.5);
  EXPECT_FALSE(parse_double("+-2", kCellNumber));
  EXPECT_FALSE(parse_double("inf", kCellNumber));
  EXPECT_EQ(parse_int64("4.0", kCellNumber), 4);
  EXPECT_EQ(parse_int64("4e0", kCellNumber), 4);
  EXPECT_FALSE(parse_int64("4.5", kCellNumber));
  EXPECT_FALSE(parse_int64("1e16", kCellNumber));  // past 9e15 a double no longer holds every integer
}

TEST(NumberText, PrefixGivesTheValueAndWhatFollows) {
  const auto interval = parse_double_prefix("500ms");
  ASSERT_TRUE(interval);
  EXPECT_EQ(interval->value, 500.0);
  EXPECT_EQ(interval->rest, "ms");
  const auto whole = parse_double_prefix("0.1");
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->value, 0.1);
  EXPECT_TRUE(whole->rest.empty());
  const auto tasks = parse_int64_prefix("4(x2)");
  ASSERT_TRUE(tasks);
  EXPECT_EQ(tasks->value, 4);
  EXPECT_EQ(tasks->rest, "(x2)");
  EXPECT_FALSE(parse_double_prefix("ms"));
  EXPECT_FALSE(parse_double_prefix(""));
  EXPECT_FALSE(parse_int64_prefix(" 4"));
  EXPECT_FALSE(parse_int64_prefix("99999999999999999999x"));  // out of range: no number
}

TEST(NumberText, HexIsTheWholeTextInHexDigits) {
  EXPECT_EQ(parse_hex("ff"), 255u);
  EXPECT_EQ(parse_hex("8000000000000000"), uint64_t{1} << 63);
  EXPECT_FALSE(parse_hex("0x10"));
  EXPECT_FALSE(parse_hex("1g"));
  EXPECT_FALSE(parse_hex(""));
  EXPECT_FALSE(parse_hex("-1"));
  EXPECT_FALSE(parse_hex("10000000000000000"));  // 2^64: out of range
}

}  // namespace
}  // namespace scaleprof

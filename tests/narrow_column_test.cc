// The event table's 4-byte columns of int64 values: every value reads back as written, the ones
// that do not fit 32 bits (and INT32_MIN, the marker) through the side table, also after appending.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "trace/narrow_column.h"

namespace scaleprof::trace {
namespace {

constexpr int64_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int64_t kMax32 = std::numeric_limits<int32_t>::max();

TEST(NarrowInt64Column, ValuesOutsideInt32ReadBackExactly) {
  const std::vector<int64_t> values{-1,
                                    0,
                                    7,
                                    kMax32,
                                    kMax32 + 1,
                                    kMin32,
                                    kMin32 + 1,
                                    4294967295,
                                    -4294967296,
                                    std::numeric_limits<int64_t>::min(),
                                    std::numeric_limits<int64_t>::max(),
                                    12};
  NarrowInt64Column c;
  for (int64_t v : values) c.push_back(v);
  ASSERT_EQ(c.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(c[i], values[i]) << i;
  EXPECT_EQ(c.to_vector(), values);
  // Four bytes a row plus 16 for each of the six values that do not fit (INT32_MIN among them).
  NarrowInt64Column narrow_only;
  narrow_only.push_back(5);
  EXPECT_LT(narrow_only.memory_bytes(), c.memory_bytes());
}

TEST(NarrowInt64Column, AppendShiftsTheSideTableRows) {
  NarrowInt64Column a;
  a.push_back(1);
  a.push_back(int64_t{1} << 40);
  NarrowInt64Column b;
  b.push_back(-(int64_t{1} << 33));
  b.push_back(2);
  b.push_back(int64_t{1} << 35);
  a.append(b);
  EXPECT_EQ(a.to_vector(), (std::vector<int64_t>{1, int64_t{1} << 40, -(int64_t{1} << 33), 2, int64_t{1} << 35}));
  NarrowInt64Column same;
  for (int64_t v : a.to_vector()) same.push_back(v);
  EXPECT_EQ(same, a);
  a.clear();
  EXPECT_TRUE(a.empty());
  a.push_back(3);
  EXPECT_EQ(a[0], 3);
}

}  // namespace
}  // namespace scaleprof::trace

#include "analysis/distribution.h"

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>

namespace scaleprof::analysis {
namespace {

TEST(Distribution, DescribeMatchesPandas) {
  // pandas.Series([4, 1, 3, 2]).describe(): mean 2.5, std 1.290994, quartiles 1.75 / 2.5 / 3.25.
  const Distribution d = describe({4, 1, 3, 2});
  EXPECT_EQ(d.count, 4);
  EXPECT_EQ(d.sum, 10);
  EXPECT_DOUBLE_EQ(d.mean, 2.5);
  EXPECT_NEAR(d.std, 1.2909944, 1e-6);
  EXPECT_DOUBLE_EQ(d.min, 1);
  EXPECT_DOUBLE_EQ(d.p25, 1.75);
  EXPECT_DOUBLE_EQ(d.p50, 2.5);
  EXPECT_DOUBLE_EQ(d.p75, 3.25);
  EXPECT_NEAR(d.p90, 3.7, 1e-12);
  EXPECT_DOUBLE_EQ(d.max, 4);
}

TEST(Distribution, EmptyAndSingleSamples) {
  const Distribution empty = describe({});
  EXPECT_EQ(empty.count, 0);
  EXPECT_EQ(empty.sum, 0);
  EXPECT_TRUE(std::isnan(empty.mean));
  EXPECT_TRUE(std::isnan(empty.max));
  const Distribution one = describe({7});
  EXPECT_EQ(one.count, 1);
  EXPECT_DOUBLE_EQ(one.p50, 7);
  EXPECT_TRUE(std::isnan(one.std));  // as pandas: undefined for one value
}

TEST(Distribution, RunningStatsMergeEqualsOnePass) {
  RunningStats all, a, b;
  for (int64_t x : {10, 20, 30, 1000}) {
    all.add(x);
    a.add(x);
  }
  for (int64_t x : std::initializer_list<int64_t>{5, 7, 2'000'000'000'000}) {
    all.add(x);
    b.add(x);
  }
  a.merge(b);
  EXPECT_EQ(a.count, 7);
  EXPECT_EQ(a.sum, all.sum);
  EXPECT_EQ(a.min, 5);
  EXPECT_EQ(a.max, 2'000'000'000'000);
  EXPECT_NEAR(a.mean, all.mean, 1e-3);
  EXPECT_NEAR(a.stddev(), all.stddev(), all.stddev() * 1e-12);
  RunningStats single;
  single.add(3);
  EXPECT_EQ(single.stddev(), 0.0);  // HTA fills the undefined std of a single kernel with 0
}

}  // namespace
}  // namespace scaleprof::analysis

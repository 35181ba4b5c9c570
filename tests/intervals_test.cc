#include "analysis/intervals.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

namespace scaleprof::analysis {
namespace {

TEST(Intervals, UnionOfNothingIsEmpty) {
  EXPECT_TRUE(union_intervals({}).empty());
  EXPECT_EQ(total_length({}), 0);
}

TEST(Intervals, UnionSortsAndMergesOverlapsAndNesting) {
  const std::vector<Interval> merged = union_intervals({{50, 60}, {0, 10}, {5, 20}, {7, 8}, {30, 40}});
  EXPECT_EQ(merged, (std::vector<Interval>{{0, 20}, {30, 40}, {50, 60}}));
  EXPECT_EQ(total_length(merged), 40);
}

TEST(Intervals, TouchingIntervalsMergeAsInHta) {
  // Back-to-back kernels form one busy interval: no zero-length idle gap between them.
  EXPECT_EQ(union_intervals({{0, 5}, {5, 9}}), (std::vector<Interval>{{0, 9}}));
  // One nanosecond apart stays apart.
  EXPECT_EQ(union_intervals({{0, 5}, {6, 9}}), (std::vector<Interval>{{0, 5}, {6, 9}}));
}

TEST(Intervals, LongIntervalAbsorbsLaterShortOnes) {
  // [0,100) contains [10,20); [50,60) starts after 20 but inside 100 and must merge too.
  EXPECT_EQ(union_intervals({{0, 100}, {10, 20}, {50, 60}, {100, 110}}), (std::vector<Interval>{{0, 110}}));
}

TEST(Intervals, ZeroLengthIntervalsJoinWithoutLength) {
  const auto merged = union_intervals({{10, 10}, {0, 10}, {20, 20}});
  EXPECT_EQ(merged, (std::vector<Interval>{{0, 10}, {20, 20}}));
  EXPECT_EQ(total_length(merged), 10);
}

TEST(Intervals, Intersection) {
  const std::vector<Interval> a = {{0, 10}, {20, 30}, {40, 50}};
  const std::vector<Interval> b = {{5, 25}, {28, 45}};
  EXPECT_EQ(intersect(a, b), (std::vector<Interval>{{5, 10}, {20, 25}, {28, 30}, {40, 45}}));
  EXPECT_EQ(intersection_length(a, b), 5 + 5 + 2 + 5);
  EXPECT_EQ(intersection_length(b, a), 17);
}

TEST(Intervals, TouchingSetsDoNotIntersect) {
  const std::vector<Interval> a = {{0, 10}};
  const std::vector<Interval> b = {{10, 20}};
  EXPECT_TRUE(intersect(a, b).empty());
  EXPECT_EQ(intersection_length(a, b), 0);
  EXPECT_EQ(intersection_length(a, {}), 0);
}

TEST(Intervals, SweepLabelsEverySegmentWithTheActiveSets) {
  const std::vector<std::vector<Interval>> sets = {{{0, 10}}, {{5, 15}}, {{12, 20}}};
  std::vector<std::tuple<uint32_t, int64_t, int64_t>> got;
  sweep_coverage(sets, [&](uint32_t mask, int64_t s, int64_t e) { got.emplace_back(mask, s, e); });
  const std::vector<std::tuple<uint32_t, int64_t, int64_t>> want = {
      {1, 0, 5}, {3, 5, 10}, {2, 10, 12}, {6, 12, 15}, {4, 15, 20}};
  EXPECT_EQ(got, want);
}

TEST(Intervals, SweepHandOverAtOneInstantHasNoEmptySegment) {
  // Set 0 ends exactly when set 1 starts, and a gap follows: [0,10) {0}, [10,20) {1}, nothing, [30,40) {0}.
  const std::vector<std::vector<Interval>> sets = {{{0, 10}, {30, 40}}, {{10, 20}}};
  std::vector<std::tuple<uint32_t, int64_t, int64_t>> got;
  sweep_coverage(sets, [&](uint32_t mask, int64_t s, int64_t e) { got.emplace_back(mask, s, e); });
  const std::vector<std::tuple<uint32_t, int64_t, int64_t>> want = {{1, 0, 10}, {2, 10, 20}, {1, 30, 40}};
  EXPECT_EQ(got, want);
}

TEST(Intervals, ClipKeepsThePartsInsideTheWindow) {
  const std::vector<Interval> set = {{0, 10}, {20, 30}, {40, 50}};
  EXPECT_EQ(clip_intervals(set, 5, 45), (std::vector<Interval>{{5, 10}, {20, 30}, {40, 45}}));
  EXPECT_EQ(clip_intervals(set, 10, 20), std::vector<Interval>{});  // [start, end): the ends touch only
  EXPECT_EQ(clip_intervals(set, 25, 26), (std::vector<Interval>{{25, 26}}));
}

TEST(Intervals, CoversIsHalfOpen) {
  const std::vector<Interval> set = {{0, 10}, {20, 30}};
  EXPECT_TRUE(covers(set, 0));
  EXPECT_TRUE(covers(set, 9));
  EXPECT_FALSE(covers(set, 10));
  EXPECT_FALSE(covers(set, 15));
  EXPECT_TRUE(covers(set, 20));
  EXPECT_FALSE(covers(set, -1));
  EXPECT_FALSE(covers(set, 30));
}

TEST(Intervals, SubtractLeavesWhatTheOtherSetDoesNotCover) {
  const std::vector<Interval> a = {{0, 100}, {200, 300}};
  const std::vector<Interval> b = {{10, 20}, {90, 210}, {250, 260}};
  EXPECT_EQ(subtract_intervals(a, b), (std::vector<Interval>{{0, 10}, {20, 90}, {210, 250}, {260, 300}}));
  EXPECT_EQ(subtract_intervals(a, {}), a);
  EXPECT_TRUE(subtract_intervals(b, std::vector<Interval>{{0, 400}}).empty());
}

}  // namespace
}  // namespace scaleprof::analysis

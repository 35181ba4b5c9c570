// Issue 18, finding 6, in the library every front-end uses: a record's arguments are checked before it
// starts, a record is never left open by an error at its end, and a text argument given explicitly is
// never "" (silently the default) nor cut at a NUL byte.
#include <gtest/gtest.h>

#include <cstdio>
#include <limits>

#include "collect/rank_recorder.h"
#include "collect/run_context.h"
#include "collect_test_util.h"
#include "importers/run_reader.h"

namespace scaleprof::collect {
namespace {

using testing::TempDir;

RunContext arguments_context(const std::string& root) {
  RunContext c;
  c.root = root;
  c.experiment = "exp";
  c.run = "run1";
  c.host = "testhost";
  c.gpu_monitor = "off";
  return c;
}

TEST(RecordArguments, NegativeIndexesAndSampleCountsAreRefusedBeforeTheRecordStarts) {
  EXPECT_EQ(check_record_arguments("epoch", -1, std::nullopt).error().message, "epoch -1 is negative");
  EXPECT_EQ(check_record_arguments("step", -7, 3).error().message, "step -7 is negative");
  EXPECT_EQ(check_record_arguments("epoch", 0, -5).error().message, "samples -5 is negative");
  EXPECT_TRUE(check_record_arguments("step", std::nullopt, std::nullopt).ok());
  EXPECT_TRUE(check_record_arguments("epoch", std::numeric_limits<int64_t>::max(), 0).ok());

  TempDir dir("args");
  auto r = RankRecorder::open(arguments_context(dir.path()), {}, Environment{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  RankRecorder& rec = *r.value();
  EXPECT_EQ(rec.begin_epoch(-1).error().message, "epoch -1 is negative");
  EXPECT_EQ(rec.begin_epoch(0, -5).error().message, "samples -5 is negative");
  // Nothing started: the next epoch begins as usual and gets the samples given at its beginning.
  ASSERT_TRUE(rec.begin_epoch(0, 8).ok());
  EXPECT_EQ(rec.begin_step(-2).error().message, "step -2 is negative");
  ASSERT_TRUE(rec.begin_step(std::nullopt, 4).ok());
  ASSERT_TRUE(rec.end_step().ok());
  auto e0 = rec.end_epoch();
  ASSERT_TRUE(e0.ok());
  EXPECT_EQ(e0.value().samples, 8);

  // A bad count at the end: an error, the epoch is dropped, and nothing is left open.
  ASSERT_TRUE(rec.begin_epoch(1).ok());
  EXPECT_EQ(rec.end_epoch(-3).error().message, "epoch 1 not recorded: samples -3 is negative");
  ASSERT_TRUE(rec.begin_epoch(2).ok());
  ASSERT_TRUE(rec.begin_step().ok());
  EXPECT_EQ(rec.end_step(-1).error().message, "step 0 not recorded: samples -1 is negative");
  // The largest step number: the next default index saturates instead of wrapping to a negative one.
  ASSERT_TRUE(rec.begin_step(std::numeric_limits<int64_t>::max()).ok());
  ASSERT_TRUE(rec.end_step().ok());
  ASSERT_TRUE(rec.begin_step().ok());
  auto last = rec.end_step(16);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last.value().step, std::numeric_limits<int64_t>::max());
  ASSERT_TRUE(rec.end_epoch(32).ok());
  ASSERT_TRUE(rec.finish(true).ok());

  auto run = importers::read_run(dir.file("exp/run1"));
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run.value().ranks.size(), 1u);
  const importers::RankData& rank = run.value().ranks[0];
  ASSERT_EQ(rank.epochs.size(), 2u);
  EXPECT_EQ(rank.epochs[0].epoch, 0);
  EXPECT_EQ(rank.epochs[1].epoch, 2);
  EXPECT_EQ(rank.epochs[1].samples, 32);
  ASSERT_EQ(rank.steps.size(), 3u);
  EXPECT_EQ(rank.steps[0].samples, 4);
  EXPECT_EQ(rank.steps[2].samples, 16);
}

TEST(RunContext, AGivenTextIsNeverEmptyNorCutAtANulByte) {
  EXPECT_EQ(check_given_text("root", "").error().message,
            "root is empty: give a value or leave it out (None) for the default");
  EXPECT_EQ(check_given_text("experiment", std::string("a\0b", 3)).error().message, "experiment contains a NUL byte");
  EXPECT_TRUE(check_given_text("root", "/tmp/x").ok());
  // Whatever the front-end, a root with a NUL byte would end there: records would land elsewhere.
  ContextOverrides o;
  o.root = std::string("/tmp/a\0/../../b", 15);
  auto detected = detect_run_context(Environment{}, o);
  ASSERT_FALSE(detected.ok());
  EXPECT_EQ(detected.error().message, "root contains a NUL byte");
}

}  // namespace
}  // namespace scaleprof::collect

// Counts read from submitted.jsonl are bounded (issue 30, item 5): one line with "array_tasks": 10^12
// made `slurm status` build a row per task until memory ran out. A count past what a submission writes
// skips its line with a warning; more rows than kMaxSubmittedRows in all is a one-line error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_harness.h"
#include "launch/analysis_jobs.h"
#include "launch/submission.h"
#include "scalability_fixtures.h"
#include "test_paths.h"

namespace scaleprof::launch {
namespace {

namespace fs = std::filesystem;

SubmittedJob job(const std::string& id) {
  SubmittedJob j;
  j.job_id = id;
  j.job_name = "scale";
  j.strategy = "ddp";
  j.nodes = 2;
  j.repetition = 1;
  j.submitted_unix_ns = 1763767200000000000;
  return j;
}

// `line` with the value of "key" replaced by `value` (the number as JSON text).
std::string with(std::string line, const std::string& key, const std::string& value) {
  const std::string at = "\"" + key + "\": ";
  const size_t from = line.find(at);
  EXPECT_NE(from, std::string::npos) << key << " in " << line;
  const size_t start = from + at.size();
  const size_t end = line.find_first_of(",}", start);
  return line.replace(start, end - start, value);
}

TEST(SubmittedBounds, CountsPastWhatASubmissionWritesSkipTheirLine) {
  testing::ScratchDir dir("submitted-bounds");
  SubmittedJob array = job("300");
  array.kind = std::string(kShardsKind);
  array.array_tasks = 4;
  const std::string good = submitted_line(job("100"));
  const std::string text = good + with(submitted_line(array), "array_tasks", "1000000000000") +
                           with(submitted_line(job("101")), "nodes", "-1") +
                           with(submitted_line(job("102")), "repetition", "1000000000") +
                           with(submitted_line(job("103")), "submitted_unix_ns", "-5") + submitted_line(array);
  const std::string path = dir.write("submitted.jsonl", text);
  std::vector<std::string> warnings;
  auto read = read_submitted(path, &warnings);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read.value().size(), 2U);
  EXPECT_EQ(read.value()[0].job_id, "100");
  EXPECT_EQ(read.value()[1].array_tasks, 4);
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          path + ":2: array_tasks 1000000000000 is outside 0 to 2000; line skipped",
                          path + ":3: nodes -1 is outside 0 to 100000; line skipped",
                          path + ":4: repetition 1000000000 is outside 0 to 1000000; line skipped",
                          path + ":5: submitted_unix_ns -5 is outside 0 to 9223372036854775807; line skipped",
                      }));
  // What slurm status shows: the job and the 4 tasks of the array that was recorded whole.
  EXPECT_EQ(expand_array_tasks(read.value()).size(), 5U);
}

// Each line within bounds, but together more rows than `slurm status` shows: one line naming the file
// and the line where the bound was passed, nothing half-read.
TEST(SubmittedBounds, TooManyRowsInAllIsOneLineError) {
  testing::ScratchDir dir("submitted-rows");
  SubmittedJob array = job("1");
  array.kind = std::string(kShardsKind);
  array.array_tasks = kMaxRecordedArrayTasks;
  std::string text;
  const size_t lines = kMaxSubmittedRows / static_cast<size_t>(kMaxRecordedArrayTasks) + 1;
  for (size_t i = 0; i < lines; ++i) {
    array.job_id = std::to_string(1000 + i);
    text += submitted_line(array);
  }
  const std::string path = dir.write("submitted.jsonl", text);
  std::vector<std::string> warnings;
  auto read = read_submitted(path, &warnings);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().kind, ErrorKind::kTooLarge);
  EXPECT_EQ(read.error().message, path + ":" + std::to_string(lines) +
                                      ": more than 200000 jobs and array tasks recorded; not read (move old records "
                                      "away)");
  // One line fewer is read whole.
  const std::string fits = dir.write("fits.jsonl", text.substr(0, text.rfind('{')));
  auto whole = read_submitted(fits, &warnings);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(expand_array_tasks(whole.value()).size(), kMaxSubmittedRows);
}

// The CLI: `slurm status` over the hostile line prints the warning and the rows it can, at once (no
// SLURM client on PATH: every state unknown), instead of growing until memory ran out.
TEST(SubmittedBounds, SlurmStatusOverAHugeArrayCountWarnsAndEnds) {
  testing::ScratchDir dir("submitted-cli");
  SubmittedJob array = job("300");
  array.kind = std::string(kShardsKind);
  array.array_tasks = 3;
  dir.write(
      "s/submitted.jsonl",
      submitted_line(job("100")) + with(submitted_line(array), "array_tasks", "1000000000000") + submitted_line(array));
  const fs::path empty = fs::path(dir.path()) / "bin";
  fs::create_directories(empty);
  // timeout(1) by its path: with this PATH the shell could not find it. Before the bound the run
  // grew until memory ran out (or this timeout ended it).
  const auto run = testing::run_shell("cd '" + dir.path() + "' && PATH=" + empty.string() + " /usr/bin/timeout 60 " +
                                      SCALEPROF_CLI_PATH + " slurm status --script-dir s --format csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("s/submitted.jsonl:2: array_tasks 1000000000000 is outside 0 to 2000; line skipped"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.out.find("\n300_2,"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("\n300_3,"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace scaleprof::launch

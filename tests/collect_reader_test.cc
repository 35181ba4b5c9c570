// Reading run directories back: torn last lines, bad lines, missing files, derived status, listing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/gpu_energy.h"
#include "collect_test_util.h"
#include "importers/run_reader.h"

namespace scaleprof::collect {
namespace {

using testing::TempDir;

std::string rank_json(int rank, const std::string& status, int64_t pid = 1, const std::string& host = "elsewhere") {
  return "{\"schema_version\": 1, \"rank\": " + std::to_string(rank) + ", \"world_size\": 2, \"host\": \"" + host +
         "\", \"pid\": " + std::to_string(pid) + ", \"status\": \"" + status +
         "\", \"strategy\": \"ddp\", \"start_unix_ns\": 1000}\n";
}

TEST(ReadCsv, TornLastLineIsSkippedAndReportedWithFileAndLine) {
  TempDir dir("torn");
  std::string path = dir.write("epochs.csv",
                               "epoch,start_unix_ns,end_unix_ns,duration_s,samples\n"
                               "0,1,2,1.5,10\n"
                               "1,3,4,2.5,\n"
                               "2,5,6,3");
  std::vector<std::string> warnings;
  auto t = importers::read_csv(path, &warnings);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t.value().rows.size(), 2u);
  EXPECT_EQ(t.value().line_numbers, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.value().column("duration_s"), 3);
  EXPECT_EQ(t.value().column("nope"), -1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], path + ":4: torn last line (the writer stopped mid-record)");
}

// Issue 7: spreadsheet programs save CSV with a UTF-8 byte order mark; the first column is still found.
TEST(ReadCsv, AByteOrderMarkIsAccepted) {
  TempDir dir("bom");
  dir.write("e/r/rank-00000/rank.json", "{\"rank\": 0, \"world_size\": 1, \"status\": \"completed\"}\n");
  dir.write("e/r/rank-00000/epochs.csv",
            "\xEF\xBB\xBF"
            "epoch,start_unix_ns,end_unix_ns,duration_s,samples\n0,1,2,1.5,10\n1,3,4,2.5,10\n");
  dir.write("e/r/rank-00000/gpu.csv",
            "\xEF\xBB\xBF"
            "time_unix_ns,device,utilization_pct,power_w,memory_used_bytes,"
            "energy_j\n1000000000,0,50,100,,\n");
  auto run = importers::read_run(dir.file("e/r"));
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run.value().warnings.empty()) << run.value().warnings.front();
  ASSERT_EQ(run.value().ranks[0].epochs.size(), 2u);
  EXPECT_DOUBLE_EQ(run.value().ranks[0].epochs[1].duration_s, 2.5);
  ASSERT_EQ(run.value().ranks[0].gpu.size(), 1u);
  EXPECT_DOUBLE_EQ(*run.value().ranks[0].gpu[0].utilization_pct, 50.0);
  // A file from before the clock columns (issue 33): read, the clock and reasons unknown.
  EXPECT_FALSE(run.value().ranks[0].gpu[0].sm_clock_mhz.has_value());
  EXPECT_FALSE(run.value().ranks[0].gpu[0].throttle_reasons.has_value());
}

TEST(ReadCsv, GpuClockColumnsAreReadAndABadReasonIsUnknown) {
  TempDir dir("clock");
  dir.write("e/r/rank-00000/rank.json", "{\"rank\": 0, \"world_size\": 1, \"status\": \"completed\"}\n");
  dir.write("e/r/rank-00000/gpu.csv", std::string(kGpuHeader) +
                                          "\n1,0,50,100,,,1980,none\n2,0,50,100,,,990,sw_power_cap|hw_slowdown\n"
                                          "3,0,50,100,,,,\n4,0,50,100,,,1410,melted\n");
  auto run = importers::read_run(dir.file("e/r"));
  ASSERT_TRUE(run.ok());
  const auto& gpu = run.value().ranks[0].gpu;
  ASSERT_EQ(gpu.size(), 4u);
  EXPECT_EQ(gpu[0].sm_clock_mhz, 1980);
  EXPECT_EQ(gpu[0].throttle_reasons, uint64_t{0});
  EXPECT_EQ(gpu[1].sm_clock_mhz, 990);
  EXPECT_EQ(gpu[1].throttle_reasons, uint64_t{0xc});
  EXPECT_FALSE(gpu[2].sm_clock_mhz.has_value());
  EXPECT_FALSE(gpu[2].throttle_reasons.has_value());
  EXPECT_EQ(gpu[3].sm_clock_mhz, 1410);
  EXPECT_FALSE(gpu[3].throttle_reasons.has_value());
}

TEST(ReadCsv, WrongFieldCountIsSkippedAndUnknownColumnsKept) {
  TempDir dir("fields");
  std::string path = dir.write("x.csv", "a,b,new_column\n1,2,3\n1,2\n4,5,6\n");
  std::vector<std::string> warnings;
  auto t = importers::read_csv(path, &warnings);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t.value().rows.size(), 2u);
  EXPECT_EQ(t.value().rows[1][2], "6");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], path + ":3: 2 fields where the header has 3; line skipped");
  EXPECT_FALSE(importers::read_csv(dir.file("absent.csv"), &warnings).ok());
}

TEST(ReadRun, ReadsEveryRankAndReportsTheTornLine) {
  TempDir dir("run");
  dir.write("exp/r1/run.json",
            "{\"schema_version\": 1, \"experiment\": \"exp\", \"run\": \"r1\", \"strategy\": \"ddp\", "
            "\"world_size\": 2, \"command\": [\"python\", \"t.py\"], \"status\": \"failed\", \"exit_status\": 137, "
            "\"writer\": \"wrapper\", \"future_field\": {\"x\": [1]}}\n");
  dir.write("exp/r1/rank-00000/rank.json", rank_json(0, "completed"));
  dir.write("exp/r1/rank-00000/epochs.csv",
            "epoch,start_unix_ns,end_unix_ns,duration_s,samples\n0,1,2,1.0,8\n1,3,4,1.0,8\n");
  dir.write("exp/r1/rank-00001/rank.json", rank_json(1, "running"));
  dir.write("exp/r1/rank-00001/epochs.csv", "epoch,start_unix_ns,end_unix_ns,duration_s,samples\n0,1,2,1.0,8\n1,3,4");
  dir.write("exp/r1/rank-00001/traces/b.pt.trace.json.gz", "x");
  dir.write("exp/r1/rank-00001/traces/a.pt.trace.json", "x");
  dir.write("exp/r1/rank-00001/traces/notes.txt", "x");
  dir.write("exp/r1/node-n1/gpu.csv",
            "time_unix_ns,device,utilization_pct,power_w,memory_used_bytes,energy_j\n"
            "0,0,50,100,,\n1000000000,0,70,300,,\n");
  auto run = importers::read_run(dir.file("exp/r1"));
  ASSERT_TRUE(run.ok()) << run.error().message;
  const importers::RunData& r = run.value();
  EXPECT_EQ(r.experiment, "exp");
  EXPECT_EQ(r.run, "r1");
  EXPECT_EQ(r.status, "failed");
  EXPECT_EQ(r.info->exit_status, 137);
  EXPECT_EQ(r.info->command, (std::vector<std::string>{"python", "t.py"}));
  EXPECT_EQ(r.strategy(), "ddp");
  EXPECT_EQ(r.world_size(), 2);
  EXPECT_EQ(r.node_count(), 1);
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].epochs.size(), 2u);
  EXPECT_EQ(r.ranks[1].epochs.size(), 1u);
  EXPECT_EQ(r.epochs_completed(), 1);
  ASSERT_EQ(r.ranks[1].trace_files.size(), 2u);
  EXPECT_NE(r.ranks[1].trace_files[0].find("a.pt.trace.json"), std::string::npos);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            dir.file("exp/r1/rank-00001/epochs.csv") + ":3: torn last line (the writer stopped mid-record)");
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].host, "n1");
  auto gpu = summarize_gpu_samples(r.nodes[0].gpu);
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_DOUBLE_EQ(*gpu[0].mean_utilization_pct, 60.0);
  EXPECT_DOUBLE_EQ(*gpu[0].energy_j, 200.0);  // (100 + 300) / 2 W over 1 s
  EXPECT_FALSE(gpu[0].energy_from_counter);
}

TEST(ReadRun, StatusFromRanksWhenTheWriterIsGone) {
  TempDir dir("status");
  // A pid that certainly exited: a child we reaped.
  pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  importers::ReadOptions here;
  here.local_host = "thishost";
  dir.write("e/gone/rank-00000/rank.json", rank_json(0, "running", child, "thishost"));
  dir.write("e/gone/run.json", "{\"status\": \"running\", \"writer_host\": \"thishost\", \"writer_pid\": " +
                                   std::to_string(child) + "}\n");
  auto gone = importers::read_run(dir.file("e/gone"), here);
  ASSERT_TRUE(gone.ok());
  // Gone without recording an end: interrupted, with whose process it was.
  EXPECT_EQ(gone.value().ranks[0].status, "interrupted");
  EXPECT_EQ(gone.value().status, "interrupted");
  EXPECT_EQ(gone.value().status_reason,
            "the writer of run.json (pid " + std::to_string(child) +
                " on thishost) is gone without recording an end: it was killed (e.g. kill -9) or its node failed");

  dir.write("e/alive/rank-00000/rank.json", rank_json(0, "running", getpid(), "thishost"));
  auto alive = importers::read_run(dir.file("e/alive"), here);
  ASSERT_TRUE(alive.ok());
  EXPECT_EQ(alive.value().status, "running");

  // On another host nobody can tell: still running.
  dir.write("e/remote/rank-00000/rank.json", rank_json(0, "running", child, "otherhost"));
  EXPECT_EQ(importers::read_run(dir.file("e/remote"), here).value().status, "running");

  // World size 2, one rank folder: incomplete.
  dir.write("e/half/rank-00000/rank.json", rank_json(0, "completed"));
  EXPECT_EQ(importers::read_run(dir.file("e/half"), here).value().status, "incomplete");
  dir.write("e/half/rank-00001/rank.json", rank_json(1, "completed"));
  EXPECT_EQ(importers::read_run(dir.file("e/half"), here).value().status, "completed");
  dir.write("e/bad/rank-00000/rank.json", "{\"rank\": ");
  auto bad = importers::read_run(dir.file("e/bad"), here);
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad.value().status, "incomplete");
  ASSERT_FALSE(bad.value().warnings.empty());
  EXPECT_NE(bad.value().warnings[0].text().find("unreadable JSON"), std::string::npos);
}

// Issue 21: ranks launched as one run that never trained together (each in a process group of its own).
TEST(ReadRun, RanksThatNeverFormedOneProcessGroupAreNotDistributed) {
  TempDir dir("pg");
  importers::ReadOptions here;
  here.local_host = "thishost";
  auto with_group = [](int rank, const std::string& group) {
    std::string j = rank_json(rank, "completed");
    return j.substr(0, j.rfind('}')) + group + "}\n";
  };
  auto status = [&](const std::string& run, std::string* reason) {
    auto r = importers::read_run(dir.file("e/" + run), here);
    EXPECT_TRUE(r.ok());
    *reason = r.ok() ? r.value().status_reason : "";
    return r.ok() ? r.value().status : "";
  };
  std::string reason;
  // Both in a group of 2: completed. Nothing noted (the wrapper alone, an older writer): completed.
  for (int r = 0; r < 2; ++r) {
    dir.write("e/together/rank-0000" + std::to_string(r) + "/rank.json",
              with_group(r, ", \"process_group_size\": 2, \"process_group_by\": \"torch.distributed\""));
    dir.write("e/unknown/rank-0000" + std::to_string(r) + "/rank.json", rank_json(r, "completed"));
  }
  EXPECT_EQ(status("together", &reason), "completed");
  EXPECT_EQ(status("unknown", &reason), "completed");
  // Each alone: flagged, with the reason naming the rank.
  for (int r = 0; r < 2; ++r) {
    dir.write("e/alone/rank-0000" + std::to_string(r) + "/rank.json",
              with_group(r, ", \"process_group_size\": 1, \"process_group_by\": \"none\""));
  }
  EXPECT_EQ(status("alone", &reason), "not_distributed");
  EXPECT_EQ(reason,
            "launched as 2 ranks, but the training of rank 0 never joined a process group (neither torch.distributed "
            "nor Horovod was initialised): the ranks trained independently, so this is no 2-rank measurement");
  // One rank in a smaller group (Horovod), and a hostile library name that is not repeated.
  dir.write("e/split/rank-00000/rank.json", rank_json(0, "completed"));
  dir.write("e/split/rank-00001/rank.json",
            with_group(1, ", \"process_group_size\": 3, \"process_group_by\": \"\\u001b[31mevil\""));
  EXPECT_EQ(status("split", &reason), "not_distributed");
  EXPECT_EQ(reason,
            "launched as 2 ranks, but the training of rank 1 ran in a process group of 3 (by an unknown library): the "
            "ranks trained independently, so this is no 2-rank measurement");
  // A failed rank stays failed: that is the first thing to know.
  dir.write("e/alone/rank-00001/rank.json", rank_json(1, "failed"));
  EXPECT_EQ(status("alone", &reason), "failed");
}

TEST(ReadRuns, ListsRunsByExperimentThenStart) {
  TempDir dir("list");
  dir.write("b/late/run.json", "{\"start_unix_ns\": 200, \"status\": \"completed\"}\n");
  dir.write("b/early/run.json", "{\"start_unix_ns\": 100, \"status\": \"completed\"}\n");
  dir.write("a/x/rank-00000/rank.json", rank_json(0, "completed"));
  dir.write("a/not-a-run/notes.txt", "");
  auto all = importers::read_runs(dir.path());
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all.value().size(), 3u);
  EXPECT_EQ(all.value()[0].experiment + "/" + all.value()[0].run, "a/x");
  EXPECT_EQ(all.value()[1].run, "early");
  EXPECT_EQ(all.value()[2].run, "late");
  auto b = importers::read_runs(dir.path(), "b");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.value().size(), 2u);
  auto missing = importers::read_runs(dir.file("nothing"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no such directory"), std::string::npos);
}

TEST(GpuEnergy, TrapezoidUsesRealTimestamps) {
  // Irregular sampling: 0 s, 0.5 s, 2 s. A fixed-interval rectangle rule would be wrong here.
  std::vector<GpuSample> s(3);
  s[0] = {0, 0, 10.0, 100.0, 5, std::nullopt, std::nullopt, std::nullopt};
  s[1] = {500'000'000, 0, 20.0, 200.0, 7, std::nullopt, std::nullopt, std::nullopt};
  s[2] = {2'000'000'000, 0, 30.0, 200.0, 6, std::nullopt, std::nullopt, std::nullopt};
  auto d = summarize_gpu_samples({s[2], s[0], s[1]});  // any order
  ASSERT_EQ(d.size(), 1u);
  EXPECT_DOUBLE_EQ(*d[0].energy_j, 0.5 * 150 + 1.5 * 200);
  EXPECT_DOUBLE_EQ(*d[0].mean_utilization_pct, 20.0);
  EXPECT_EQ(*d[0].max_memory_used_bytes, 7);
  EXPECT_EQ(d[0].samples, 3);
  // With the driver counter on every sample, the counter wins.
  for (int i = 0; i < 3; ++i) s[i].energy_j = 1000.0 * i;
  auto c = summarize_gpu_samples(s);
  EXPECT_DOUBLE_EQ(*c[0].energy_j, 2000.0);
  EXPECT_TRUE(c[0].energy_from_counter);
}

}  // namespace
}  // namespace scaleprof::collect

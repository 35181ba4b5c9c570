// The pure parts of `scaleprof mlflow sync`: the plan of a run directory (names, params, metric
// points), the split into runs/log-batch calls within MLflow's limits, the exact JSON bodies, the
// artifact proxy paths, and the progress record (round trip, atomic replacement, refusal of junk).
// The REST calls themselves are tested against a real server in tests/python/test_mlflow_sync.py.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "collect/run_file.h"
#include "importers/mlflow/mlflow_json.h"
#include "importers/run_reader.h"
#include "mlflow_sync/sync_lock.h"
#include "mlflow_sync/sync_payload.h"
#include "mlflow_sync/sync_plan.h"
#include "mlflow_sync/sync_progress.h"

namespace scaleprof::mlflow_sync {
namespace {

namespace fs = std::filesystem;

std::vector<MetricValue> points(size_t n) {
  std::vector<MetricValue> out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back({"epoch_time_s", 0.5 + static_cast<double>(i), 1'700'000'000'000 + static_cast<int64_t>(i),
                   static_cast<int64_t>(i)});
  }
  return out;
}

TEST(SyncBatches, MetricsSplitAtMlflowsLimitOf1000) {
  const std::vector<std::pair<std::string, std::string>> params = {{"strategy", "ddp"}, {"global_rank", "0"}};
  const auto batches = split_batches(params, {{"scaleprof.rank", "0"}}, points(2500));
  ASSERT_EQ(batches.size(), 3u);
  // Params and tags ride in the first batch; with them it holds 997 points (1000 entities at most).
  EXPECT_EQ(batches[0].params.size(), 2u);
  EXPECT_EQ(batches[0].tags.size(), 1u);
  EXPECT_EQ(batches[0].metrics.size(), 997u);
  EXPECT_EQ(batches[1].metrics.size(), 1000u);
  EXPECT_EQ(batches[2].metrics.size(), 503u);
  // Every point once, in order.
  int64_t step = 0;
  for (const LogBatch& b : batches) {
    for (const MetricValue& m : b.metrics) EXPECT_EQ(m.step, step++);
  }
  EXPECT_EQ(step, 2500);
}

TEST(SyncBatches, ParamsAndTagsAtMostHundredEach) {
  std::vector<std::pair<std::string, std::string>> params, tags;
  for (int i = 0; i < 250; ++i) params.emplace_back("p" + std::to_string(i), "v");
  for (int i = 0; i < 120; ++i) tags.emplace_back("t" + std::to_string(i), "v");
  const auto batches = split_batches(params, tags, points(10));
  size_t p = 0, t = 0, m = 0;
  for (const LogBatch& b : batches) {
    EXPECT_LE(b.params.size(), 100u);
    EXPECT_LE(b.tags.size(), 100u);
    EXPECT_LE(b.params.size() + b.tags.size() + b.metrics.size(), 1000u);
    p += b.params.size();
    t += b.tags.size();
    m += b.metrics.size();
  }
  EXPECT_EQ(p, 250u);
  EXPECT_EQ(t, 120u);
  EXPECT_EQ(m, 10u);
}

TEST(SyncBatches, RequestBytesStayUnderTheLimit) {
  BatchLimits limits;
  limits.max_bytes = 4000;
  std::vector<MetricValue> long_keys = points(200);
  for (MetricValue& m : long_keys) m.key = std::string(60, 'k');
  const auto batches = split_batches({}, {}, long_keys, limits);
  EXPECT_GT(batches.size(), 4u);
  size_t total = 0;
  for (const LogBatch& b : batches) {
    EXPECT_LE(log_batch_json("0123456789abcdef0123456789abcdef", b).size(), limits.max_bytes);
    total += b.metrics.size();
  }
  EXPECT_EQ(total, 200u);
  EXPECT_TRUE(split_batches({}, {}, {}).empty());
}

TEST(SyncPayload, LogBatchJsonIsExactAndValuesReadBack) {
  LogBatch b;
  b.metrics = {{"epoch_time_s", 40.000000001, 1763767300500, 1},
               {"gpu_power_W", 0.1 + 0.2, 5, 0},
               {"x", std::numeric_limits<double>::quiet_NaN(), 6, 2}};
  b.params = {{"strategy", "ddp \"quoted\""}};
  b.tags = {{"scaleprof.rank", "0"}};
  const std::string json = log_batch_json("abc", b);
  EXPECT_EQ(
      json,
      R"({"run_id":"abc","metrics":[{"key":"epoch_time_s","value":40.000000001,"timestamp":1763767300500,"step":1},)"
      R"({"key":"gpu_power_W","value":0.30000000000000004,"timestamp":5,"step":0},)"
      R"({"key":"x","value":"NaN","timestamp":6,"step":2}],)"
      R"("params":[{"key":"strategy","value":"ddp \"quoted\""}],"tags":[{"key":"scaleprof.rank","value":"0"}]})");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS);
  double v = 0;
  ASSERT_EQ(doc["metrics"].at(1)["value"].get_double().get(v), simdjson::SUCCESS);
  EXPECT_EQ(v, 0.1 + 0.2);  // bit for bit
}

TEST(SyncPayload, CreateUpdateAndSearchBodies) {
  RunPlan run;
  run.name = "worker_0 (main)";
  run.start_time_ms = 1763767200000;
  run.end_time_ms = 1763767500000;
  run.status = "FINISHED";
  EXPECT_EQ(create_run_json("7", run, {{"mlflow.parentRunId", "p"}, {kSyncIdTag, "e/r/rank-00000"}}),
            R"j({"experiment_id":"7","run_name":"worker_0 (main)","start_time":1763767200000,"tags":[)j"
            R"({"key":"mlflow.parentRunId","value":"p"},{"key":"scaleprof.sync_id","value":"e/r/rank-00000"}]})");
  EXPECT_EQ(update_run_json("r1", run), R"({"run_id":"r1","status":"FINISHED","end_time":1763767500000})");
  run.end_time_ms = 0;
  EXPECT_EQ(update_run_json("r1", run), R"({"run_id":"r1","status":"FINISHED"})");
  EXPECT_EQ(search_synced_runs_json("7", "tok"),
            R"({"experiment_ids":["7"],"filter":"tags.`scaleprof.sync_id` LIKE '%'","max_results":1000,)"
            R"("run_view_type":"ACTIVE_ONLY","page_token":"tok"})");
}

TEST(SyncPayload, ProxiedArtifactRoot) {
  EXPECT_EQ(proxied_artifact_root("mlflow-artifacts:/1/abc/artifacts"), "1/abc/artifacts");
  EXPECT_EQ(proxied_artifact_root("mlflow-artifacts://127.0.0.1:5000/1/abc/artifacts/"), "1/abc/artifacts");
  EXPECT_EQ(proxied_artifact_root("/srv/mlruns/1/abc/artifacts"), "");
  EXPECT_EQ(proxied_artifact_root("s3://bucket/1/abc"), "");
}

TEST(SyncResponses, CreateRunAndExperiment) {
  auto run = importers::parse_run_response(
      R"({"run":{"info":{"run_id":"r9","run_name":"x","artifact_uri":"mlflow-artifacts:/3/r9/artifacts",)"
      R"("lifecycle_stage":"active"},"data":{"tags":[{"key":"scaleprof.sync_id","value":"e/r"}]}}})",
      "runs/create");
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run.value().run_id, "r9");
  EXPECT_EQ(run.value().artifact_uri, "mlflow-artifacts:/3/r9/artifacts");
  EXPECT_EQ(run.value().tags.at(kSyncIdTag), "e/r");
  EXPECT_FALSE(importers::parse_run_response(R"({"runs":[]})", "runs/create"));
  EXPECT_FALSE(importers::parse_run_response(R"({"run":{"info":{}}})", "runs/create"));
  auto id = importers::parse_create_experiment_response(R"({"experiment_id":"12"})");
  ASSERT_TRUE(id);
  EXPECT_EQ(id.value(), "12");
  EXPECT_FALSE(importers::parse_create_experiment_response("{}"));
}

class SyncFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("scaleprof_sync_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  fs::path dir_;
};

TEST_F(SyncFiles, ProgressRoundTripAndAtomicReplace) {
  SyncProgress p;
  p.server = "http://127.0.0.1:5000";
  p.runs["e/r"] = {"abc", true, false};
  p.runs["e/r/rank-00001"] = {"def\"x", false, false};
  const std::string path = default_progress_path(dir_.string(), "http://user:secret@127.0.0.1:5000/prefix");
  EXPECT_EQ(path, (dir_ / ".scaleprof-sync" / "127.0.0.1_5000.json").string());  // no credentials in the name
  ASSERT_TRUE(save_progress(path, p));
  auto loaded = load_progress(path);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_TRUE(loaded.value().set_aside.empty());
  const SyncProgress& back = loaded.value().progress;
  EXPECT_EQ(back.server, p.server);
  ASSERT_EQ(back.runs.size(), 2u);
  EXPECT_EQ(back.runs.at("e/r").run_id, "abc");
  EXPECT_TRUE(back.runs.at("e/r").metrics_done);
  EXPECT_FALSE(back.runs.at("e/r").complete);
  EXPECT_EQ(back.runs.at("e/r/rank-00001").run_id, "def\"x");
  // Replaced, not appended; no temporary file left beside it.
  p.runs.erase("e/r/rank-00001");
  ASSERT_TRUE(save_progress(path, p));
  EXPECT_EQ(load_progress(path).value().progress.runs.size(), 1u);
  EXPECT_EQ(std::distance(fs::directory_iterator(fs::path(path).parent_path()), fs::directory_iterator()), 1);
  // A missing file is an empty record.
  EXPECT_TRUE(load_progress((dir_ / "none.json").string()).value().progress.runs.empty());
  EXPECT_FALSE(parse_progress("[1]", "x"));
  EXPECT_FALSE(parse_progress("{\"version\":2,\"runs\":{}}", "x"));
}

// A record cut short (a full disk, a kill during a copy) or edited into junk used to stop every sync
// until deleted by hand. It is set aside, every byte kept under a new name, and the sync goes on
// from an empty record (the server is the truth).
TEST_F(SyncFiles, TruncatedOrCorruptProgressIsSetAsideNotDeleted) {
  SyncProgress p;
  p.server = "http://127.0.0.1:5000";
  p.runs["e/r"] = {"abc", true, true};
  const std::string whole = progress_json(p);
  const std::string path = (dir_ / "p.json").string();
  for (const std::string& bad : {whole.substr(0, whole.size() / 2), std::string("{\"version\":1,\"runs\":{\"x\":{}}}"),
                                 std::string("\0\0\0", 3), std::string("{\"version\":9,\"runs\":{}}")}) {
    write(path, bad);
    auto loaded = load_progress(path);
    ASSERT_TRUE(loaded) << loaded.error().message;
    const LoadedProgress& l = loaded.value();
    EXPECT_TRUE(l.progress.runs.empty());
    ASSERT_FALSE(l.set_aside.empty());
    EXPECT_TRUE(l.set_aside.starts_with(path + ".bad-")) << l.set_aside;
    EXPECT_FALSE(fs::exists(path));
    std::ifstream in(l.set_aside, std::ios::binary);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), bad);
    EXPECT_NE(l.problem.find("p.json: not a sync progress file"), std::string::npos) << l.problem;
    EXPECT_NE(l.problem.find("moved to " + l.set_aside), std::string::npos) << l.problem;
  }
  // Four files set aside within the same second or not: four distinct names, none overwritten.
  size_t kept = 0;
  for (const auto& e : fs::directory_iterator(dir_)) kept += e.path().filename().string().starts_with("p.json.bad-");
  EXPECT_EQ(kept, 4u);
  EXPECT_EQ(set_aside_name("/x/p.json", 0, 0), "/x/p.json.bad-19700101T000000Z");
  EXPECT_EQ(set_aside_name("/x/p.json", 0, 2), "/x/p.json.bad-19700101T000000Z-2");
}

// Two syncs of one root and server: the second finds the lock taken (flock locks belong to an open
// file, so a second open in this process conflicts as another process would) and learns who holds it.
TEST_F(SyncFiles, SecondSyncOfOneRootAndServerFindsTheLockHeld) {
  const std::string path = default_lock_path(dir_.string(), "http://u:pw@127.0.0.1:5000");
  EXPECT_EQ(path, (dir_ / ".scaleprof-sync" / "127.0.0.1_5000.lock").string());
  auto first = SyncLock::acquire(path, false);
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_TRUE(first.value().held());
  auto second = SyncLock::acquire(path, false);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_FALSE(second.value().held());
  EXPECT_TRUE(second.value().holder().starts_with("pid " + std::to_string(::getpid()) + " on "))
      << second.value().holder();
  // Another server (or root) is another lock.
  auto other = SyncLock::acquire(default_lock_path(dir_.string(), "http://127.0.0.1:5001"), false);
  ASSERT_TRUE(other);
  EXPECT_TRUE(other.value().held());
  first = SyncLock();  // released: the file is removed with it
  EXPECT_FALSE(fs::exists(path));
  auto third = SyncLock::acquire(path, false);
  ASSERT_TRUE(third);
  EXPECT_TRUE(third.value().held());
  // A sync that failed leaves the root as it found it: no lock file, no empty state folder.
  third.value() = SyncLock();
  other.value() = SyncLock();
  EXPECT_FALSE(fs::exists(dir_ / ".scaleprof-sync"));
  // A link planted at the lock's name is not followed.
  const std::string planted = (dir_ / "planted.lock").string();
  fs::create_symlink(dir_ / "elsewhere", planted);
  auto linked = SyncLock::acquire(planted, false);
  ASSERT_FALSE(linked);
  EXPECT_NE(linked.error().message.find("symbolic link"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "elsewhere"));
}

TEST_F(SyncFiles, PlanOfARecordedRun) {
  const fs::path run = dir_ / "exp" / "run-a";
  write(run / "run.json",
        R"({"schema_version":1,"experiment":"exp","run":"run-a","strategy":"ddp","world_size":2,"status":"completed",)"
        R"("exit_status":0,"start_unix_ns":1763767200000000000,"end_unix_ns":1763767500000000000,"writer":"wrapper"})"
        "\n");
  for (int r = 0; r < 2; ++r) {
    const fs::path rank = run / collect::rank_dir_name(r);
    write(rank / "rank.json",
          "{\"schema_version\":1,\"rank\":" + std::to_string(r) + ",\"local_rank\":0,\"world_size\":2,\"host\":\"n" +
              std::to_string(r) +
              "\",\"status\":\"completed\",\"strategy\":\"ddp\",\"start_unix_ns\":1763767200000000000,"
              "\"end_unix_ns\":1763767400000000000}\n");
    write(rank / "epochs.csv", std::string(collect::kEpochsHeader) +
                                   "\n0,1763767200000000000,1763767260500000000,60.5,100\n"
                                   "1,1763767260500000000,1763767300500000000,40.000000001,\n");
    write(rank / "gpu.csv",
          std::string(collect::kGpuHeader) +
              "\n1763767200000000000,0,50.0,100.000,1000,,,\n1763767201000000000,0,70.0,200.000,1000,,,\n"
              "1763767201000000000,1,10.0,,,,,\n");
  }
  auto data = importers::read_run(run.string());
  ASSERT_TRUE(data) << data.error().message;
  const TrainingPlan plan = plan_training(data.value());
  EXPECT_EQ(plan.parent.sync_id, "exp/run-a");
  EXPECT_EQ(plan.parent.name, "run-a");
  EXPECT_EQ(plan.parent.status, "FINISHED");
  EXPECT_EQ(plan.parent.start_time_ms, 1763767200000);
  EXPECT_EQ(plan.parent.end_time_ms, 1763767500000);
  ASSERT_EQ(plan.workers.size(), 2u);
  EXPECT_EQ(plan.workers[0].name, "worker_0 (main)");
  EXPECT_EQ(plan.workers[1].name, "worker_1");
  EXPECT_EQ(plan.workers[1].sync_id, "exp/run-a/rank-00001");
  std::map<std::string, std::string> params(plan.workers[1].params.begin(), plan.workers[1].params.end());
  EXPECT_EQ(params.at("strategy"), "ddp");
  EXPECT_EQ(params.at("global_rank"), "1");
  EXPECT_EQ(params.at("global_world_size"), "2");
  EXPECT_EQ(params.at("host"), "n1");
  // rank.json has no gpu_interval_ns (recorded before it was kept): the samples' 1 s spacing.
  EXPECT_EQ(params.at("probing_interval"), "1");
  std::map<std::string, std::vector<std::tuple<int64_t, double, int64_t>>> series;
  for (const MetricValue& m : plan.workers[1].metrics) series[m.key].emplace_back(m.step, m.value, m.timestamp_ms);
  using P = std::tuple<int64_t, double, int64_t>;
  // A worker's own epoch times; itwinai's epoch_time_s is on the main worker only.
  EXPECT_EQ(series.at("worker_epoch_time_s"),
            (std::vector<P>{{0, 60.5, 1763767260500}, {1, 40.000000001, 1763767300500}}));
  EXPECT_EQ(series.count("epoch_time_s"), 0u);
  EXPECT_EQ(series.at("epoch_samples"), (std::vector<P>{{0, 100.0, 1763767260500}}));
  EXPECT_EQ(series.at("gpu_utilization_percent"), (std::vector<P>{{0, 50.0, 1763767200000}, {1, 70.0, 1763767201000}}));
  EXPECT_EQ(series.at("gpu_power_W"), (std::vector<P>{{0, 100.0, 1763767200000}, {1, 200.0, 1763767201000}}));
  EXPECT_EQ(series.at("gpu_utilization_percent_dev1"), (std::vector<P>{{0, 10.0, 1763767201000}}));
  EXPECT_EQ(series.count("gpu_energy_J"), 0u);  // empty fields are not logged
  std::set<std::string> artifacts;
  for (const ArtifactFile& a : plan.workers[1].artifacts) artifacts.insert(a.artifact_path);
  EXPECT_EQ(artifacts, (std::set<std::string>{"scaleprof/rank-00001/rank.json", "scaleprof/rank-00001/epochs.csv",
                                              "scaleprof/rank-00001/gpu.csv"}));
  // The same run gives the same plan: what makes a second sync find the same ids and points.
  const TrainingPlan again = plan_training(importers::read_run(run.string()).value());
  EXPECT_EQ(again.workers[1].metrics.size(), plan.workers[1].metrics.size());
  EXPECT_EQ(mlflow_status("failed"), "FAILED");
  EXPECT_EQ(mlflow_status("interrupted"), "KILLED");
}

// itwinai 0.4.2's trainer logs epoch_time_s on the main worker (global rank 0) only, step = epoch;
// its report takes two workers with the metric for a Ray search of two trials ("Ray HPO was used")
// and averages them. The sync logs the training's epoch time there alone: per epoch the slowest
// rank's, the rule of scaleprof's report over the run directory, so both tools print one table.
TEST_F(SyncFiles, EpochTimeIsTheSlowestRanksOnTheMainWorkerOnly) {
  const fs::path run = dir_ / "exp" / "w3";
  const char* durations[3][2] = {{"1.70", "2.00"}, {"1.71", "1.90"}, {"1.69", "2.05"}};
  for (int r = 0; r < 3; ++r) {
    const fs::path rank = run / collect::rank_dir_name(r);
    write(rank / "rank.json", "{\"schema_version\":1,\"rank\":" + std::to_string(r) +
                                  ",\"world_size\":3,\"status\":\"completed\",\"strategy\":\"ddp\"}\n");
    // Rank 2 also has a repeated epoch 0 (a restarted process appending): its first record counts.
    write(rank / "epochs.csv", std::string(collect::kEpochsHeader) + "\n0,0," + std::to_string(1000 + r) + "," +
                                   durations[r][0] + ",\n1,0," + std::to_string(3000 + r) + "," + durations[r][1] +
                                   ",\n" + (r == 2 ? "0,0,9000,9.5,\n" : ""));
  }
  auto data = importers::read_run(run.string());
  ASSERT_TRUE(data) << data.error().message;
  const TrainingPlan plan = plan_training(data.value());
  ASSERT_EQ(plan.workers.size(), 3u);
  auto points = [](const RunPlan& p, const std::string& key) {
    std::vector<std::tuple<int64_t, double, int64_t>> out;
    for (const MetricValue& m : p.metrics) {
      if (m.key == key) out.emplace_back(m.step, m.value, m.timestamp_ms);
    }
    return out;
  };
  using P = std::tuple<int64_t, double, int64_t>;
  // Epoch 0: rank 1's 1.71 s (ended at 1001 ns -> 0 ms); epoch 1: rank 2's 2.05 s.
  EXPECT_EQ(points(plan.workers[0], "epoch_time_s"), (std::vector<P>{{0, 1.71, 0}, {1, 2.05, 0}}));
  EXPECT_TRUE(points(plan.workers[1], "epoch_time_s").empty());
  EXPECT_TRUE(points(plan.workers[2], "epoch_time_s").empty());
  EXPECT_TRUE(points(plan.parent, "epoch_time_s").empty());
  EXPECT_EQ(points(plan.workers[1], "worker_epoch_time_s"), (std::vector<P>{{0, 1.71, 0}, {1, 1.90, 0}}));
  EXPECT_EQ(points(plan.workers[2], "worker_epoch_time_s").size(), 3u);  // every record kept as recorded
}

// Two run folders whose run.json name one run: two runs for `scaleprof runs` and the report, so two
// runs on the server. The identity is the folder, not the name.
TEST_F(SyncFiles, TwoFoldersWithOneRunNameAreTwoSyncIds) {
  for (const char* folder : {"same", "same-copy"}) {
    write(dir_ / "exp" / folder / "run.json",
          R"({"schema_version":1,"experiment":"exp","run":"same","strategy":"ddp","world_size":1,"status":"completed"})"
          "\n");
    write(dir_ / "exp" / folder / "rank-00000" / "rank.json",
          "{\"schema_version\":1,\"rank\":0,\"world_size\":1,\"status\":\"completed\"}\n");
  }
  auto runs = importers::read_runs(dir_.string());
  ASSERT_TRUE(runs) << runs.error().message;
  ASSERT_EQ(runs.value().size(), 2u);
  std::set<std::string> ids;
  for (const importers::RunData& r : runs.value()) {
    const TrainingPlan plan = plan_training(r);
    EXPECT_EQ(plan.parent.name, "same");
    ids.insert(plan.parent.sync_id);
    ids.insert(plan.workers.at(0).sync_id);
  }
  EXPECT_EQ(ids,
            (std::set<std::string>{"exp/same", "exp/same/rank-00000", "exp/same-copy", "exp/same-copy/rank-00000"}));
}

// A member of the run folder's group plants links to a colleague's files: nothing below the run
// folder is followed, each link is one warning naming it, and the plan uploads none of them.
TEST_F(SyncFiles, SymbolicLinksBelowARunFolderAreNotFollowed) {
  const fs::path secret = dir_ / "home" / ".netrc";
  write(secret, "machine example.org login alice password s3cr3t\n");
  write(dir_ / "home" / "trace.pt.trace.json", "{\"traceEvents\":[]}\n");
  write(dir_ / "home" / "rank-00005" / "rank.json", "{\"schema_version\":1,\"rank\":5,\"status\":\"completed\"}\n");
  const fs::path run = dir_ / "root" / "exp" / "r";
  write(run / "run.json", R"({"schema_version":1,"experiment":"exp","run":"r","world_size":1,"status":"completed"})"
                          "\n");
  const fs::path rank = run / "rank-00000";
  write(rank / "rank.json", "{\"schema_version\":1,\"rank\":0,\"world_size\":1,\"status\":\"completed\"}\n");
  write(rank / "epochs.csv", std::string(collect::kEpochsHeader) + "\n0,0,1000,1.5,\n");
  fs::create_symlink(secret, rank / "gpu.csv");
  fs::create_symlink(secret, rank / "steps.csv");
  fs::create_directories(rank / "traces");
  fs::create_symlink(dir_ / "home" / "trace.pt.trace.json", rank / "traces" / "stolen.pt.trace.json");
  fs::create_symlink(dir_ / "home" / "rank-00005", run / "rank-00005");
  fs::create_directories(run / "node-n1");
  fs::create_symlink(secret, run / "node-n1" / "gpu.csv");
  auto data = importers::read_run(run.string());
  ASSERT_TRUE(data) << data.error().message;
  const importers::RunData& d = data.value();
  ASSERT_EQ(d.ranks.size(), 1u);  // the linked rank-00005 folder is not walked
  EXPECT_TRUE(d.ranks[0].trace_files.empty());
  EXPECT_TRUE(d.ranks[0].gpu.empty());
  EXPECT_EQ(d.ranks[0].epochs.size(), 1u);
  for (const fs::path& link : {rank / "gpu.csv", rank / "steps.csv", rank / "traces" / "stolen.pt.trace.json",
                               run / "rank-00005", run / "node-n1" / "gpu.csv"}) {
    const std::string want = link.string() + ": a symbolic link; not followed (skipped)";
    EXPECT_NE(std::find(d.warnings.begin(), d.warnings.end(), want), d.warnings.end()) << want;
  }
  const TrainingPlan plan = plan_training(d);
  std::vector<std::string> uploaded;
  for (const RunPlan* p : {&plan.parent, &plan.workers[0]}) {
    for (const ArtifactFile& a : p->artifacts) uploaded.push_back(a.local_path);
  }
  for (const std::string& path : uploaded) {
    EXPECT_FALSE(fs::is_symlink(path)) << path;
  }
  EXPECT_EQ(uploaded.size(), 3u);  // run.json, rank.json, epochs.csv
  EXPECT_FALSE(plan.workers[0].profiling);
  // The opener itself: a link is refused even when it points at a regular file; the file is not.
  auto linked = collect::open_run_file((rank / "gpu.csv").string());
  ASSERT_FALSE(linked);
  EXPECT_EQ(linked.error().message, (rank / "gpu.csv").string() + ": a symbolic link; not followed (skipped)");
  EXPECT_TRUE(collect::open_run_file((rank / "epochs.csv").string()));
  ::mkfifo((rank / "fifo.csv").c_str(), 0600);
  auto fifo = collect::open_run_file((rank / "fifo.csv").string());  // returns at once, refused
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().message.find("not a regular file"), std::string::npos);
}

TEST(SyncPlanDigest, StableAndChangesWithWhatIsSent) {
  TrainingPlan plan;
  plan.experiment = "e";
  plan.parent.sync_id = "e/r";
  plan.parent.name = "r";
  plan.workers.push_back({});
  plan.workers[0].sync_id = "e/r/rank-00000";
  plan.workers[0].metrics = {{"epoch_time_s", 1.5, 10, 0}};
  const std::string d = plan_digest(plan);
  EXPECT_EQ(d.size(), 16u);
  EXPECT_EQ(plan_digest(plan), d);
  TrainingPlan more = plan;
  more.workers[0].metrics.push_back({"epoch_time_s", 1.25, 11, 1});
  EXPECT_NE(plan_digest(more), d);
  TrainingPlan other_value = plan;
  other_value.workers[0].metrics[0].value = std::nextafter(1.5, 2.0);  // one ulp
  EXPECT_NE(plan_digest(other_value), d);
  EXPECT_EQ(metric_points(more), 2);
}

TEST(SyncPayload, SearchForOneSyncId) {
  EXPECT_EQ(search_sync_id_json("7", "cnn/ddp-w2"),
            R"({"experiment_ids":["7"],"filter":"tags.`scaleprof.sync_id` = 'cnn/ddp-w2'","max_results":100,)"
            R"("run_view_type":"ACTIVE_ONLY"})");
  EXPECT_EQ(search_sync_id_json("7", "it's"), "");  // cannot be quoted: the whole search is used
}

TEST_F(SyncFiles, RequeuedAttemptIsARunOfItsOwn) {
  const fs::path run = dir_ / "exp" / "job-7";
  auto rank = [&](const fs::path& dir, const char* status, int64_t attempt) {
    write(dir / "rank-00000" / "rank.json",
          "{\"schema_version\":1,\"rank\":0,\"world_size\":1,\"status\":\"" + std::string(status) +
              "\",\"strategy\":\"ddp\",\"attempt\":" + std::to_string(attempt) + "}\n");
    write(dir / "rank-00000" / "epochs.csv", std::string(collect::kEpochsHeader) + "\n0,1,2,1.5,\n");
  };
  rank(run, "failed", 0);
  rank(run / "attempt-1", "completed", 1);
  auto data = importers::read_run(run.string());
  ASSERT_TRUE(data) << data.error().message;
  ASSERT_EQ(data.value().attempt, 1);
  const TrainingPlan plan = plan_training(data.value());
  EXPECT_EQ(plan.parent.sync_id, "exp/job-7/attempt-1");
  EXPECT_EQ(plan.parent.name, "job-7");
  ASSERT_EQ(plan.workers.size(), 1u);
  EXPECT_EQ(plan.workers[0].sync_id, "exp/job-7/attempt-1/rank-00000");
  EXPECT_EQ(plan.workers[0].status, "FINISHED");
}

}  // namespace
}  // namespace scaleprof::mlflow_sync

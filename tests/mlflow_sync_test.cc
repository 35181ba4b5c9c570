// The pure parts of `scaleprof mlflow sync`: the plan of a run directory (names, params, metric
// points), the split into runs/log-batch calls within MLflow's limits, the exact JSON bodies, the
// artifact proxy paths, and the progress record (round trip, atomic replacement, refusal of junk).
// The REST calls themselves are tested against a real server in tests/python/test_mlflow_sync.py.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "collect/run_reader.h"
#include "importers/mlflow_json.h"
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
  auto back = load_progress(path);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back.value().server, p.server);
  ASSERT_EQ(back.value().runs.size(), 2u);
  EXPECT_EQ(back.value().runs.at("e/r").run_id, "abc");
  EXPECT_TRUE(back.value().runs.at("e/r").metrics_done);
  EXPECT_FALSE(back.value().runs.at("e/r").complete);
  EXPECT_EQ(back.value().runs.at("e/r/rank-00001").run_id, "def\"x");
  // Replaced, not appended; no temporary file left beside it.
  p.runs.erase("e/r/rank-00001");
  ASSERT_TRUE(save_progress(path, p));
  EXPECT_EQ(load_progress(path).value().runs.size(), 1u);
  EXPECT_EQ(std::distance(fs::directory_iterator(fs::path(path).parent_path()), fs::directory_iterator()), 1);
  // A missing file is an empty record; junk is an error naming the file.
  EXPECT_TRUE(load_progress((dir_ / "none.json").string()).value().runs.empty());
  write(dir_ / "junk.json", "{\"version\":1,\"runs\":{\"x\":{}}}");
  auto junk = load_progress((dir_ / "junk.json").string());
  ASSERT_FALSE(junk);
  EXPECT_NE(junk.error().message.find("junk.json: not a sync progress file"), std::string::npos);
  EXPECT_FALSE(parse_progress("[1]", "x"));
  EXPECT_FALSE(parse_progress("{\"version\":2,\"runs\":{}}", "x"));
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
    write(rank / "gpu.csv", std::string(collect::kGpuHeader) +
                                "\n1763767200000000000,0,50.0,100.000,1000,\n1763767201000000000,0,70.0,200.000,1000,\n"
                                "1763767201000000000,1,10.0,,,\n");
  }
  auto data = collect::read_run(run.string());
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
  EXPECT_EQ(series.at("epoch_time_s"), (std::vector<P>{{0, 60.5, 1763767260500}, {1, 40.000000001, 1763767300500}}));
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
  const TrainingPlan again = plan_training(collect::read_run(run.string()).value());
  EXPECT_EQ(again.workers[1].metrics.size(), plan.workers[1].metrics.size());
  EXPECT_EQ(mlflow_status("failed"), "FAILED");
  EXPECT_EQ(mlflow_status("interrupted"), "KILLED");
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
  auto data = collect::read_run(run.string());
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

// MLflow's formats as scaleprof parses them: REST JSON responses, the file store's meta.yaml and
// metric files, tracking URIs, and the importer's discovery on a file store written here in MLflow's
// layout (the Python tests do the same against stores MLflow itself wrote).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "importers/mlflow/mlflow_http.h"
#include "importers/mlflow/mlflow_importer.h"
#include "importers/mlflow/mlflow_json.h"
#include "importers/mlflow/mlflow_meta.h"
#include "importers/mlflow/mlflow_store.h"

namespace scaleprof::importers {
namespace {

namespace fs = std::filesystem;

TEST(MlflowJson, SearchRunsPageWithNestedRun) {
  const char* body = R"json({"runs":[
    {"info":{"run_id":"w0","run_name":"worker_0 (main)","status":"FINISHED",
             "artifact_uri":"mlflow-artifacts:/1/w0/artifacts","lifecycle_stage":"active"},
     "data":{"metrics":[{"key":"gpu_power_W","value":1,"timestamp":1,"step":0},
                        {"key":"epoch_time_s","value":2.5,"timestamp":2,"step":1}],
             "params":[{"key":"strategy","value":"ddp"},{"key":"global_world_size","value":"4"}],
             "tags":[{"key":"mlflow.parentRunId","value":"top"}]}},
    {"info":{"run_id":"gone","lifecycle_stage":"deleted"}}],
  "next_page_token":"abc=="})json";
  auto page = parse_search_runs_response(body);
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(page.value().runs.size(), 1u);
  const MlflowRun& r = page.value().runs[0];
  EXPECT_EQ(r.run_id, "w0");
  EXPECT_EQ(r.name, "worker_0 (main)");
  EXPECT_EQ(r.parent_id, "top");
  EXPECT_EQ(r.params.at("global_world_size"), "4");
  EXPECT_EQ(r.metric_keys, (std::vector<std::string>{"epoch_time_s", "gpu_power_W"}));
  EXPECT_EQ(page.value().next_page_token, "abc==");
  // No runs at all: MLflow leaves the field out.
  auto empty = parse_search_runs_response("{}");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty.value().runs.empty());
  EXPECT_FALSE(parse_search_runs_response(R"json({"runs":[{"data":{}}]})json").ok());
  EXPECT_FALSE(parse_search_runs_response("[1,2").ok());
}

TEST(MlflowJson, MetricHistoryNumbersAsStringsAndNaN) {
  auto page = parse_metric_history_response(
      R"({"metrics":[{"key":"k","value":"NaN","timestamp":"1700000000000","step":"3"},{"key":"k","value":-2,"timestamp":5}]})");
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(page.value().points.size(), 2u);
  EXPECT_TRUE(std::isnan(page.value().points[0].value));
  EXPECT_EQ(page.value().points[0].timestamp_ms, 1700000000000);
  EXPECT_EQ(page.value().points[0].step, 3);
  EXPECT_EQ(page.value().points[1].value, -2.0);
  EXPECT_EQ(page.value().points[1].step, 0);  // proto3 JSON leaves zero out
  EXPECT_FALSE(parse_metric_history_response(R"({"metrics":[{"key":"k","value":"x"}]})").ok());
}

TEST(MlflowJson, ErrorBodyIsOneLine) {
  EXPECT_EQ(parse_error_response(R"({"error_code":"INTERNAL_ERROR","message":"boom\nTraceback..."})"),
            "INTERNAL_ERROR: boom");
  EXPECT_EQ(parse_error_response("<html>500</html>"), "");
}

TEST(MlflowMeta, QuotedScalarsAndMetricLines) {
  auto meta = parse_mlflow_meta(
      "artifact_uri: file:///a/b\nexperiment_id: '1'\nrun_name: 'it''s \"x\"'\n"
      "name: \"a\\tb\"\ntags: []\n  nested: skipped\n",
      "meta.yaml");
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta.value().at("experiment_id"), "1");
  EXPECT_EQ(meta.value().at("run_name"), "it's \"x\"");
  EXPECT_EQ(meta.value().at("name"), "a\tb");
  EXPECT_EQ(meta.value().count("tags"), 0u);
  EXPECT_EQ(meta.value().count("nested"), 0u);
  auto bad = parse_mlflow_meta("ok: 1\nname: 'open\n", "m.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "m.yaml:2: unterminated quoted value of 'name'");

  auto file = parse_mlflow_metric_file("1700000000000 1.5 0\n1700000001000 nan 1\n17 3\n", "metrics/x");
  ASSERT_TRUE(file.ok());
  const std::vector<MetricPoint>& points = file.value().points;
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].value, 1.5);
  EXPECT_TRUE(std::isnan(points[1].value));
  EXPECT_EQ(points[2].step, 0);
  EXPECT_TRUE(file.value().problems.empty());
  // A bad line costs that line only; after five messages, one line counts the rest.
  auto torn = parse_mlflow_metric_file("1 2 3\n4 five 6\n7 8 9\n", "metrics/y");
  ASSERT_TRUE(torn.ok());
  EXPECT_EQ(torn.value().points.size(), 2u);
  EXPECT_EQ(torn.value().problems,
            (std::vector<std::string>{"metrics/y:2: expected 'timestamp value step'; line skipped"}));
  std::string garbage;
  for (int i = 0; i < 8; ++i) garbage += "x\n";
  auto many = parse_mlflow_metric_file(garbage, "m");
  ASSERT_TRUE(many.ok());
  ASSERT_EQ(many.value().problems.size(), 6u);
  EXPECT_EQ(many.value().problems[5], "m: 3 more malformed line(s) skipped");
  // A metric is read whole or not at all.
  auto capped = parse_mlflow_metric_file("1 2 3\n4 5 6\n", "m", 1);
  ASSERT_FALSE(capped.ok());
  EXPECT_EQ(capped.error().message, "m: more than 1 points; metric not read");
}

TEST(MlflowUri, KindsAndRedaction) {
  auto s = parse_tracking_uri("http://127.0.0.1:5000/");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.value().kind, TrackingKind::kServer);
  EXPECT_EQ(s.value().location, "http://127.0.0.1:5000");
  auto db = parse_tracking_uri("sqlite:////abs/my%20db.db");
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(db.value().kind, TrackingKind::kSqlite);
  EXPECT_EQ(db.value().location, "/abs/my db.db");
  auto rel = parse_tracking_uri("sqlite:///mlflow.db");
  ASSERT_TRUE(rel.ok());
  EXPECT_EQ(rel.value().location, "mlflow.db");
  auto file = parse_tracking_uri("file:///work/mllogs/mlflow");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file.value().kind, TrackingKind::kFileStore);
  EXPECT_EQ(file.value().location, "/work/mllogs/mlflow");
  EXPECT_EQ(parse_tracking_uri("mllogs/mlflow").value().location, "mllogs/mlflow");
  EXPECT_FALSE(parse_tracking_uri("databricks://profile").ok());
  EXPECT_FALSE(parse_tracking_uri("file://otherhost/x").ok());
  EXPECT_EQ(redact_url("https://alice:secret@mlflow.example:443/path"), "https://mlflow.example:443/path");
  EXPECT_EQ(redact_url("http://127.0.0.1:5000"), "http://127.0.0.1:5000");
  // Artifact paths never leave the run's folder.
  EXPECT_FALSE(read_local_artifact("file:///tmp", "../etc/passwd").ok());
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A file store in MLflow's layout: train run -> worker_0 (main) with epoch times and GPU samples.
TEST(MlflowImporter, FileStoreTrainRunWithWorker) {
  const fs::path root = fs::temp_directory_path() / "scaleprof-mlflow-importer-test";
  fs::remove_all(root);
  write(root / "7/meta.yaml", "experiment_id: '7'\nlifecycle_stage: active\nname: exp\n");
  write(root / "7/top/meta.yaml", "run_id: top\nrun_name: train\nstatus: 3\nlifecycle_stage: active\n");
  const fs::path w = root / "7/w0";
  write(w / "meta.yaml", "run_id: w0\nrun_name: worker_0 (main)\nstatus: 3\nlifecycle_stage: active\nartifact_uri: " +
                             (w / "artifacts").string() + "\n");
  write(w / "tags/mlflow.parentRunId", "top");
  write(w / "params/strategy", "ddp");
  write(w / "params/global_world_size", "1");
  write(w / "params/global_rank", "0");
  write(w / "params/probing_interval", "2");
  write(w / "metrics/epoch_time_s", "1000 5 0\n2000 3 1\n3000 3 2\n");
  write(w / "metrics/gpu_power_W", "1000 100 0\n3000 50 1\n");
  write(w / "metrics/gpu_utilization_percent", "1000 40 0\n3000 60 1\n");
  write(w / "artifacts/torch_profiling_averages/torch_profiling_averages.csv",
        "name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,global_rank\n"
        "aten::mm,0,300,300,300us,1,ddp,1,0\nProfilerStep#2,0,100,100,100us,1,ddp,1,0\nother,0,100,1,1,1,ddp,1,0\n");
  // A deleted run is not read.
  write(root / "7/dead/meta.yaml", "run_id: dead\nrun_name: train\nlifecycle_stage: deleted\n");

  MlflowReadOptions options;
  options.tracking_uri = "file://" + root.string();
  options.experiment_name = "exp";
  auto data = read_mlflow_data(options);
  ASSERT_TRUE(data.ok()) << data.error().message;
  ASSERT_EQ(data.value().runs.size(), 1u);
  const tables::RunData& r = data.value().runs[0];
  EXPECT_EQ(r.name, "train");
  EXPECT_EQ(r.strategy, "ddp");
  EXPECT_EQ(r.workers, 1);
  EXPECT_EQ(r.status, "completed");
  ASSERT_EQ(r.epochs.size(), 3u);
  EXPECT_EQ(r.epochs[0].seconds, 5.0);
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].probing_interval_s, 2.0);
  EXPECT_EQ(r.gpus[0].power_w, (std::vector<double>{100, 50}));
  EXPECT_EQ(r.gpus[0].time_s, (std::vector<double>{0, 2}));
  ASSERT_TRUE(r.computation.has_value());
  EXPECT_EQ(r.computation->total_ns, 500000);
  EXPECT_EQ(r.computation->computation_ns, 300000);
  EXPECT_EQ(r.computation->profiler_step_ns, 100000);
  EXPECT_TRUE(data.value().errors.empty());

  options.experiment_name = "missing";
  auto none = read_mlflow_data(options);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("Experiment 'missing' does not exist in MLflow"), std::string::npos);
  fs::remove_all(root);
}

}  // namespace
}  // namespace scaleprof::importers

// The MLflow readers under hostile or broken stores (issue 18, findings 3, 10, 13, 16, 22): every bad
// item is skipped and named, the rest is reported; no symbolic link below the store's root is
// followed; every read is capped; a SQLite file's objects must be real tables and every query has a
// deadline; MLflow values get the checks the CSV readers apply (importers/value_checks.h).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/file_below.h"
#include "importers/mlflow/mlflow_importer.h"
#include "importers/mlflow/mlflow_meta.h"
#include "importers/mlflow/mlflow_store.h"
#include "importers/run_data_reader.h"
#include "mlflow_test_util.h"
#include "scratch_dir.h"

namespace scaleprof::importers {
namespace {

namespace fs = std::filesystem;

using Scratch = ::scaleprof::testing::ScratchDir;
using ::scaleprof::testing::any_contains;
using ::scaleprof::testing::exec;
using ::scaleprof::testing::joined;

const tables::RunData* run_named(const tables::ScalabilityData& d, const std::string& name) {
  for (const tables::RunData& r : d.runs) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

constexpr const char* kProfilingHeader =
    "name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,global_rank";

// One itwinai-shaped top-level run that is its own worker, in MLflow's file store layout.
void file_run(const Scratch& s, const std::string& id, const std::string& name, const std::string& epochs,
              const std::string& artifact_uri = "") {
  const std::string d = "1/" + id;
  s.write(d + "/meta.yaml", "run_id: " + id + "\nrun_name: " + name + "\nstatus: 3\nlifecycle_stage: active\n" +
                                (artifact_uri.empty() ? "" : "artifact_uri: " + artifact_uri + "\n"));
  s.write(d + "/params/strategy", "ddp");
  s.write(d + "/params/global_world_size", "1");
  s.write(d + "/metrics/epoch_time_s", epochs);
}

Result<tables::ScalabilityData> read_store(MlflowStore& store) {
  MlflowReadOptions options;
  options.experiment_name = "exp";
  return read_mlflow_runs(store, options);
}

Result<tables::ScalabilityData> read_file_store(const Scratch& s, const MlflowReadLimits& limits = {}) {
  auto store = open_mlflow_file_store(s.dir().string(), limits);
  if (!store) return store.error();
  return read_store(*store.value());
}

// Finding 13: a garbage metric line, an unterminated quote in meta.yaml, an int64-overflowing
// timestamp each cost only that line or run; the report has the rest, and errors name each.
TEST(MlflowFileStoreHardening, BadItemsAreSkippedAndNamed) {
  Scratch s("bad-items");
  s.write("1/meta.yaml", "experiment_id: '1'\nname: exp\nlifecycle_stage: active\n");
  file_run(s, "a", "good", "1000 10 0\n2000 8 1\n");
  file_run(s, "b", "garbage", "1000 10 0\nthis is not a metric line\n99999999999999999999 7 2\n3000 6 3\n");
  file_run(s, "c", "quote", "1000 1 0\n");
  s.write("1/c/meta.yaml", "run_id: c\nrun_name: 'open\nstatus: 3\n");
  auto data = read_file_store(s);
  ASSERT_TRUE(data.ok()) << data.error().message;
  const tables::ScalabilityData& d = data.value();
  ASSERT_NE(run_named(d, "good"), nullptr);
  const tables::RunData* garbage = run_named(d, "garbage");
  ASSERT_NE(garbage, nullptr);
  ASSERT_EQ(garbage->epochs.size(), 2u);  // steps 0 and 3
  EXPECT_EQ(garbage->epochs[1].epoch, 3);
  EXPECT_EQ(garbage->epochs[1].seconds, 6.0);
  EXPECT_EQ(run_named(d, "quote"), nullptr);
  const std::string metric = (s.dir() / "1/b/metrics/epoch_time_s").string();
  EXPECT_TRUE(any_contains(d.errors, metric + ":2: expected 'timestamp value step'; line skipped")) << joined(d.errors);
  EXPECT_TRUE(any_contains(d.errors, metric + ":3: expected 'timestamp value step'; line skipped")) << joined(d.errors);
  EXPECT_TRUE(any_contains(d.errors, (s.dir() / "1/c/meta.yaml").string() + ":2: unterminated quoted value"))
      << joined(d.errors);
  EXPECT_EQ(d.errors.size(), 3u) << joined(d.errors);
}

// Finding 13: no symbolic link below the store's root is followed; a link's target never reaches
// the report, a linked folder is never walked.
TEST(MlflowFileStoreHardening, SymlinksBelowTheRootAreNotFollowed) {
  Scratch s("symlinks");
  Scratch outside("symlinks-outside");
  const fs::path secret = outside.write("secret.txt", "TOP-SECRET-TOKEN");
  outside.write("params/strategy", "ddp-from-elsewhere");
  outside.write("params/global_world_size", "1");
  s.write("1/meta.yaml", "experiment_id: '1'\nname: exp\n");
  file_run(s, "a", "linked-param", "1000 10 0\n");
  fs::remove(s.dir() / "1/a/params/strategy");
  fs::create_symlink(secret, s.dir() / "1/a/params/strategy");
  file_run(s, "b", "linked-folder", "1000 10 0\n");
  fs::remove_all(s.dir() / "1/b/params");
  fs::create_directory_symlink(outside.dir() / "params", s.dir() / "1/b/params");
  file_run(s, "c", "linked-metric", "1000 10 0\n");
  s.write("1/c/metrics/gpu_power_W", "");
  fs::remove(s.dir() / "1/c/metrics/gpu_power_W");
  fs::create_symlink(secret, s.dir() / "1/c/metrics/gpu_power_W");
  file_run(s, "d", "linked-artifacts", "1000 10 0\n", (s.dir() / "1/d/artifacts").string());
  fs::create_directory_symlink(outside.dir(), s.dir() / "1/d/artifacts");
  outside.write("torch_profiling_averages/torch_profiling_averages.csv",
                std::string(kProfilingHeader) + "\naten::mm,0,300,300,300us,1,ddp,1,0\n");
  fs::create_directory_symlink(outside.dir(), s.dir() / "1/e");  // a linked run folder

  auto data = read_file_store(s);
  ASSERT_TRUE(data.ok()) << data.error().message;
  const tables::ScalabilityData& d = data.value();
  const std::string all = joined(d.errors) + joined(d.warnings);
  for (const tables::RunData& r : d.runs) {
    EXPECT_EQ(r.strategy.find("SECRET"), std::string::npos);
    EXPECT_EQ(r.strategy.find("elsewhere"), std::string::npos);
    EXPECT_FALSE(r.computation.has_value()) << r.name;
    EXPECT_TRUE(r.gpus.empty()) << r.name;
  }
  EXPECT_EQ(all.find("TOP-SECRET"), std::string::npos);
  EXPECT_TRUE(any_contains(d.errors, (s.dir() / "1/a/params/strategy").string() + ": a symbolic link, not followed"))
      << all;
  EXPECT_TRUE(any_contains(d.errors, (s.dir() / "1/b/params").string() + ": a symbolic link; not followed")) << all;
  EXPECT_TRUE(any_contains(d.errors, (s.dir() / "1/c/metrics/gpu_power_W").string())) << all;
  EXPECT_TRUE(any_contains(d.errors, (s.dir() / "1/d/artifacts").string() + ": a symbolic link; not followed")) << all;
  EXPECT_TRUE(any_contains(d.errors, (s.dir() / "1/e").string() + ": a symbolic link; not followed")) << all;
  // The unlinked data of the same runs is still there.
  ASSERT_NE(run_named(d, "linked-metric"), nullptr);
  EXPECT_EQ(run_named(d, "linked-metric")->epochs.size(), 1u);
  ASSERT_NE(run_named(d, "linked-artifacts"), nullptr);
  EXPECT_EQ(run_named(d, "linked-artifacts")->epochs.size(), 1u);
}

// Finding 13: each file read is capped (a param value, a metric file), and a FIFO does not block.
TEST(MlflowFileStoreHardening, SizeCapsAndSpecialFiles) {
  Scratch s("caps");
  s.write("1/meta.yaml", "experiment_id: '1'\nname: exp\n");
  file_run(s, "a", "big-param", "1000 10 0\n");
  s.write("1/a/params/notes", std::string(5000, 'x'));
  file_run(s, "b", "big-metric", "1000 10 0\n");
  std::string many;
  for (int i = 0; i < 400; ++i) many += "1000 " + std::to_string(i) + " " + std::to_string(i) + "\n";
  s.write("1/b/metrics/epoch_time_s", many);
  file_run(s, "c", "fifo", "1000 10 0\n");
  ASSERT_EQ(::mkfifo((s.dir() / "1/c/params/blocked").c_str(), 0600), 0);
  MlflowReadLimits limits;
  limits.max_value_bytes = 4096;
  limits.max_metric_file_bytes = 4096;
  auto data = read_file_store(s, limits);
  ASSERT_TRUE(data.ok()) << data.error().message;
  const tables::ScalabilityData& d = data.value();
  EXPECT_TRUE(any_contains(d.errors, (s.dir() / "1/a/params/notes").string() + ": larger than 4096 bytes; not read"))
      << joined(d.errors);
  EXPECT_TRUE(any_contains(d.errors, (s.dir() / "1/b/metrics/epoch_time_s").string() + ": larger than 4096 bytes"))
      << joined(d.errors);
  EXPECT_TRUE(any_contains(d.errors, (s.dir() / "1/c/params/blocked").string() + ": not a regular file"))
      << joined(d.errors);
  ASSERT_NE(run_named(d, "big-param"), nullptr);
  EXPECT_EQ(run_named(d, "big-param")->epochs.size(), 1u);
  ASSERT_NE(run_named(d, "fifo"), nullptr);
  EXPECT_EQ(run_named(d, "fifo")->strategy, "ddp");
}

// Finding 3: an artifact root that cannot be read here leaves out only the profiling averages of
// its runs, with one warning naming the runs and the scheme (never the URI); no error.
TEST(MlflowFileStoreHardening, RemoteArtifactRootIsOneWarning) {
  Scratch s("remote-artifacts");
  s.write("1/meta.yaml", "experiment_id: '1'\nname: exp\n");
  file_run(s, "a", "on-s3", "1000 10 0\n2000 8 1\n", "s3://bucket:key@example/1/a/artifacts");
  file_run(s, "b", "also-s3", "1000 9 0\n", "s3://bucket/1/b/artifacts");
  auto data = read_file_store(s);
  ASSERT_TRUE(data.ok()) << data.error().message;
  const tables::ScalabilityData& d = data.value();
  EXPECT_TRUE(d.errors.empty()) << joined(d.errors);
  ASSERT_EQ(d.warnings.size(), 1u) << joined(d.warnings);
  EXPECT_NE(d.warnings[0].text().find("2 runs with 's3:' artifact URIs"), std::string::npos) << d.warnings[0];
  EXPECT_NE(d.warnings[0].text().find("a (on-s3)"), std::string::npos) << d.warnings[0];
  EXPECT_EQ(d.warnings[0].text().find("bucket"), std::string::npos) << d.warnings[0];
  ASSERT_NE(run_named(d, "on-s3"), nullptr);
  EXPECT_EQ(run_named(d, "on-s3")->epochs.size(), 2u);
}

// Finding 16: MLflow values get the checks of the CSV readers: utilization above 100 %, negative
// power, an epoch of 1e308 s are rejected and counted as errors; timestamps going backwards or at
// the ends of int64 neither overflow nor make a negative interval.
TEST(MlflowImporterHardening, ValuesAreCheckedAsInCsvFiles) {
  Scratch s("values");
  s.write("1/meta.yaml", "experiment_id: '1'\nname: exp\n");
  file_run(s, "a", "values", "1000 10 0\n2000 1e308 1\n3000 -4 2\n4000 8 3\n");
  s.write("1/a/metrics/gpu_utilization_percent", "3000 50 0\n2000 250 1\n1000 70 2\n");
  s.write("1/a/metrics/gpu_power_W",
          "3000 100 0\n2000 -5 1\n1000 200 2\n9223372036854775807 300 3\n-9223372036854775808 300 4\n");
  auto data = read_file_store(s);
  ASSERT_TRUE(data.ok()) << data.error().message;
  const tables::ScalabilityData& d = data.value();
  const tables::RunData* r = run_named(d, "values");
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->epochs.size(), 2u);  // steps 0 and 3
  EXPECT_EQ(r->epochs[0].seconds, 10.0);
  EXPECT_EQ(r->epochs[1].seconds, 8.0);
  ASSERT_EQ(r->gpus.size(), 1u);
  const tables::GpuSeries& g = r->gpus[0];
  // In time order (step 2 at t=1 s first), from 0: never negative, never wrapped.
  EXPECT_EQ(g.time_s, (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(g.power_w[0], 200.0);
  EXPECT_TRUE(std::isnan(g.power_w[1]));  // -5 W
  EXPECT_EQ(g.power_w[2], 100.0);
  EXPECT_EQ(g.utilization_pct[0], 70.0);
  EXPECT_TRUE(std::isnan(g.utilization_pct[1]));  // 250 %
  EXPECT_EQ(g.utilization_pct[2], 50.0);
  EXPECT_TRUE(any_contains(d.errors, "epoch_time_s 1e+308 is outside 0 to 1e+09 s at step 1; point skipped"))
      << joined(d.errors);
  EXPECT_TRUE(any_contains(d.errors, "epoch_time_s -4 is outside 0 to 1e+09 s at step 2; point skipped"))
      << joined(d.errors);
  // A GPU value ignored while its sample stays is a warning, as the CSV readers say it (exit code 0 for it).
  EXPECT_TRUE(any_contains(d.warnings, "gpu_utilization_percent 250 is outside 0 to 100 at step 1; value ignored"))
      << joined(d.warnings);
  EXPECT_TRUE(any_contains(d.warnings, "gpu_power_W -5 is negative at step 1; value ignored")) << joined(d.warnings);
  EXPECT_FALSE(any_contains(d.errors, "value ignored")) << joined(d.errors);
  EXPECT_TRUE(any_contains(d.errors, ":4: timestamp out of range; line skipped")) << joined(d.errors);
  EXPECT_TRUE(any_contains(d.errors, ":5: timestamp out of range; line skipped")) << joined(d.errors);
}

// Finding 14's class: a run's name is the server's words, and every message that quotes it goes
// through the one credential redactor (a name holding a URL with a password shows no password).
TEST(MlflowImporterHardening, RunNamesInMessagesAreRedacted) {
  Scratch s("redact");
  s.write("1/meta.yaml", "experiment_id: '1'\nname: exp\n");
  file_run(s, "a", "https://alice:hunter2@evil.example/x", "1000 10 0\n2000 -4 1\n3000 8 2\n");
  auto data = read_file_store(s);
  ASSERT_TRUE(data.ok()) << data.error().message;
  const std::string errors = joined(data.value().errors);
  EXPECT_TRUE(any_contains(data.value().errors, "epoch_time_s -4 is outside 0 to 1e+09 s at step 1")) << errors;
  EXPECT_TRUE(any_contains(data.value().errors, "evil.example")) << errors;
  EXPECT_FALSE(any_contains(data.value().errors, "hunter2")) << errors;
}

// Finding 16: the epoch bound is the run-directory reader's too (one validation function).
TEST(MlflowImporterHardening, RunDirectoriesShareTheEpochBound) {
  Scratch s("rundir-epochs");
  s.write("exp/r/run.json", R"({"schema_version": 1, "experiment": "exp", "run": "r", "strategy": "ddp",
      "world_size": 1, "status": "completed"})");
  s.write("exp/r/rank-00000/epochs.csv", "epoch,duration_s\n0,10\n1,1e308\n2,8\n");
  ScalabilityReadOptions options;
  options.root = s.dir().string();
  auto data = read_scalability_data(options);
  ASSERT_TRUE(data.ok()) << data.error().message;
  ASSERT_EQ(data.value().runs.size(), 1u);
  EXPECT_EQ(data.value().runs[0].epochs.size(), 2u);
  EXPECT_TRUE(any_contains(data.value().errors, "epochs.csv:3: epoch 1 has duration_s 1e+308; epoch ignored"))
      << joined(data.value().errors);
}

// ---- SQLite ---------------------------------------------------------------------------------------

constexpr const char* kMlflowSchema =
    "CREATE TABLE experiments (experiment_id INTEGER PRIMARY KEY, name TEXT, artifact_location TEXT, "
    "lifecycle_stage TEXT);"
    "CREATE TABLE params (key TEXT, value TEXT, run_uuid TEXT);"
    "CREATE TABLE tags (key TEXT, value TEXT, run_uuid TEXT);"
    "CREATE TABLE metrics (key TEXT, value FLOAT, timestamp BIGINT, run_uuid TEXT, step BIGINT, is_nan BOOLEAN);"
    "INSERT INTO experiments VALUES (1, 'exp', '', 'active');";
constexpr const char* kRunsTable =
    "CREATE TABLE runs (run_uuid TEXT PRIMARY KEY, name TEXT, status TEXT, artifact_uri TEXT, experiment_id INTEGER, "
    "lifecycle_stage TEXT, start_time BIGINT);";

// A database in MLflow's schema (the columns read) with `sql` run after it.
fs::path make_db(const Scratch& s, const std::string& sql, bool runs_table = true) {
  fs::path path = s.dir() / "mlflow.db";
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, kMlflowSchema);
  if (runs_table) exec(db, kRunsTable);
  exec(db, sql);
  sqlite3_close(db);
  return path;
}

std::string sql_run(const std::string& id, const std::string& name, const std::string& artifact_uri) {
  return "INSERT INTO runs VALUES ('" + id + "', '" + name + "', 'FINISHED', '" + artifact_uri +
         "', 1, 'active', 1);INSERT INTO params VALUES ('strategy', 'ddp', '" + id +
         "');INSERT INTO params VALUES ('global_world_size', '1', '" + id + "');";
}

// Finding 10: `runs` as a recursive view is refused before any query, naming the file and the
// object; so are a missing column and a virtual table.
TEST(MlflowSqliteHardening, ObjectsMustBeTablesWithTheColumnsRead) {
  Scratch s("sqlite-view");
  const fs::path db = make_db(s,
                              "CREATE VIEW runs AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                              "SELECT 'r' || x AS run_uuid, '' AS name, '' AS status, '' AS artifact_uri, 1 AS "
                              "experiment_id, 'active' AS lifecycle_stage, x AS start_time FROM c;",
                              false);
  auto store = open_mlflow_sqlite_store(db.string());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().message, db.string() + ": runs is a view, not a table (is this an MLflow database?)");

  Scratch s2("sqlite-column");
  const fs::path db2 = s2.dir() / "mlflow.db";
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db2.c_str(), &h), SQLITE_OK);
  exec(h, kMlflowSchema);
  exec(h,
       "CREATE TABLE runs (run_uuid TEXT, name TEXT, status TEXT, experiment_id INTEGER, lifecycle_stage TEXT, "
       "start_time BIGINT);");
  sqlite3_close(h);
  auto missing = open_mlflow_sqlite_store(db2.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            db2.string() + ": table runs has no column artifact_uri (is this an MLflow database?)");
}

// Finding 10: every query runs under a deadline; one past it stops with a one-line error naming
// the file and the table (a deadline of 0 stops any query that runs at all).
TEST(MlflowSqliteHardening, QueriesStopAtTheirDeadline) {
  Scratch s("sqlite-deadline");
  std::string sql = sql_run("r1", "long", "");
  sql +=
      "WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c LIMIT 20000) INSERT INTO metrics SELECT "
      "'epoch_time_s', 1.0, 1000 + x, 'r1', x, 0 FROM c;";
  const fs::path db = make_db(s, sql);
  MlflowReadLimits limits;
  limits.query_deadline = std::chrono::milliseconds(0);
  auto store = open_mlflow_sqlite_store(db.string(), limits);
  std::string message;
  if (!store.ok()) {
    message = store.error().message;
  } else {
    auto data = read_store(*store.value());
    message = data.ok() ? joined(data.value().errors) : data.error().message;
  }
  EXPECT_NE(message.find(db.string() + ": a query on table "), std::string::npos) << message;
  EXPECT_NE(message.find("took longer than 0 s; stopped"), std::string::npos) << message;
}

// Finding 16: NULL and text metric values are not 0 s epochs; they are skipped and counted.
TEST(MlflowSqliteHardening, NullAndTextValuesAreSkipped) {
  Scratch s("sqlite-null");
  std::string sql = sql_run("r1", "nulls", "");
  sql +=
      "INSERT INTO metrics VALUES ('epoch_time_s', 10.0, 1000, 'r1', 0, 0);"
      "INSERT INTO metrics VALUES ('epoch_time_s', NULL, 2000, 'r1', 1, 0);"
      "INSERT INTO metrics VALUES ('epoch_time_s', 'fast', 3000, 'r1', 2, 0);"
      "INSERT INTO metrics VALUES ('epoch_time_s', 8.0, 4000, 'r1', 3, 0);"
      "INSERT INTO metrics VALUES ('epoch_time_s', 8.0, NULL, 'r1', 4, 0);";
  const fs::path db = make_db(s, sql);
  auto store = open_mlflow_sqlite_store(db.string());
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto data = read_store(*store.value());
  ASSERT_TRUE(data.ok()) << data.error().message;
  const tables::ScalabilityData& d = data.value();
  ASSERT_EQ(d.runs.size(), 1u);
  ASSERT_EQ(d.runs[0].epochs.size(), 2u);
  EXPECT_EQ(d.runs[0].epochs[0].seconds, 10.0);
  EXPECT_EQ(d.runs[0].epochs[1].seconds, 8.0);
  EXPECT_TRUE(
      any_contains(d.errors, db.string() + ": table metrics: run r1 metric epoch_time_s: value is NULL; point skipped"))
      << joined(d.errors);
  EXPECT_TRUE(any_contains(d.errors, "value is not a number; point skipped")) << joined(d.errors);
  EXPECT_TRUE(any_contains(d.errors, "step or timestamp is not an integer; point skipped")) << joined(d.errors);
  EXPECT_EQ(d.errors.size(), 3u) << joined(d.errors);
}

// Finding 3: a server's database keeps artifacts at mlflow-artifacts:; the report has everything
// else and one warning; with MLflow's default --artifacts-destination (./mlartifacts beside the
// database) the profiling averages are read from there.
TEST(MlflowSqliteHardening, ProxiedArtifactsDegradeOrResolve) {
  Scratch s("sqlite-proxied");
  std::string sql = sql_run("r1", "served", "mlflow-artifacts:/1/r1/artifacts") +
                    sql_run("r2", "elsewhere", "mlflow-artifacts://host:5000/1/r2/artifacts");
  sql +=
      "INSERT INTO metrics VALUES ('epoch_time_s', 10.0, 1000, 'r1', 0, 0);"
      "INSERT INTO metrics VALUES ('epoch_time_s', 9.0, 1000, 'r2', 0, 0);";
  const fs::path db = make_db(s, sql);
  auto store = open_mlflow_sqlite_store(db.string());
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto data = read_store(*store.value());
  ASSERT_TRUE(data.ok()) << data.error().message;
  EXPECT_TRUE(data.value().errors.empty()) << joined(data.value().errors);
  ASSERT_EQ(data.value().runs.size(), 2u);
  ASSERT_EQ(data.value().warnings.size(), 1u) << joined(data.value().warnings);
  EXPECT_NE(
      data.value().warnings[0].text().find("2 runs with 'mlflow-artifacts:' artifact URIs, which cannot be read here"),
      std::string::npos)
      << data.value().warnings[0];

  s.write("mlartifacts/1/r1/artifacts/torch_profiling_averages/torch_profiling_averages.csv",
          std::string(kProfilingHeader) + "\naten::mm,0,300,300,300us,1,ddp,1,0\nother,0,100,100,100us,1,ddp,1,0\n");
  auto again = open_mlflow_sqlite_store(db.string());
  ASSERT_TRUE(again.ok());
  auto resolved = read_store(*again.value());
  ASSERT_TRUE(resolved.ok());
  const tables::RunData* served = run_named(resolved.value(), "served");
  ASSERT_NE(served, nullptr);
  ASSERT_TRUE(served->computation.has_value());
  EXPECT_EQ(served->computation->computation_ns, 300000);
  EXPECT_EQ(served->computation->total_ns, 400000);
  ASSERT_EQ(resolved.value().warnings.size(), 1u);
  EXPECT_NE(resolved.value().warnings[0].text().find("1 run with 'mlflow-artifacts:' artifact URIs"),
            std::string::npos);
  EXPECT_NE(resolved.value().warnings[0].text().find("r2 (elsewhere)"), std::string::npos);
}

// Finding 22: scaleprof's profiling artifact of a CPU-only (gloo) run has no self device time; its
// self CPU time gives the fraction the trace engine gives the run directory.
TEST(MlflowImporterHardening, CpuOnlyProfilingArtifactGivesTheCpuFraction) {
  Scratch s("cpu-fraction");
  s.write("1/meta.yaml", "experiment_id: '1'\nname: exp\n");
  file_run(s, "a", "cpu", "1000 10 0\n");
  s.write("1/a/artifacts/torch_profiling_averages/torch_profiling_averages.csv",
          std::string(kProfilingHeader) +
              ",self_cpu_time_total,cpu_time_total\n"
              "aten::conv2d,0,0.000,0.000,0.000us,4,ddp,1,0,900.500,1000.000\n"
              "ProfilerStep*,0,0.000,0.000,0.000us,2,ddp,1,0,100.000,2000.000\n"
              "gloo:all_reduce,0,0.000,0.000,0.000us,2,ddp,1,0,99.500,99.500\n");
  auto data = read_file_store(s);
  ASSERT_TRUE(data.ok()) << data.error().message;
  const tables::RunData* r = run_named(data.value(), "cpu");
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(r->computation.has_value());
  EXPECT_EQ(r->computation->basis, tables::FractionBasis::kCpuSelf);
  EXPECT_EQ(r->computation->computation_ns, 900500);
  EXPECT_EQ(r->computation->total_ns, 1100000);
  EXPECT_EQ(r->computation->profiler_step_ns, 100000);
  EXPECT_DOUBLE_EQ(r->computation->computation_ratio(), 900.5 / 1000.0);
  EXPECT_TRUE(data.value().errors.empty()) << joined(data.value().errors);
}

// The shared reading mechanism itself (core/file_below.h).
TEST(FileBelow, LinksFifosAndCaps) {
  Scratch s("file-below");
  s.write("a/b/file", "hello");
  fs::create_symlink(s.dir() / "a/b/file", s.dir() / "a/link");
  fs::create_directory_symlink(s.dir() / "a/b", s.dir() / "a/dirlink");
  ASSERT_EQ(::mkfifo((s.dir() / "a/fifo").c_str(), 0600), 0);
  const std::string base = s.dir().string();
  auto ok = read_file_below(base, "a/b/file", 5);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok.value(), "hello");
  EXPECT_FALSE(read_file_below(base, "a/b/file", 4).ok());
  EXPECT_FALSE(read_file_below(base, "a/b/missing", 4).value().has_value());
  EXPECT_FALSE(read_file_below(base, "nope/missing", 4).value().has_value());
  auto link = read_file_below(base, "a/link", 100);
  ASSERT_FALSE(link.ok());
  EXPECT_EQ(link.error().message, base + "/a/link: a symbolic link; not followed");
  auto through = read_file_below(base, "a/dirlink/file", 100);
  ASSERT_FALSE(through.ok());
  EXPECT_EQ(through.error().message, base + "/a/dirlink: a symbolic link; not followed");
  auto fifo = read_file_below(base, "a/fifo", 100);
  ASSERT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.error().message, base + "/a/fifo: not a regular file");
  EXPECT_FALSE(read_file_below(base, "a/../a/b/file", 100).ok());
  // The base itself may be reached through a link (/home -> /gpfs/home).
  auto via = read_file_below((s.dir() / "a/dirlink").string(), "file", 100);
  ASSERT_TRUE(via.ok());
  EXPECT_EQ(*via.value(), "hello");
  auto listed = list_folder_below(base, "a", 100);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed.value()->size(), 4u);
  EXPECT_EQ((*listed.value())[0].name, "b");
  EXPECT_EQ((*listed.value())[0].kind, FolderEntry::Kind::kFolder);
  EXPECT_EQ((*listed.value())[1].kind, FolderEntry::Kind::kSymlink);
  EXPECT_EQ((*listed.value())[2].kind, FolderEntry::Kind::kOther);
  EXPECT_EQ((*listed.value())[3].kind, FolderEntry::Kind::kSymlink);
  EXPECT_FALSE(list_folder_below(base, "a", 3).ok());
  EXPECT_FALSE(list_folder_below(base, "a/dirlink", 100).ok());
}

}  // namespace
}  // namespace scaleprof::importers

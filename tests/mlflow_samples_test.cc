// The samples of each epoch read back from MLflow (metric `epoch_samples` on every worker, as
// `scaleprof mlflow sync` logs them), from each store kind: a server (a scripted REST server on
// 127.0.0.1), a SQLite database and a file store, all written here from one description. An epoch's
// samples are the workers' sum only when every worker gives them (the run-directory reader's rule);
// negative, fractional and absurd counts are errors (exit 3) checked as the CSV readers check theirs
// (importers/value_checks.h); itwinai's runs (no samples) have none. And the round trip: what
// `mlflow sync` plans for a run directory, read back, has the run directory's samples.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "collect/run_records.h"
#include "hostile_http_server.h"
#include "importers/mlflow/mlflow_importer.h"
#include "importers/mlflow/mlflow_store.h"
#include "importers/run_data_reader.h"
#include "importers/run_reader.h"
#include "mlflow_sync/sync_plan.h"
#include "mlflow_test_util.h"
#include "scratch_dir.h"

namespace scaleprof::importers {
namespace {

namespace fs = std::filesystem;

using Points = std::vector<std::pair<int64_t, double>>;  // (step, value)

struct WorkerSpec {
  std::string id;
  int64_t rank = 0;
  Points epoch_time;  // itwinai logs it on the main worker only
  Points samples;     // epoch_samples
};

struct TrainingSpec {
  std::string id;
  std::string name;
  std::string strategy;
  int64_t world = 1;
  std::vector<WorkerSpec> workers;
};

// Samples present on both workers; present on one worker only for epoch 1; hostile values on one
// worker and a repeated epoch with two counts on the other; none at all (itwinai's runs).
std::vector<TrainingSpec> experiment() {
  return {
      {"t1",
       "full",
       "ddp",
       2,
       {{"t1w0", 0, {{0, 10}, {1, 8}, {2, 8}}, {{0, 32}, {1, 32}, {2, 32}}},
        {"t1w1", 1, {}, {{0, 32}, {1, 32}, {2, 30}}}}},
      {"t2", "partial", "horovod", 2, {{"t2w0", 0, {{0, 5}, {1, 4}}, {{0, 16}, {1, 16}}}, {"t2w1", 1, {}, {{0, 16}}}}},
      {"t3",
       "hostile",
       "fsdp",
       2,
       {{"t3w0", 0, {{0, 6}, {1, 6}, {2, 6}, {3, 6}, {4, 6}}, {{0, -5}, {1, 32.5}, {2, 1e300}, {3, 8}, {4, 8}}},
        {"t3w1", 1, {}, {{0, 8}, {1, 8}, {2, 8}, {3, 8}, {3, 9}, {4, 8}}}}},
      {"t4", "itwinai", "deepspeed", 1, {{"t4w0", 0, {{0, 3}, {1, 2}}, {}}}},
  };
}

std::string number(double v) {
  return fmt::format("{}", v);
}

int64_t timestamp(int64_t step) {
  return 1700000000000 + 1000 * step;
}

using Scratch = ::scaleprof::testing::ScratchDir;
using ::scaleprof::testing::any_contains;
using ::scaleprof::testing::exec;
using ::scaleprof::testing::joined;

// ---- The three store kinds, written from the description -----------------------------------------

void write_file_store(const Scratch& s, const std::vector<TrainingSpec>& trainings) {
  s.write("1/meta.yaml", "experiment_id: '1'\nname: exp\nlifecycle_stage: active\n");
  auto metric = [&](const std::string& run, const std::string& key, const Points& points) {
    if (points.empty()) return;
    std::string lines;
    for (const auto& [step, value] : points) lines += fmt::format("{} {} {}\n", timestamp(step), number(value), step);
    s.write("1/" + run + "/metrics/" + key, lines);
  };
  for (const TrainingSpec& t : trainings) {
    s.write("1/" + t.id + "/meta.yaml",
            "run_id: " + t.id + "\nrun_name: " + t.name + "\nstatus: 3\nlifecycle_stage: active\n");
    for (const WorkerSpec& w : t.workers) {
      const std::string d = "1/" + w.id;
      s.write(d + "/meta.yaml", "run_id: " + w.id + "\nrun_name: worker_" + std::to_string(w.rank) +
                                    "\nstatus: 3\nlifecycle_stage: active\n");
      s.write(d + "/tags/mlflow.parentRunId", t.id);
      s.write(d + "/params/strategy", t.strategy);
      s.write(d + "/params/global_world_size", std::to_string(t.world));
      s.write(d + "/params/global_rank", std::to_string(w.rank));
      metric(w.id, "epoch_time_s", w.epoch_time);
      metric(w.id, "epoch_samples", w.samples);
    }
  }
}

fs::path write_sqlite_store(const Scratch& s, const std::vector<TrainingSpec>& trainings) {
  std::string sql =
      "CREATE TABLE experiments (experiment_id INTEGER PRIMARY KEY, name TEXT, artifact_location TEXT, "
      "lifecycle_stage TEXT);"
      "CREATE TABLE runs (run_uuid TEXT PRIMARY KEY, name TEXT, status TEXT, artifact_uri TEXT, experiment_id "
      "INTEGER, lifecycle_stage TEXT, start_time BIGINT);"
      "CREATE TABLE params (key TEXT, value TEXT, run_uuid TEXT);"
      "CREATE TABLE tags (key TEXT, value TEXT, run_uuid TEXT);"
      "CREATE TABLE metrics (key TEXT, value FLOAT, timestamp BIGINT, run_uuid TEXT, step BIGINT, is_nan BOOLEAN);"
      "INSERT INTO experiments VALUES (1, 'exp', '', 'active');";
  auto run = [&](const std::string& id, const std::string& name) {
    sql += fmt::format("INSERT INTO runs VALUES ('{}', '{}', 'FINISHED', '', 1, 'active', 1);", id, name);
  };
  auto metric = [&](const std::string& id, const std::string& key, const Points& points) {
    for (const auto& [step, value] : points) {
      sql += fmt::format("INSERT INTO metrics VALUES ('{}', {}, {}, '{}', {}, 0);", key, number(value), timestamp(step),
                         id, step);
    }
  };
  for (const TrainingSpec& t : trainings) {
    run(t.id, t.name);
    for (const WorkerSpec& w : t.workers) {
      run(w.id, "worker_" + std::to_string(w.rank));
      sql += fmt::format("INSERT INTO tags VALUES ('mlflow.parentRunId', '{}', '{}');", t.id, w.id);
      sql += fmt::format("INSERT INTO params VALUES ('strategy', '{}', '{}');", t.strategy, w.id);
      sql += fmt::format("INSERT INTO params VALUES ('global_world_size', '{}', '{}');", t.world, w.id);
      sql += fmt::format("INSERT INTO params VALUES ('global_rank', '{}', '{}');", w.rank, w.id);
      metric(w.id, "epoch_time_s", w.epoch_time);
      metric(w.id, "epoch_samples", w.samples);
    }
  }
  const fs::path path = s.dir() / "mlflow.db";
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  exec(db, sql);
  sqlite3_close(db);
  return path;
}

// The value of `name` in a request target's query ("run_id=t1w0&metric_key=epoch_samples&...").
std::string query_value(const std::string& target, const std::string& name) {
  const size_t at = target.find(name + "=");
  if (at == std::string::npos) return {};
  const size_t from = at + name.size() + 1;
  return target.substr(from, target.find('&', from) - from);
}

// MLflow's REST API 2.0 as the server store reads it, for the description: experiments/get-by-name,
// runs/search (one page), metrics/get-history (one page per run and key), an empty artifacts/list.
class ScriptedMlflowServer {
 public:
  explicit ScriptedMlflowServer(std::vector<TrainingSpec> trainings)
      : trainings_(std::move(trainings)), server_([this](testing::HttpConnection& c, const testing::HttpRequest& r) {
          const std::string body = answer(r);
          c.send(testing::http_response(body == "{}" ? 404 : 200, body));
        }) {}
  std::string url() const { return server_.url(); }

 private:
  std::string answer(const testing::HttpRequest& r) const {
    if (r.target.starts_with("/api/2.0/mlflow/experiments/get-by-name")) {
      return R"({"experiment":{"experiment_id":"1","name":"exp"}})";
    }
    if (r.target.starts_with("/api/2.0/mlflow/runs/search")) return runs();
    if (r.target.starts_with("/api/2.0/mlflow/metrics/get-history")) {
      return history(query_value(r.target, "run_id"), query_value(r.target, "metric_key"));
    }
    if (r.target.starts_with("/api/2.0/mlflow/artifacts/list")) return R"({"files":[]})";
    return "{}";
  }

  static std::string run_json(const std::string& id, const std::string& name, const std::string& data) {
    return fmt::format(
        R"({{"info":{{"run_id":"{}","run_name":"{}","status":"FINISHED","artifact_uri":"mlflow-artifacts:/1/{}",)"
        R"("lifecycle_stage":"active"}},"data":{{{}}}}})",
        id, name, id, data);
  }

  std::string runs() const {
    std::string out;
    auto add = [&](const std::string& run) { out += (out.empty() ? "" : ",") + run; };
    for (const TrainingSpec& t : trainings_) {
      add(run_json(t.id, t.name, ""));
      for (const WorkerSpec& w : t.workers) {
        std::string metrics;
        if (!w.epoch_time.empty()) metrics += R"({"key":"epoch_time_s","value":1,"timestamp":1,"step":0})";
        if (!w.samples.empty()) {
          metrics += std::string(metrics.empty() ? "" : ",") + R"({"key":"epoch_samples","value":1,"timestamp":1})";
        }
        add(run_json(w.id, "worker_" + std::to_string(w.rank),
                     fmt::format(R"("metrics":[{}],"params":[{{"key":"strategy","value":"{}"}},)"
                                 R"({{"key":"global_world_size","value":"{}"}},{{"key":"global_rank","value":"{}"}}],)"
                                 R"("tags":[{{"key":"mlflow.parentRunId","value":"{}"}}])",
                                 metrics, t.strategy, t.world, w.rank, t.id)));
      }
    }
    return R"({"runs":[)" + out + "]}";
  }

  std::string history(const std::string& run_id, const std::string& key) const {
    std::string out;
    for (const TrainingSpec& t : trainings_) {
      for (const WorkerSpec& w : t.workers) {
        if (w.id != run_id) continue;
        for (const auto& [step, value] : key == "epoch_samples" ? w.samples : w.epoch_time) {
          out += fmt::format(R"({}{{"key":"{}","value":{},"timestamp":{},"step":{}}})", out.empty() ? "" : ",", key,
                             number(value), timestamp(step), step);
        }
      }
    }
    return R"({"metrics":[)" + out + "]}";
  }

  std::vector<TrainingSpec> trainings_;
  testing::HostileHttpServer server_;
};

// ---- What every store kind must give -----------------------------------------------------------

// Per run name, each epoch's samples (-1 for none: NaN does not compare).
std::map<std::string, std::vector<std::pair<int64_t, double>>> samples_by_run(const tables::ScalabilityData& d) {
  std::map<std::string, std::vector<std::pair<int64_t, double>>> out;
  for (const tables::RunData& r : d.runs) {
    for (const tables::EpochTime& e : r.epochs)
      out[r.name].push_back({e.epoch, std::isnan(e.samples) ? -1 : e.samples});
  }
  return out;
}

void expect_samples(const std::string& kind, MlflowStore& store) {
  SCOPED_TRACE(kind);
  MlflowReadOptions options;
  options.experiment_name = "exp";
  auto data = read_mlflow_runs(store, options);
  ASSERT_TRUE(data.ok()) << data.error().message;
  const tables::ScalabilityData& d = data.value();
  const auto got = samples_by_run(d);
  using Epochs = std::vector<std::pair<int64_t, double>>;
  // Both workers every epoch: their sum.
  EXPECT_EQ(got.at("full"), (Epochs{{0, 64}, {1, 64}, {2, 62}}));
  // Epoch 1 from one worker of two: none (it would halve the throughput).
  EXPECT_EQ(got.at("partial"), (Epochs{{0, 32}, {1, -1}}));
  // Only epoch 4 has two valid counts; every epoch time is kept.
  EXPECT_EQ(got.at("hostile"), (Epochs{{0, -1}, {1, -1}, {2, -1}, {3, -1}, {4, 16}}));
  // itwinai's runs: epoch times, no samples, no error about them.
  EXPECT_EQ(got.at("itwinai"), (Epochs{{0, -1}, {1, -1}}));
  EXPECT_TRUE(any_contains(d.errors, "epoch_samples -5 is negative at step 0; point skipped")) << joined(d.errors);
  EXPECT_TRUE(any_contains(d.errors, "epoch_samples 32.5 is not a whole number at step 1; point skipped"))
      << joined(d.errors);
  EXPECT_TRUE(any_contains(d.errors, "epoch_samples 1e+300 is above 2^53 at step 2; point skipped"))
      << joined(d.errors);
  EXPECT_TRUE(
      any_contains(d.errors, "epoch_samples given twice for rank 1 (8 and 9) at step 3; no samples for that epoch"))
      << joined(d.errors);
  EXPECT_TRUE(any_contains(d.errors, "t3w0 (worker_0)")) << joined(d.errors);
  EXPECT_EQ(d.errors.size(), 4u) << joined(d.errors);
}

TEST(MlflowSamples, FileStore) {
  Scratch s("file");
  write_file_store(s, experiment());
  auto store = open_mlflow_file_store(s.dir().string());
  ASSERT_TRUE(store.ok()) << store.error().message;
  expect_samples("file store", *store.value());
}

TEST(MlflowSamples, SqliteStore) {
  Scratch s("sqlite");
  const fs::path db = write_sqlite_store(s, experiment());
  auto store = open_mlflow_sqlite_store(db.string());
  ASSERT_TRUE(store.ok()) << store.error().message;
  expect_samples("sqlite", *store.value());
}

TEST(MlflowSamples, Server) {
  ScriptedMlflowServer server(experiment());
  auto store = open_mlflow_server_store(server.url());
  ASSERT_TRUE(store.ok()) << store.error().message;
  expect_samples("server", *store.value());
}

// A training recorded twice under one rank (a worker run duplicated) is not counted twice: the same
// count from both copies is one worker's; the other rank still has to give its own.
TEST(MlflowSamples, DuplicatedWorkerCountsOnce) {
  Scratch s("duplicate");
  write_file_store(
      s,
      {{"t1",
        "dup",
        "ddp",
        2,
        {{"a", 0, {{0, 10}, {1, 9}}, {{0, 32}, {1, 32}}}, {"b", 0, {}, {{0, 32}, {1, 32}}}, {"c", 1, {}, {{1, 32}}}}}});
  auto store = open_mlflow_file_store(s.dir().string());
  ASSERT_TRUE(store.ok()) << store.error().message;
  MlflowReadOptions options;
  options.experiment_name = "exp";
  auto data = read_mlflow_runs(*store.value(), options);
  ASSERT_TRUE(data.ok()) << data.error().message;
  EXPECT_EQ(samples_by_run(data.value()).at("dup"), (std::vector<std::pair<int64_t, double>>{{0, -1}, {1, 64}}));
  EXPECT_TRUE(data.value().errors.empty()) << joined(data.value().errors);
}

// ---- The round trip: run directory -> sync plan -> store -> report ---------------------------------

// A sync plan written as MLflow's file store holds it (what the server would hold once synced).
void write_plan(const Scratch& s, const mlflow_sync::TrainingPlan& plan) {
  s.write("1/meta.yaml", "experiment_id: '1'\nname: exp\nlifecycle_stage: active\n");
  auto write_run = [&](const std::string& id, const mlflow_sync::RunPlan& run, const std::string& parent) {
    const std::string d = "1/" + id;
    s.write(d + "/meta.yaml", "run_id: " + id + "\nrun_name: '" + run.name + "'\nstatus: 3\nlifecycle_stage: active\n");
    if (!parent.empty()) s.write(d + "/tags/mlflow.parentRunId", parent);
    for (const auto& [key, value] : run.params) s.write(d + "/params/" + key, value);
    std::map<std::string, std::string> lines;
    for (const mlflow_sync::MetricValue& m : run.metrics) {
      lines[m.key] += fmt::format("{} {} {}\n", m.timestamp_ms, number(m.value), m.step);
    }
    for (const auto& [key, text] : lines) s.write(d + "/metrics/" + key, text);
  };
  write_run("parent", plan.parent, "");
  for (size_t i = 0; i < plan.workers.size(); ++i) write_run(fmt::format("w{}", i), plan.workers[i], "parent");
}

TEST(MlflowSamples, RoundTripKeepsTheRunDirectorysSamples) {
  Scratch s("roundtrip");
  const std::string run = "runs/exp/rt";
  s.write(run + "/run.json", R"({"schema_version":1,"experiment":"exp","run":"rt","strategy":"ddp","world_size":2,)"
                             R"("status":"completed","exit_status":0})"
                             "\n");
  for (int rank = 0; rank < 2; ++rank) {
    const std::string r = run + "/" + collect::rank_dir_name(rank);
    s.write(r + "/rank.json", fmt::format(R"({{"schema_version":1,"rank":{},"world_size":2,"status":"completed",)"
                                          R"("strategy":"ddp"}})"
                                          "\n",
                                          rank));
    // Rank 0: epoch 1 has its samples in its steps only; epoch 2 a negative count (no samples, no
    // fallback); epoch 3 a fractional one (an error; its steps give the count).
    const std::string samples = rank == 0 ? "40,,-3,12.5" : "40,32,40,16";
    std::string epochs = std::string(collect::kEpochsHeader) + "\n";
    size_t from = 0;
    for (int e = 0; e < 4; ++e) {
      const size_t comma = samples.find(',', from);
      const std::string cell = samples.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
      from = comma + 1;
      epochs += fmt::format("{},{},{},{},{}\n", e, 1763767200000000000 + e * 10000000000LL,
                            1763767201000000000 + e * 10000000000LL, 1.0 + rank, cell);
    }
    s.write(r + "/epochs.csv", epochs);
    if (rank == 0) {
      s.write(r + "/steps.csv",
              "epoch,step,start_unix_ns,duration_s,samples\n1,0,1763767210000000000,0.4,16\n"
              "1,1,1763767210400000000,0.4,16\n3,0,1763767230000000000,0.4,8\n3,1,1763767230400000000,0.4,8\n");
    }
  }
  ScalabilityReadOptions options;
  options.root = (s.dir() / "runs").string();
  auto from_dir = read_scalability_data(options);
  ASSERT_TRUE(from_dir.ok()) << from_dir.error().message;
  using Epochs = std::vector<std::pair<int64_t, double>>;
  EXPECT_EQ(samples_by_run(from_dir.value()).at("rt"), (Epochs{{0, 80}, {1, 64}, {2, -1}, {3, 32}}));
  const std::vector<std::string> errors = texts(from_dir.value().errors);
  EXPECT_TRUE(any_contains(errors, "rank-00000/epochs.csv:4: samples -3 is negative; samples ignored"))
      << joined(errors);
  EXPECT_TRUE(any_contains(errors, "rank-00000/epochs.csv:5: samples '12.5' is not a whole number; samples ignored"))
      << joined(errors);
  EXPECT_EQ(errors.size(), 2u) << joined(errors);

  auto loaded = read_run((s.dir() / run).string());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const mlflow_sync::TrainingPlan plan = mlflow_sync::plan_training(loaded.value());
  Scratch store_dir("roundtrip-store");
  write_plan(store_dir, plan);
  auto store = open_mlflow_file_store(store_dir.dir().string());
  ASSERT_TRUE(store.ok()) << store.error().message;
  MlflowReadOptions read;
  read.experiment_name = "exp";
  auto from_mlflow = read_mlflow_runs(*store.value(), read);
  ASSERT_TRUE(from_mlflow.ok()) << from_mlflow.error().message;
  EXPECT_TRUE(from_mlflow.value().errors.empty()) << joined(from_mlflow.value().errors);
  EXPECT_EQ(samples_by_run(from_mlflow.value()).at("rt"), (Epochs{{0, 80}, {1, 64}, {2, -1}, {3, 32}}));
  ASSERT_EQ(from_mlflow.value().runs.size(), 1u);
  ASSERT_EQ(from_dir.value().runs.size(), 1u);
  const auto& a = from_dir.value().runs[0].epochs;
  const auto& b = from_mlflow.value().runs[0].epochs;
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].seconds, b[i].seconds) << i;
}

}  // namespace
}  // namespace scaleprof::importers

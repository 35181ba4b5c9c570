// An MLflow SQLite database (mlflow server --backend-store-uri sqlite:///mlflow.db), opened
// read-only so a report never changes or locks out the writers. Tables as MLflow's schema names
// them: experiments, runs, params, tags, metrics.
#include <fmt/format.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "importers/mlflow_store.h"

namespace scaleprof::importers {

namespace {

// One prepared statement, finalized on every path.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ok() const { return rc_ == SQLITE_OK && stmt_ != nullptr; }
  void bind(int index, const std::string& text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(stmt_); }
  std::string text(int column) const {
    const unsigned char* t = sqlite3_column_text(stmt_, column);
    return t == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(t));
  }
  int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

class SqliteStore final : public MlflowStore {
 public:
  SqliteStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteStore() override { sqlite3_close(db_); }

  std::string describe() const override { return path_; }

  Result<std::optional<std::string>> experiment_id(const std::string& name) override {
    Statement s(db_, "SELECT experiment_id FROM experiments WHERE name = ? AND lifecycle_stage != 'deleted'");
    if (!s.ok()) return failure("experiments");
    s.bind(1, name);
    const int rc = s.step();
    if (rc == SQLITE_ROW) return std::optional<std::string>{s.text(0)};
    if (rc == SQLITE_DONE) return std::optional<std::string>{};
    return failure("experiments");
  }

  Result<std::vector<MlflowRun>> runs(const std::string& experiment_id) override {
    std::vector<MlflowRun> out;
    std::map<std::string, size_t> index;
    {
      Statement s(db_,
                  "SELECT run_uuid, name, status, artifact_uri FROM runs WHERE experiment_id = ? AND "
                  "lifecycle_stage != 'deleted' ORDER BY start_time, run_uuid");
      if (!s.ok()) return failure("runs");
      s.bind(1, experiment_id);
      int rc = 0;
      while ((rc = s.step()) == SQLITE_ROW) {
        MlflowRun r;
        r.run_id = s.text(0);
        r.name = s.text(1);
        r.status = s.text(2);
        r.artifact_uri = s.text(3);
        index[r.run_id] = out.size();
        out.push_back(std::move(r));
      }
      if (rc != SQLITE_DONE) return failure("runs");
    }
    // params, tags and metric keys of all runs of the experiment, one query each.
    struct Part {
      const char* sql;
      int kind;
    };
    const Part parts[] = {
        {"SELECT p.run_uuid, p.key, p.value FROM params p JOIN runs r ON r.run_uuid = p.run_uuid WHERE "
         "r.experiment_id = ?",
         0},
        {"SELECT t.run_uuid, t.key, t.value FROM tags t JOIN runs r ON r.run_uuid = t.run_uuid WHERE "
         "r.experiment_id = ?",
         1},
        {"SELECT DISTINCT m.run_uuid, m.key, '' FROM metrics m JOIN runs r ON r.run_uuid = m.run_uuid WHERE "
         "r.experiment_id = ? ORDER BY m.run_uuid, m.key",
         2},
    };
    for (const Part& part : parts) {
      Statement s(db_, part.sql);
      if (!s.ok()) return failure(part.kind == 0 ? "params" : part.kind == 1 ? "tags" : "metrics");
      s.bind(1, experiment_id);
      int rc = 0;
      while ((rc = s.step()) == SQLITE_ROW) {
        auto it = index.find(s.text(0));
        if (it == index.end()) continue;
        MlflowRun& r = out[it->second];
        if (part.kind == 0) r.params[s.text(1)] = s.text(2);
        if (part.kind == 1) r.tags[s.text(1)] = s.text(2);
        if (part.kind == 2) r.metric_keys.push_back(s.text(1));
      }
      if (rc != SQLITE_DONE) return failure("params/tags/metrics");
    }
    for (MlflowRun& r : out) {
      if (auto it = r.tags.find("mlflow.parentRunId"); it != r.tags.end()) r.parent_id = it->second;
      if (auto it = r.tags.find("mlflow.runName"); it != r.tags.end() && r.name.empty()) r.name = it->second;
    }
    return out;
  }

  Result<std::vector<MetricPoint>> metric_history(const MlflowRun& run, const std::string& key) override {
    Statement s(db_,
                "SELECT step, timestamp, value, is_nan FROM metrics WHERE run_uuid = ? AND key = ? ORDER BY "
                "timestamp, step");
    if (!s.ok()) return failure("metrics");
    s.bind(1, run.run_id);
    s.bind(2, key);
    std::vector<MetricPoint> out;
    int rc = 0;
    while ((rc = s.step()) == SQLITE_ROW) {
      MetricPoint p;
      p.step = s.integer(0);
      p.timestamp_ms = s.integer(1);
      p.value = s.integer(3) != 0 ? std::numeric_limits<double>::quiet_NaN() : s.real(2);
      out.push_back(p);
    }
    if (rc != SQLITE_DONE) return failure("metrics");
    return out;
  }

  Result<std::optional<std::string>> artifact(const MlflowRun& run, const std::string& path) override {
    return read_local_artifact(run.artifact_uri, path);
  }

 private:
  Error failure(const char* table) const {
    return Error{
        fmt::format("{}: cannot read table {}: {} (is this an MLflow database?)", path_, table, sqlite3_errmsg(db_))};
  }

  sqlite3* db_;
  std::string path_;
};

}  // namespace

Result<std::unique_ptr<MlflowStore>> open_mlflow_sqlite_store(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Error{fmt::format("{}: no such MLflow SQLite database", path)};
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Error{fmt::format("{}: cannot open the SQLite database: {}", path, message)};
  }
  sqlite3_busy_timeout(db, 5000);  // a writer holding the lock briefly is waited for, not an error
  return std::unique_ptr<MlflowStore>(std::make_unique<SqliteStore>(db, path));
}

}  // namespace scaleprof::importers

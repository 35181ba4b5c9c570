// An MLflow SQLite database (mlflow server --backend-store-uri sqlite:///mlflow.db), opened
// read-only so a report never changes or locks out the writers. Tables as MLflow's schema names
// them: experiments, runs, params, tags, metrics.
//
// The file may be anything (a copy, a corrupt file, a hostile one), so before any query the five
// objects must be real tables (sqlite_master type 'table', not a view whose recursive query never
// ends, not a virtual table) with the columns read; every query runs under a deadline (a progress
// handler interrupts it); the schema is not trusted (no functions with side effects from it); a
// value is at most SQLITE_LIMIT_LENGTH long; and the rows read are capped (MlflowReadLimits). A row
// that is not what MLflow writes (a NULL or text metric value, a NULL run id, an oversized param)
// is skipped and named in problems().
#include <fmt/format.h>
#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string_view>

#include "core/file_below.h"
#include "core/sqlite_read.h"
#include "importers/mlflow/mlflow_meta.h"
#include "importers/mlflow/mlflow_store.h"

namespace scaleprof::importers {

namespace {

namespace fs = std::filesystem;

// The tables and columns read; anything else in the file is ignored.
struct TableShape {
  const char* name;
  std::vector<const char*> columns;
};

const std::vector<TableShape>& mlflow_tables() {
  static const std::vector<TableShape> kTables = {
      {"experiments", {"experiment_id", "name", "lifecycle_stage"}},
      {"runs", {"run_uuid", "name", "status", "artifact_uri", "experiment_id", "lifecycle_stage", "start_time"}},
      {"params", {"run_uuid", "key", "value"}},
      {"tags", {"run_uuid", "key", "value"}},
      {"metrics", {"run_uuid", "key", "value", "timestamp", "step", "is_nan"}},
  };
  return kTables;
}

class SqliteStore final : public MlflowStore {
 public:
  SqliteStore(std::unique_ptr<SqliteFile> file, std::string path, const MlflowReadLimits& limits)
      : file_(std::move(file)), path_(std::move(path)), limits_(limits) {}
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  std::string describe() const override { return path_; }

  // Every table read is a real table with the columns read: a view (a recursive one never ends), a
  // virtual table or another file's schema is refused here, before any of them is queried.
  Status check_schema() {
    for (const TableShape& t : mlflow_tables()) {
      std::string type;
      switch (file_->check_table(t.name, &type)) {
        case SqliteTableCheck::kTable:
          break;
        case SqliteTableCheck::kFailed:
          return failure(t.name);
        case SqliteTableCheck::kMissing:
          return Error{fmt::format("{}: no table {} (is this an MLflow database?)", path_, t.name)};
        case SqliteTableCheck::kVirtual:
          return Error{
              fmt::format("{}: {} is a virtual table, not a table (is this an MLflow database?)", path_, t.name)};
        case SqliteTableCheck::kView:
        case SqliteTableCheck::kOther:
          return Error{fmt::format("{}: {} is a {}, not a table (is this an MLflow database?)", path_, t.name,
                                   shown_type(type))};
      }
      const std::set<std::string> columns = file_->columns(t.name);
      if (columns.empty()) return failure(t.name);
      for (const char* c : t.columns) {
        if (columns.count(c) == 0) {
          return Error{fmt::format("{}: table {} has no column {} (is this an MLflow database?)", path_, t.name, c)};
        }
      }
    }
    return Ok{};
  }

  Result<std::optional<std::string>> experiment_id(const std::string& name) override {
    SqliteStatement s(*file_, "SELECT experiment_id FROM experiments WHERE name = ? AND lifecycle_stage != 'deleted'");
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
      SqliteStatement s(*file_,
                        "SELECT run_uuid, name, status, artifact_uri FROM runs WHERE experiment_id = ? AND "
                        "lifecycle_stage != 'deleted' ORDER BY start_time, run_uuid");
      if (!s.ok()) return failure("runs");
      s.bind(1, experiment_id);
      int rc = 0;
      while ((rc = s.step()) == SQLITE_ROW) {
        if (s.type(0) == SQLITE_NULL || s.bytes(0) == 0 || s.bytes(0) > limits_.max_value_bytes) {
          problem(fmt::format("{}: table runs: a run of experiment {} has no valid run_uuid; run skipped", path_,
                              experiment_id));
          continue;
        }
        MlflowRun r;
        r.run_id = s.text(0);
        if (index.count(r.run_id) != 0) {
          problem(fmt::format("{}: table runs: run_uuid {} appears twice; the second is skipped", path_, r.run_id));
          continue;
        }
        if (out.size() >= limits_.max_runs) {
          return Error{fmt::format("{}: table runs: more than {} runs in experiment {}; not read", path_,
                                   limits_.max_runs, experiment_id),
                       ErrorKind::kTooLarge};
        }
        r.name = capped_text(s, 1, "runs", r.run_id, "name");
        r.status = capped_text(s, 2, "runs", r.run_id, "status");
        r.artifact_uri = capped_text(s, 3, "runs", r.run_id, "artifact_uri");
        index[r.run_id] = out.size();
        out.push_back(std::move(r));
      }
      if (rc != SQLITE_DONE) return failure("runs");
    }
    // params, tags and metric keys of all runs of the experiment, one query each.
    struct Part {
      const char* table;
      const char* sql;
    };
    const Part parts[] = {
        {"params",
         "SELECT p.run_uuid, p.key, p.value FROM params p JOIN runs r ON r.run_uuid = p.run_uuid WHERE "
         "r.experiment_id = ?"},
        {"tags",
         "SELECT t.run_uuid, t.key, t.value FROM tags t JOIN runs r ON r.run_uuid = t.run_uuid WHERE "
         "r.experiment_id = ?"},
        {"metrics",
         "SELECT DISTINCT m.run_uuid, m.key, '' FROM metrics m JOIN runs r ON r.run_uuid = m.run_uuid WHERE "
         "r.experiment_id = ? ORDER BY m.run_uuid, m.key"},
    };
    for (const Part& part : parts) {
      const std::string table = part.table;
      std::map<size_t, size_t> keys_of;  // run index -> keys read
      SqliteStatement s(*file_, part.sql);
      if (!s.ok()) return failure(part.table);
      s.bind(1, experiment_id);
      int rc = 0;
      while ((rc = s.step()) == SQLITE_ROW) {
        auto it = index.find(s.text(0));
        if (it == index.end()) continue;
        MlflowRun& r = out[it->second];
        size_t& count = keys_of[it->second];
        if (++count > limits_.max_keys_per_run) {
          if (count == limits_.max_keys_per_run + 1) {
            problem(fmt::format("{}: table {}: run {} has more than {} keys; the rest skipped", path_, table, r.run_id,
                                limits_.max_keys_per_run));
          }
          continue;
        }
        if (s.type(1) == SQLITE_NULL || s.bytes(1) == 0 || s.bytes(1) > limits_.max_value_bytes ||
            s.bytes(2) > limits_.max_value_bytes) {
          problem(fmt::format("{}: table {}: run {}: a key that is empty or a value longer than {} bytes; skipped",
                              path_, table, r.run_id, limits_.max_value_bytes));
          continue;
        }
        if (table == "params") r.params[s.text(1)] = s.text(2);
        if (table == "tags") r.tags[s.text(1)] = s.text(2);
        if (table == "metrics") r.metric_keys.push_back(s.text(1));
      }
      if (rc != SQLITE_DONE) return failure(part.table);
    }
    for (MlflowRun& r : out) {
      if (auto it = r.tags.find("mlflow.parentRunId"); it != r.tags.end()) r.parent_id = it->second;
      if (auto it = r.tags.find("mlflow.runName"); it != r.tags.end() && r.name.empty()) r.name = it->second;
    }
    return out;
  }

  Result<std::vector<MetricPoint>> metric_history(const MlflowRun& run, const std::string& key) override {
    SqliteStatement s(*file_,
                      "SELECT step, timestamp, value, is_nan FROM metrics WHERE run_uuid = ? AND key = ? ORDER BY "
                      "timestamp, step");
    if (!s.ok()) return failure("metrics");
    s.bind(1, run.run_id);
    s.bind(2, key);
    std::vector<MetricPoint> out;
    int64_t skipped = 0;
    int rc = 0;
    while ((rc = s.step()) == SQLITE_ROW) {
      // MLflow writes integers for step and timestamp and a float (or NULL with is_nan = 1) for the
      // value; anything else is not a number SQLite should convert (NULL and text would read as 0).
      const bool nan = s.type(3) == SQLITE_INTEGER && s.integer(3) != 0;
      const int value_type = s.type(2);
      const char* why = nullptr;
      if (s.type(0) != SQLITE_INTEGER || s.type(1) != SQLITE_INTEGER) {
        why = "step or timestamp is not an integer";
      } else if (!metric_timestamp_in_bounds(s.integer(1))) {
        why = "timestamp out of range";
      } else if (!nan && value_type != SQLITE_FLOAT && value_type != SQLITE_INTEGER) {
        why = value_type == SQLITE_NULL ? "value is NULL" : "value is not a number";
      }
      if (why != nullptr) {
        if (++skipped <= static_cast<int64_t>(kProblemsPerItem)) {
          problem(fmt::format("{}: table metrics: run {} metric {}: {}; point skipped", path_, run.run_id, key, why));
        }
        continue;
      }
      if (out.size() >= limits_.max_points_per_metric) {
        return Error{fmt::format("{}: table metrics: run {} metric {}: more than {} points; metric not read", path_,
                                 run.run_id, key, limits_.max_points_per_metric),
                     ErrorKind::kTooLarge};
      }
      MetricPoint p;
      p.step = s.integer(0);
      p.timestamp_ms = s.integer(1);
      p.value = nan ? std::numeric_limits<double>::quiet_NaN() : s.real(2);
      out.push_back(p);
    }
    if (rc != SQLITE_DONE) return failure("metrics");
    if (skipped > static_cast<int64_t>(kProblemsPerItem)) {
      problem(fmt::format("{}: table metrics: run {} metric {}: {} more point(s) skipped", path_, run.run_id, key,
                          skipped - static_cast<int64_t>(kProblemsPerItem)));
    }
    return out;
  }

  Result<std::optional<std::string>> artifact(const MlflowRun& run, const std::string& path) override {
    if (auto proxied = proxied_artifact_dir(run)) {
      auto checked = checked_artifact_path(path);
      if (!checked) return checked.error();
      return read_file_below(proxied->first, proxied->second + "/" + path, limits_.max_artifact_bytes);
    }
    return read_local_artifact(run.artifact_uri, path, limits_.max_artifact_bytes);
  }

  std::string unreadable_artifact_scheme(const MlflowRun& run) const override {
    if (proxied_artifact_dir(run)) return {};
    return remote_artifact_scheme(run.artifact_uri);
  }

 private:
  static std::string shown_type(const std::string& type) {
    if (type == "view" || type == "index" || type == "trigger") return type;
    return "'" + type.substr(0, 32) + "' object";
  }

  // A text cell of at most max_value_bytes; a longer one is reported and read as empty.
  std::string capped_text(const SqliteStatement& s, int column, const char* table, const std::string& run_id,
                          const char* name) {
    if (s.bytes(column) <= limits_.max_value_bytes) return s.text(column);
    problem(fmt::format("{}: table {}: run {}: {} is longer than {} bytes; left empty", path_, table, run_id, name,
                        limits_.max_value_bytes));
    return {};
  }

  // A run of a server with proxied artifacts (mlflow-artifacts:/<exp>/<run>/artifacts) keeps them
  // below the server's --artifacts-destination; MLflow's default is ./mlartifacts beside the
  // server, which for `mlflow server --backend-store-uri sqlite:///mlflow.db` is beside the
  // database. When that folder holds the run's artifact folder: (mlartifacts, "<exp>/<run>/artifacts").
  std::optional<std::pair<std::string, std::string>> proxied_artifact_dir(const MlflowRun& run) const {
    std::string_view uri(run.artifact_uri);
    if (!uri.starts_with("mlflow-artifacts:")) return std::nullopt;
    uri.remove_prefix(17);
    if (uri.starts_with("//")) {  // an authority: mlflow-artifacts://host:port/path
      uri.remove_prefix(2);
      const size_t slash = uri.find('/');
      if (slash == std::string_view::npos) return std::nullopt;
      uri.remove_prefix(slash);
    }
    while (uri.starts_with("/")) uri.remove_prefix(1);
    while (uri.ends_with("/")) uri.remove_suffix(1);
    if (!is_plain_relative_path(uri)) return std::nullopt;
    const fs::path destination = fs::path(path_).parent_path() / "mlartifacts";
    std::error_code ec;
    if (!fs::is_directory(destination / uri, ec)) return std::nullopt;
    return std::make_pair((destination.empty() ? fs::path(".") : destination).string(), std::string(uri));
  }

  Error failure(const char* table) const {
    if (file_->expired()) {
      return Error{
          fmt::format("{}: a query on table {} took longer than {} s; stopped (is this an MLflow database?)", path_,
                      table, std::chrono::duration_cast<std::chrono::seconds>(limits_.query_deadline).count()),
          ErrorKind::kTooLarge};
    }
    return Error{
        fmt::format("{}: cannot read table {}: {} (is this an MLflow database?)", path_, table, file_->message()),
        ErrorKind::kIo};
  }

  std::unique_ptr<SqliteFile> file_;
  std::string path_;
  MlflowReadLimits limits_;
};

}  // namespace

Result<std::unique_ptr<MlflowStore>> open_mlflow_sqlite_store(const std::string& path, const MlflowReadLimits& limits) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Error{fmt::format("{}: no such MLflow SQLite database", path), ErrorKind::kNotFound};
  }
  SqliteLimits sqlite_limits;
  sqlite_limits.query_deadline = limits.query_deadline;
  auto file = SqliteFile::open(path, sqlite_limits);
  if (!file) return file.error();
  auto store = std::make_unique<SqliteStore>(std::move(file).value(), path, limits);
  if (Status schema = store->check_schema(); !schema) return schema.error();
  return std::unique_ptr<MlflowStore>(std::move(store));
}

}  // namespace scaleprof::importers

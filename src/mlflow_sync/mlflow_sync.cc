#include "mlflow_sync/mlflow_sync.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "importers/mlflow/mlflow_store.h"
#include "importers/run_reader.h"
#include "mlflow_sync/mlflow_writer.h"
#include "mlflow_sync/profiling_artifact.h"
#include "mlflow_sync/sync_lock.h"
#include "mlflow_sync/sync_payload.h"
#include "mlflow_sync/sync_plan.h"
#include "mlflow_sync/sync_progress.h"

namespace scaleprof::mlflow_sync {

namespace {

using Tags = std::vector<std::pair<std::string, std::string>>;

// A metric point as the server stores it; the value compared bit for bit (what we send reads back
// as the same double).
using PointKey = std::tuple<std::string, int64_t, int64_t, uint64_t>;

uint64_t bits(double v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}

class Syncer {
 public:
  Syncer(const SyncOptions& options, std::string progress_path, const std::string& base_url)
      : options_(options), progress_path_(std::move(progress_path)), writer_(base_url, options.kill_after_requests) {}

  Status load() {
    auto p = load_progress(progress_path_);
    if (!p) return p.error();
    if (!p.value().problem.empty()) warnings_.push_back(p.value().problem);
    progress_ = std::move(p.value().progress);
    progress_.server = writer_.shown_url();
    return Ok{};
  }

  int64_t requests() const { return writer_.requests(); }
  std::vector<std::string>& warnings() { return warnings_; }

  // The experiment's id and its synced runs, looked up once per experiment.
  Status open_experiment(const std::string& name) {
    if (experiments_.count(name) != 0) return Ok{};
    auto id = writer_.experiment_id(name);
    if (!id) return id.error();
    std::vector<std::string> duplicates;
    auto runs = writer_.synced_runs(id.value(), &duplicates);
    if (!runs) return runs.error();
    for (std::string& d : duplicates) warn_once(std::move(d));
    experiments_[name] = {id.value(), std::move(runs.value())};
    return Ok{};
  }

  Result<RunOutcome> sync(const TrainingPlan& plan, const std::string& experiment_name) {
    if (Status s = open_experiment(experiment_name); !s) return s.error();
    Experiment& exp = experiments_[experiment_name];
    RunOutcome out;
    out.experiment = experiment_name;
    out.run = plan.parent.name;
    out.workers = static_cast<int64_t>(plan.workers.size());
    const std::string digest = plan_digest(plan);
    bool was_complete = false;
    const auto found = exp.runs.find(plan.parent.sync_id);
    if (found != exp.runs.end()) {
      out.run_id = found->second.run_id;
      was_complete = tag(found->second, kSyncCompleteTag) == "true";
      if (was_complete && !options_.verify && tag(found->second, kSyncDigestTag) == digest &&
          all_on_server(exp, plan)) {
        out.action = "unchanged";
        RunProgress& p = progress_.runs[plan.parent.sync_id];
        if (!p.complete || p.run_id != out.run_id) {
          p = {out.run_id, true, true};
          if (Status s = save(); !s) return s.error();
        }
        return out;
      }
      out.action = "resumed";
    } else {
      out.action = "synced";
    }
    auto parent = ensure_run(exp, plan.parent, {});
    if (!parent) return parent.error();
    out.run_id = parent.value().run_id;
    for (const RunPlan& worker : plan.workers) {
      auto child = ensure_run(exp, worker, {{"mlflow.parentRunId", out.run_id}});
      if (!child) return child.error();
      if (Status s = fill_run(worker, child.value(), &out); !s) return s.error();
    }
    if (Status s = fill_run(plan.parent, parent.value(), &out); !s) return s.error();
    // Last: the mark that every child, point and artifact is there, for exactly this plan. A sync
    // stopped before it resumes; a run marked for another plan (recorded files changed, a newer
    // scaleprof) is checked against the server again.
    LogBatch mark;
    mark.tags = {{kSyncCompleteTag, "true"}, {kSyncDigestTag, digest}};
    if (Status s = writer_.log_batch(out.run_id, mark); !s) return s.error();
    exp.runs[plan.parent.sync_id].tags[kSyncCompleteTag] = "true";
    exp.runs[plan.parent.sync_id].tags[kSyncDigestTag] = digest;
    if (was_complete) out.action = out.metric_points > 0 || out.artifacts > 0 ? "repaired" : "unchanged";
    return out;
  }

 private:
  struct Experiment {
    std::string id;
    std::map<std::string, importers::MlflowRun> runs;  // by sync id
  };

  static std::string tag(const importers::MlflowRun& run, const char* name) {
    auto it = run.tags.find(name);
    return it == run.tags.end() ? std::string() : it->second;
  }

  // What the experiment's search showed: every run of the plan with every metric key it should have.
  // (A worker deleted on the server, or a metric missing, makes the run be checked in full.)
  static bool all_on_server(const Experiment& exp, const TrainingPlan& plan) {
    auto has = [&](const RunPlan& p) {
      auto it = exp.runs.find(p.sync_id);
      if (it == exp.runs.end()) return false;
      const std::vector<std::string>& keys = it->second.metric_keys;
      return std::all_of(p.metrics.begin(), p.metrics.end(),
                         [&](const MetricValue& m) { return std::binary_search(keys.begin(), keys.end(), m.key); });
    };
    return has(plan.parent) && std::all_of(plan.workers.begin(), plan.workers.end(), has);
  }

  Status save() { return save_progress(progress_path_, progress_); }

  // The server's run for this plan: found by its sync id (in the experiment's search, else by a
  // search for this id right now, which finds a run another sync made since), or created (and
  // recorded at once).
  Result<importers::MlflowRun> ensure_run(Experiment& exp, const RunPlan& plan, Tags tags) {
    auto it = exp.runs.find(plan.sync_id);
    if (it == exp.runs.end()) {
      auto now = writer_.runs_with_sync_id(exp.id, plan.sync_id);
      if (!now) return now.error();
      if (!now.value().empty()) it = exp.runs.emplace(plan.sync_id, now.value().front()).first;
    }
    if (it != exp.runs.end()) {
      RunProgress& p = progress_.runs[plan.sync_id];
      if (p.run_id != it->second.run_id) p = {it->second.run_id, false, false};
      return it->second;
    }
    progress_.runs.erase(plan.sync_id);  // recorded, but gone from the server (deleted, a new database)
    tags.emplace_back(kSyncIdTag, plan.sync_id);
    auto created = writer_.create_run(exp.id, plan, tags);
    if (!created) return created.error();
    created_.insert(created.value().run_id);
    progress_.runs[plan.sync_id] = {created.value().run_id, false, false};
    if (Status s = save(); !s) return s.error();
    exp.runs[plan.sync_id] = created.value();
    return created;
  }

  // Params, tags, metric points, artifacts and the final status of one run: whatever the server
  // lacks, whatever the progress record says (the server is the truth).
  Status fill_run(const RunPlan& plan, const importers::MlflowRun& run, RunOutcome* out) {
    const bool fresh = created_.count(run.run_id) != 0;
    std::vector<MetricValue> metrics;
    auto missing = missing_points(plan, run);
    if (!missing) return missing.error();
    metrics = std::move(missing.value());
    // A param cannot change once logged: send the ones the server lacks; one it holds with another
    // value is left and said.
    std::vector<std::pair<std::string, std::string>> params;
    for (const auto& [key, value] : plan.params) {
      auto it = run.params.find(key);
      if (fresh || it == run.params.end()) {
        params.emplace_back(key, value);
      } else if (it->second != value) {
        warn_once(
            fmt::format("{}: the server's run {} holds param {} = '{}' where the run directory says '{}'; "
                        "left as it is",
                        plan.sync_id, run.run_id, key, it->second, value));
      }
    }
    BatchLimits limits;
    limits.max_metrics = std::clamp<size_t>(options_.batch_metrics, 1, limits.max_metrics);
    for (const LogBatch& batch : split_batches(params, plan.tags, metrics, limits)) {
      if (Status s = writer_.log_batch(run.run_id, batch); !s) return s.error();
      out->metric_points += static_cast<int64_t>(batch.metrics.size());
    }
    progress_.runs[plan.sync_id].metrics_done = true;
    if (Status s = save(); !s) return s.error();
    if (options_.artifacts && (!plan.artifacts.empty() || plan.profiling)) {
      if (Status s = upload_artifacts(plan, run, fresh, out); !s) return s;
    }
    if (Status s = writer_.update_run(run.run_id, plan); !s) return s.error();
    progress_.runs[plan.sync_id].complete = true;
    return save();
  }

  Status upload_artifacts(const RunPlan& plan, const importers::MlflowRun& run, bool fresh, RunOutcome* out) {
    const std::string root = proxied_artifact_root(run.artifact_uri);
    if (root.empty()) {
      warn_once(
          fmt::format("{}: the runs' artifact root '{}' is not served by the server (start it with "
                      "--serve-artifacts); artifacts not uploaded",
                      writer_.shown_url(), redact_url(run.artifact_uri)));
      return Ok{};
    }
    // A run that was on the server before: what it holds already (same path and size) is not sent again.
    std::map<std::string, int64_t> present;
    if (!fresh) {
      std::set<std::string> folders;
      for (const ArtifactFile& file : plan.artifacts) folders.insert(parent_folder(file.artifact_path));
      if (plan.profiling) folders.insert(parent_folder(kProfilingArtifactPath));
      for (const std::string& folder : folders) {
        auto listed = writer_.artifact_sizes(run.run_id, folder);
        if (!listed) return listed.error();
        present.insert(listed.value().begin(), listed.value().end());
      }
    }
    for (const ArtifactFile& file : plan.artifacts) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(file.local_path, ec);
      auto it = present.find(file.artifact_path);
      if (!ec && it != present.end() && static_cast<uintmax_t>(it->second) == size) continue;
      if (Status s = writer_.upload_artifact(root, file); !s) return s.error();
      ++out->artifacts;
    }
    if (plan.profiling && present.count(kProfilingArtifactPath) == 0) {
      // A trace the operator table cannot read is a warning: the trace itself is uploaded.
      auto csv = profiling_averages_csv(*plan.profiling);
      if (!csv) {
        warn_once(fmt::format("{}: no {}: {}", plan.sync_id, kProfilingArtifactPath, csv.error().message));
      } else {
        if (Status s = writer_.upload_bytes(root, kProfilingArtifactPath, csv.value()); !s) return s.error();
        ++out->artifacts;
      }
    }
    return Ok{};
  }

  static std::string parent_folder(const std::string& artifact_path) {
    const size_t slash = artifact_path.rfind('/');
    return slash == std::string::npos ? std::string() : artifact_path.substr(0, slash);
  }

  // The plan's points not yet on the server, each exactly once. A run created by this sync holds
  // none; a run found on the server may hold some (a sync stopped part way, an older sync), so their
  // histories are read first. Per metric and step, the server is sent at most what the plan has
  // more than it holds there: a point the server holds with another value (an older sync's layout)
  // is not sent a second time beside it, but said.
  Result<std::vector<MetricValue>> missing_points(const RunPlan& plan, const importers::MlflowRun& run) {
    if (created_.count(run.run_id) != 0 || plan.metrics.empty()) return plan.metrics;
    std::set<std::string> keys;
    for (const MetricValue& m : plan.metrics) keys.insert(m.key);
    std::multiset<PointKey> present;
    std::map<std::pair<std::string, int64_t>, int64_t> at_step;  // (key, step) -> points the server holds
    for (const std::string& key : keys) {
      if (!std::binary_search(run.metric_keys.begin(), run.metric_keys.end(), key)) continue;
      auto history = writer_.metric_history(run.run_id, key);
      if (!history) return history.error();
      for (const importers::MetricPoint& point : history.value()) {
        present.emplace(key, point.step, point.timestamp_ms, bits(point.value));
        ++at_step[{key, point.step}];
      }
    }
    std::map<std::pair<std::string, int64_t>, int64_t> planned;  // (key, step) -> points of the plan
    for (const MetricValue& m : plan.metrics) ++planned[{m.key, m.step}];
    std::vector<MetricValue> out;
    std::map<std::pair<std::string, int64_t>, int64_t> room;  // how many more the server may get
    for (const auto& [ks, n] : planned) room[ks] = n - (at_step.count(ks) != 0 ? at_step[ks] : 0);
    int64_t differing = 0;
    for (const MetricValue& m : plan.metrics) {
      auto exact = present.find({m.key, m.step, m.timestamp_ms, bits(m.value)});
      if (exact != present.end()) {
        present.erase(exact);  // this one is there; a second equal point in the plan is not
        continue;
      }
      int64_t& left = room[{m.key, m.step}];
      if (left > 0) {
        out.push_back(m);
        --left;
      } else {
        ++differing;
      }
    }
    if (differing > 0) {
      warn_once(
          fmt::format("{}: the server's run {} holds {} metric point(s) with other values or times than the "
                      "run directory at the same steps; they are left as they are, nothing is sent twice",
                      plan.sync_id, run.run_id, differing));
    }
    return out;
  }

  void warn_once(std::string text) {
    if (std::find(warnings_.begin(), warnings_.end(), text) == warnings_.end()) warnings_.push_back(std::move(text));
  }

  const SyncOptions& options_;
  std::string progress_path_;
  MlflowWriter writer_;
  SyncProgress progress_;
  std::map<std::string, Experiment> experiments_;
  std::set<std::string> created_;  // run ids created by this sync
  std::vector<std::string> warnings_;
};

}  // namespace

Result<SyncSummary> sync_runs(const SyncOptions& options, const std::function<void(std::string_view)>& progress) {
  auto uri = importers::parse_tracking_uri(options.tracking_uri);
  if (!uri) return uri.error();
  if (uri.value().kind != importers::TrackingKind::kServer) {
    return Error{fmt::format("mlflow sync writes to an MLflow server: --tracking-uri must be http://HOST:PORT or "
                             "https://... (got '{}')",
                             redact_url(options.tracking_uri)),
                 ErrorKind::kUsage};
  }
  SyncSummary summary;
  std::error_code ec;
  if (!std::filesystem::is_directory(options.root, ec)) {
    return Error{fmt::format("{}: no such directory (nothing recorded yet?)", options.root), ErrorKind::kNotFound};
  }
  // One sync per root and server (sync_lock.h). A root this user cannot write (a colleague's runs,
  // read-only storage) with --progress-file elsewhere: the lock goes beside that file instead.
  summary.lock_path = default_lock_path(options.root, uri.value().location);
  auto lock = SyncLock::acquire(summary.lock_path, options.wait_for_lock);
  if (!lock && !options.progress_path.empty()) {
    const std::string why = lock.error().message;
    summary.lock_path = options.progress_path + ".lock";
    lock = SyncLock::acquire(summary.lock_path, options.wait_for_lock);
    if (lock) {
      summary.warnings.push_back(fmt::format(
          "{}; the sync lock is {} instead, so only syncs with this --progress-file are kept from running at once", why,
          summary.lock_path));
    }
  }
  if (!lock) return lock.error();
  if (!lock.value().held()) {
    summary.busy = lock.value().holder();
    return summary;
  }
  std::vector<std::string> problems;
  importers::ReadOptions read;
  auto runs = importers::read_runs(options.root, options.experiment, read, &problems);
  if (!runs) return runs.error();
  summary.warnings.insert(summary.warnings.end(), problems.begin(), problems.end());
  if (!options.experiment.empty() && runs.value().empty()) {
    return Error{fmt::format("{}: no runs of experiment '{}'", options.root, options.experiment), ErrorKind::kNotFound};
  }
  std::vector<const importers::RunData*> selected;
  for (const importers::RunData& run : runs.value()) {
    if (options.run_names.empty() ||
        std::find(options.run_names.begin(), options.run_names.end(), run.run) != options.run_names.end()) {
      selected.push_back(&run);
    }
  }
  for (const std::string& name : options.run_names) {
    if (std::none_of(selected.begin(), selected.end(), [&](const importers::RunData* r) { return r->run == name; })) {
      return Error{fmt::format("{}: no run named '{}'", options.root, name), ErrorKind::kNotFound};
    }
  }
  summary.progress_path =
      options.progress_path.empty() ? default_progress_path(options.root, uri.value().location) : options.progress_path;
  Syncer syncer(options, summary.progress_path, uri.value().location);
  if (Status s = syncer.load(); !s) return s.error();
  size_t index = 0;
  for (const importers::RunData* run : selected) {
    ++index;
    // What the reader said about the run (a symbolic link not followed, a torn line): the sync
    // sends what could be read, and says so.
    for (const Diagnostic& w : run->warnings) summary.warnings.push_back(w.text());
    TrainingPlan plan = plan_training(*run);
    const std::string experiment = options.experiment_name.empty() ? plan.experiment : options.experiment_name;
    RunOutcome outcome;
    if (run->status == collect::kStatusRunning) {
      outcome = {experiment, plan.parent.name, "skipped", "still running: its files still grow", "", 0, 0, 0};
    } else {
      auto synced = syncer.sync(plan, experiment);
      if (!synced) return synced.error();
      outcome = std::move(synced.value());
    }
    if (progress) {
      progress(fmt::format("[{}/{}] {}/{}: {}{} ({} workers, {} metric points, {} artifacts sent)", index,
                           selected.size(), experiment, outcome.run, outcome.action,
                           outcome.detail.empty() ? "" : ": " + outcome.detail, outcome.workers, outcome.metric_points,
                           outcome.artifacts));
    }
    summary.runs.push_back(std::move(outcome));
  }
  for (std::string& w : syncer.warnings()) summary.warnings.push_back(std::move(w));
  summary.requests = syncer.requests();
  return summary;
}

}  // namespace scaleprof::mlflow_sync

#include "mlflow_sync/mlflow_sync.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "collect/run_reader.h"
#include "importers/mlflow_store.h"
#include "mlflow_sync/mlflow_writer.h"
#include "mlflow_sync/profiling_artifact.h"
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
    progress_ = std::move(p.value());
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
    auto runs = writer_.synced_runs(id.value());
    if (!runs) return runs.error();
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
    const auto found = exp.runs.find(plan.parent.sync_id);
    if (found != exp.runs.end()) {
      out.run_id = found->second.run_id;
      auto complete = found->second.tags.find(kSyncCompleteTag);
      if (complete != found->second.tags.end() && complete->second == "true") {
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
    // Last: the mark that every child, point and artifact is there. A sync stopped before it resumes.
    LogBatch mark;
    mark.tags = {{kSyncCompleteTag, "true"}};
    if (Status s = writer_.log_batch(out.run_id, mark); !s) return s.error();
    return out;
  }

 private:
  struct Experiment {
    std::string id;
    std::map<std::string, importers::MlflowRun> runs;  // by sync id
  };

  Status save() { return save_progress(progress_path_, progress_); }

  // The server's run for this plan: found by its sync id, or created (and recorded at once, so a
  // crash right after still knows it; the server search would find it too).
  Result<importers::MlflowRun> ensure_run(Experiment& exp, const RunPlan& plan, Tags tags) {
    if (auto it = exp.runs.find(plan.sync_id); it != exp.runs.end()) {
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

  // Params, tags, metric points, artifacts and the final status of one run.
  Status fill_run(const RunPlan& plan, const importers::MlflowRun& run, RunOutcome* out) {
    RunProgress& p = progress_.runs[plan.sync_id];
    if (p.complete) return Ok{};
    std::vector<MetricValue> metrics;
    if (!p.metrics_done) {
      auto missing = missing_points(plan, run);
      if (!missing) return missing.error();
      metrics = std::move(missing.value());
    }
    BatchLimits limits;
    limits.max_metrics = std::clamp<size_t>(options_.batch_metrics, 1, limits.max_metrics);
    for (const LogBatch& batch : split_batches(plan.params, plan.tags, metrics, limits)) {
      if (Status s = writer_.log_batch(run.run_id, batch); !s) return s.error();
      out->metric_points += static_cast<int64_t>(batch.metrics.size());
    }
    if (!p.metrics_done) {
      progress_.runs[plan.sync_id].metrics_done = true;
      if (Status s = save(); !s) return s.error();
    }
    if (options_.artifacts && (!plan.artifacts.empty() || plan.profiling)) {
      const std::string root = proxied_artifact_root(run.artifact_uri);
      if (root.empty()) {
        warn_once(
            fmt::format("{}: the runs' artifact root '{}' is not served by the server (start it with "
                        "--serve-artifacts); artifacts not uploaded",
                        writer_.shown_url(), importers::redact_url(run.artifact_uri)));
      } else {
        for (const ArtifactFile& file : plan.artifacts) {
          if (Status s = writer_.upload_artifact(root, file); !s) return s.error();
          ++out->artifacts;
        }
        if (plan.profiling) {
          // A trace the operator table cannot read is a warning: the trace itself is uploaded.
          auto csv = profiling_averages_csv(*plan.profiling);
          if (!csv) {
            warn_once(fmt::format("{}: no {}: {}", plan.sync_id, kProfilingArtifactPath, csv.error().message));
          } else {
            if (Status s = writer_.upload_bytes(root, kProfilingArtifactPath, csv.value()); !s) return s.error();
            ++out->artifacts;
          }
        }
      }
    }
    if (Status s = writer_.update_run(run.run_id, plan); !s) return s.error();
    progress_.runs[plan.sync_id].complete = true;
    return save();
  }

  // The plan's points not yet on the server. A run created by this sync holds none; a run found on
  // the server may hold some (a sync stopped part way), so their history is read first.
  Result<std::vector<MetricValue>> missing_points(const RunPlan& plan, const importers::MlflowRun& run) {
    if (created_.count(run.run_id) != 0 || plan.metrics.empty()) return plan.metrics;
    std::set<std::string> keys;
    for (const MetricValue& m : plan.metrics) keys.insert(m.key);
    std::set<PointKey> present;
    for (const std::string& key : keys) {
      if (!std::binary_search(run.metric_keys.begin(), run.metric_keys.end(), key)) continue;
      auto history = writer_.metric_history(run.run_id, key);
      if (!history) return history.error();
      for (const importers::MetricPoint& point : history.value()) {
        present.emplace(key, point.step, point.timestamp_ms, bits(point.value));
      }
    }
    std::vector<MetricValue> out;
    for (const MetricValue& m : plan.metrics) {
      if (present.count({m.key, m.step, m.timestamp_ms, bits(m.value)}) == 0) out.push_back(m);
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
    return Error{
        fmt::format("mlflow sync writes to an MLflow server: --tracking-uri must be http://HOST:PORT or "
                    "https://... (got '{}')",
                    importers::redact_url(options.tracking_uri))};
  }
  SyncSummary summary;
  std::vector<std::string> problems;
  collect::ReadOptions read;
  auto runs = collect::read_runs(options.root, options.experiment, read, &problems);
  if (!runs) return runs.error();
  summary.warnings = problems;
  if (!options.experiment.empty() && runs.value().empty()) {
    return Error{fmt::format("{}: no runs of experiment '{}'", options.root, options.experiment)};
  }
  std::vector<const collect::RunData*> selected;
  for (const collect::RunData& run : runs.value()) {
    if (options.run_names.empty() ||
        std::find(options.run_names.begin(), options.run_names.end(), run.run) != options.run_names.end()) {
      selected.push_back(&run);
    }
  }
  for (const std::string& name : options.run_names) {
    if (std::none_of(selected.begin(), selected.end(), [&](const collect::RunData* r) { return r->run == name; })) {
      return Error{fmt::format("{}: no run named '{}'", options.root, name)};
    }
  }
  summary.progress_path =
      options.progress_path.empty() ? default_progress_path(options.root, uri.value().location) : options.progress_path;
  Syncer syncer(options, summary.progress_path, uri.value().location);
  if (Status s = syncer.load(); !s) return s.error();
  size_t index = 0;
  for (const collect::RunData* run : selected) {
    ++index;
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

#include "importers/mlflow/mlflow_importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/number_text.h"
#include "importers/csv.h"
#include "importers/mlflow/mlflow_meta.h"
#include "importers/profiling_averages.h"
#include "importers/run_data_reader.h"
#include "importers/value_checks.h"

namespace scaleprof::importers {

namespace {

constexpr const char* kEpochTime = "epoch_time_s";
// Each worker's samples of each epoch (step = epoch), as `scaleprof mlflow sync` logs them from the
// run directory; itwinai logs none.
constexpr const char* kEpochSamples = "epoch_samples";
constexpr const char* kGpuUtilization = "gpu_utilization_percent";
constexpr const char* kGpuPower = "gpu_power_W";
constexpr const char* kProfilingArtifact = "torch_profiling_averages/torch_profiling_averages.csv";

// MLflow params as the training logged them (core/number_text.h): nothing around the number; an
// integer as digits or as Python writes a float ("4.0").
constexpr NumberSyntax kParamNumber{false, false, true, true};

std::string param(const MlflowRun& run, const char* key) {
  auto it = run.params.find(key);
  return it == run.params.end() ? std::string() : it->second;
}

bool has_metric(const MlflowRun& run, const char* key) {
  return std::binary_search(run.metric_keys.begin(), run.metric_keys.end(), std::string(key));
}

// MLflow's run status in the report's words.
std::string status_of(const std::string& s) {
  if (s == "FINISHED") return "completed";
  if (s == "FAILED") return "failed";
  if (s == "RUNNING" || s == "SCHEDULED") return "running";
  if (s == "KILLED") return "incomplete";
  return "";
}

// The samples the workers of one configuration gave for one epoch, by worker (its global rank, else
// its run id: a worker run recorded twice is counted once). A worker that gives one epoch two
// different counts gives none for it.
struct WorkerSamples {
  std::map<std::string, double> by_worker;
  std::set<std::string> conflicting;
};

// The epoch's samples summed over the workers, or NaN unless every one of the `workers` gave them
// (the run-directory reader's rule: a missing worker would understate the throughput).
double complete_samples(const std::map<int64_t, WorkerSamples>& epochs, int64_t epoch, int64_t workers) {
  auto it = epochs.find(epoch);
  if (it == epochs.end() || !it->second.conflicting.empty() ||
      static_cast<int64_t>(it->second.by_worker.size()) != workers) {
    return tables::kNaN;
  }
  double sum = 0;
  for (const auto& [worker, samples] : it->second.by_worker) sum += samples;
  return sum;
}

// One training: the run whose children are the workers.
struct Training {
  const MlflowRun* run = nullptr;
  std::string name;  // top run name, or "top/trial" for Ray trials
  std::vector<const MlflowRun*> workers;
};

class Importer {
 public:
  Importer(MlflowStore& store, const MlflowReadOptions& options) : store_(store), opt_(options) {}

  Result<tables::ScalabilityData> read() {
    auto id = store_.experiment_id(opt_.experiment_name);
    collect_problems();
    if (!id) return id.error();
    if (!id.value()) {
      std::string skipped;
      if (!data_.errors.empty()) {
        skipped =
            fmt::format(" ({} item(s) could not be read, the first: {})", data_.errors.size(), data_.errors[0].text());
      }
      return Error{fmt::format("Experiment '{}' does not exist in MLflow at '{}'{}", opt_.experiment_name,
                               store_.describe(), skipped),
                   ErrorKind::kNotFound};
    }
    auto runs = store_.runs(*id.value());
    collect_problems();
    if (!runs) return runs.error();
    runs_ = std::move(runs).value();
    // Stores list runs in different orders (a server newest first, a file store by id): sort by
    // name so every store gives the same report.
    std::stable_sort(runs_.begin(), runs_.end(), [](const MlflowRun& x, const MlflowRun& y) {
      return std::tie(x.name, x.run_id) < std::tie(y.name, y.run_id);
    });
    for (const MlflowRun& r : runs_) {
      if (!r.parent_id.empty()) children_[r.parent_id].push_back(&r);
    }
    std::vector<const MlflowRun*> tops;
    if (opt_.run_names.empty()) {
      for (const MlflowRun& r : runs_) {
        if (r.parent_id.empty()) tops.push_back(&r);
      }
    } else {
      for (const std::string& name : opt_.run_names) {
        bool found = false;
        for (const MlflowRun& r : runs_) {
          if (r.name == name) {
            tops.push_back(&r);
            found = true;
          }
        }
        if (!found)
          data_.warnings.push_back(Diagnostic{
              Severity::kWarning, {}, fmt::format("no run named '{}' in experiment '{}'", name, opt_.experiment_name)});
      }
    }
    for (const MlflowRun* top : tops) {
      for (const Training& t : trainings(top)) read_training(t);
    }
    note_joins();
    warn_unreadable_artifacts();
    return std::move(data_);
  }

 private:
  // The store's skipped items are the report's input errors (exit code 3), as the run-directory
  // reader's skipped lines are.
  void collect_problems() {
    for (std::string& p : store_.take_problems()) data_.errors.push_back(diagnostic(Severity::kError, std::move(p)));
  }

  // The run's id and name are the server's words: a name can hold a URL with a password in it.
  std::string where(const MlflowRun& w) const {
    return fmt::format("{} run {}", store_.describe(), store_.redact(fmt::format("{} ({})", w.run_id, w.name)));
  }

  // One metric's history, or nothing with one error naming the run (the rest of the run and the
  // other runs are still read). Points the store skipped are reported too.
  std::optional<std::vector<MetricPoint>> history(const MlflowRun& w, const char* key) {
    auto h = store_.metric_history(w, key);
    collect_problems();
    if (!h) {
      data_.errors.push_back(
          Diagnostic{Severity::kError, where(w), fmt::format("metric {}: {}; metric skipped", key, h.error().message)});
      return std::nullopt;
    }
    return std::move(h).value();
  }

  // Points rejected by the value checks of every reader (importers/value_checks.h): at most
  // kProblemsPerItem messages per run and metric, then one line with the count. A skipped point is an
  // error (exit 3); a GPU value ignored while its sample is kept is a warning, as the run-directory
  // and itwinai CSV readers report the same value, so one corrupt sample gives one exit code whatever
  // the layout it was read from.
  class PointErrors {
   public:
    PointErrors(Importer& in, const MlflowRun& w, const char* key, Severity severity, std::vector<Diagnostic>* sink)
        : in_(in), w_(w), key_(key), severity_(severity), sink_(sink) {}
    PointErrors(const PointErrors&) = delete;
    PointErrors& operator=(const PointErrors&) = delete;
    ~PointErrors() {
      if (count_ > static_cast<int64_t>(kProblemsPerItem)) {
        sink_->push_back(Diagnostic{
            severity_, in_.where(w_),
            fmt::format("{} more {} value(s) rejected", count_ - static_cast<int64_t>(kProblemsPerItem), key_)});
      }
    }
    void add(int64_t step, const std::string& why, const char* what) {
      if (++count_ <= static_cast<int64_t>(kProblemsPerItem)) {
        sink_->push_back(Diagnostic{severity_, in_.where(w_), fmt::format("{} at step {}; {}", why, step, what)});
      }
    }

   private:
    Importer& in_;
    const MlflowRun& w_;
    const char* key_;
    Severity severity_;
    std::vector<Diagnostic>* sink_;
    int64_t count_ = 0;
  };

  const std::vector<const MlflowRun*>& children(const MlflowRun* run) {
    static const std::vector<const MlflowRun*> kNone;
    auto it = children_.find(run->run_id);
    return it == children_.end() ? kNone : it->second;
  }

  // itwinai's rule: a child with children of its own is a Ray trial whose children are the workers;
  // otherwise the children are the workers. A run without children is its own (only) worker.
  std::vector<Training> trainings(const MlflowRun* top) {
    std::vector<Training> out;
    Training direct{top, top->name, {}};
    for (const MlflowRun* child : children(top)) {
      const auto& grand = children(child);
      if (grand.empty()) {
        direct.workers.push_back(child);
      } else {
        out.push_back({child, top->name + "/" + child->name, grand});
      }
    }
    if (!direct.workers.empty()) out.insert(out.begin(), direct);
    if (out.empty()) out.push_back({top, top->name, {top}});
    return out;
  }

  void read_training(const Training& t) {
    // One tables::RunData per (strategy, world size) among the workers (normally exactly one).
    std::map<std::pair<std::string, int64_t>, tables::RunData> by_config;
    std::map<std::pair<std::string, int64_t>, std::map<int64_t, double>> epochs;          // step -> slowest worker
    std::map<std::pair<std::string, int64_t>, std::map<int64_t, WorkerSamples>> samples;  // step -> by worker
    auto run_for = [&](const std::string& strategy, int64_t workers) -> tables::RunData& {
      tables::RunData& r = by_config[{strategy, workers}];
      if (r.layout.empty()) {
        r.layout = "mlflow";
        r.experiment = opt_.experiment_name;
        r.name = t.name;
        r.strategy = strategy;
        r.workers = workers;
        r.path = fmt::format("{} run {}", store_.describe(), t.run->run_id);
        r.status = status_of(t.run->status);
        // itwinai logs no node count; runs pushed by `scaleprof mlflow sync` carry it as a param.
        int64_t nodes = 0;
        if (parse_int64(param(*t.run, "nodes"), &nodes, kParamNumber) && nodes > 0 && nodes <= kMaxWorkers)
          r.nodes = nodes;
      }
      return r;
    };
    for (const MlflowRun* w : t.workers) {
      std::string strategy = param(*w, "strategy");
      if (strategy.empty()) strategy = param(*t.run, "strategy");
      std::string size_text = param(*w, "global_world_size");
      if (size_text.empty()) size_text = param(*t.run, "global_world_size");
      int64_t world = 0;
      const bool wants = has_metric(*w, kEpochTime) || has_metric(*w, kEpochSamples) || has_metric(*w, kGpuPower) ||
                         has_metric(*w, kGpuUtilization);
      if (strategy.empty() || !parse_int64(size_text, &world, kParamNumber) || world <= 0 || world > kMaxWorkers) {
        if (wants) {
          data_.errors.push_back(Diagnostic{Severity::kError, where(*w),
                                            "params strategy and global_world_size are missing or not valid; run "
                                            "skipped"});
        }
        // Its profiling artifact names strategy and num_gpus itself.
        read_profiling(*w, run_for);
        continue;
      }
      tables::RunData& run = run_for(strategy, world);
      if (has_metric(*w, kEpochTime)) {
        if (auto points = history(*w, kEpochTime)) {
          auto& steps = epochs[{strategy, world}];
          PointErrors bad(*this, *w, kEpochTime, Severity::kError, &data_.errors);
          for (const MetricPoint& p : *points) {
            const std::string why = std::isnan(p.value)
                                        ? fmt::format("{} is NaN", kEpochTime)
                                        : implausible_value(Quantity::kEpochSeconds, kEpochTime, p.value);
            if (!why.empty()) {
              bad.add(p.step, why, "point skipped");
              continue;
            }
            auto [it, inserted] = steps.try_emplace(p.step, p.value);
            if (!inserted) it->second = std::max(it->second, p.value);  // the epoch ends with the slowest worker
          }
        }
      }
      if (has_metric(*w, kEpochSamples)) read_samples(*w, world, &samples[{strategy, world}]);
      bool gpu = false;
      for (const std::string& k : w->metric_keys) gpu |= k.find("gpu") != std::string::npos;
      if (gpu) read_gpu(*w, &run);
      read_profiling(*w, run_for);
    }
    for (auto& [key, run] : by_config) {
      auto it = epochs.find(key);
      if (it != epochs.end()) {
        const std::map<int64_t, WorkerSamples>& given = samples[key];
        for (const auto& [step, seconds] : it->second) {
          tables::EpochTime time{step, seconds};
          time.samples = complete_samples(given, step, run.workers);
          run.epochs.push_back(time);
        }
      }
      data_.runs.push_back(std::move(run));
    }
  }

  // One worker's epoch_samples into `epochs`, checked as the run-directory reader checks its samples
  // (importers/value_checks.h): a negative, fractional or absurd count is an error and skipped, so that
  // epoch has no samples from this worker (and no throughput), the rest is still read.
  void read_samples(const MlflowRun& w, int64_t world, std::map<int64_t, WorkerSamples>* epochs) {
    auto points = history(w, kEpochSamples);
    if (!points) return;
    int64_t rank = -1;
    const bool ranked = parse_int64(param(w, "global_rank"), &rank, kParamNumber) && rank >= 0 && rank < world;
    const std::string worker = ranked ? fmt::format("rank {}", rank) : "run " + w.run_id;
    PointErrors bad(*this, w, kEpochSamples, Severity::kError, &data_.errors);
    for (const MetricPoint& p : *points) {
      const std::string why = std::isnan(p.value) ? fmt::format("{} is NaN", kEpochSamples)
                                                  : implausible_value(Quantity::kSamples, kEpochSamples, p.value);
      if (!why.empty()) {
        bad.add(p.step, why, "point skipped");
        continue;
      }
      WorkerSamples& given = (*epochs)[p.step];
      auto [it, inserted] = given.by_worker.try_emplace(worker, p.value);
      if (!inserted && it->second != p.value && given.conflicting.insert(worker).second) {
        bad.add(p.step, fmt::format("{} given twice for {} ({} and {})", kEpochSamples, worker, it->second, p.value),
                "no samples for that epoch");
      }
    }
  }

  void read_gpu(const MlflowRun& w, tables::RunData* run) {
    // Samples keyed by step (itwinai logs utilization and power with the same sample index).
    struct Sample {
      double util = tables::kNaN;
      double power = tables::kNaN;
      int64_t timestamp_ms = 0;
    };
    std::map<int64_t, Sample> samples;
    for (const char* key : {kGpuUtilization, kGpuPower}) {
      if (!has_metric(w, key)) continue;
      auto points = history(w, key);
      if (!points) continue;
      const bool power = key == kGpuPower;
      PointErrors bad(*this, w, key, Severity::kError, &data_.errors);
      PointErrors ignored(*this, w, key, Severity::kWarning, &data_.warnings);
      for (const MetricPoint& p : *points) {
        // Every store's timestamps are checked here too (a server's as well), so that two can always
        // be subtracted.
        if (!metric_timestamp_in_bounds(p.timestamp_ms)) {
          bad.add(p.step, fmt::format("{} timestamp {} ms is out of range", key, p.timestamp_ms), "point skipped");
          continue;
        }
        double value = p.value;
        const std::string why = implausible_value(power ? Quantity::kPowerW : Quantity::kUtilizationPct, key, value);
        if (!why.empty()) {
          ignored.add(p.step, why, "value ignored");
          value = tables::kNaN;
        }
        auto [it, inserted] = samples.try_emplace(p.step, Sample{tables::kNaN, tables::kNaN, p.timestamp_ms});
        (power ? it->second.power : it->second.util) = value;
      }
    }
    if (samples.empty()) return;
    // In time order, as the run-directory reader orders its samples: a clock that stepped back
    // must not make a negative interval.
    std::vector<const Sample*> ordered;
    ordered.reserve(samples.size());
    for (const auto& [step, sample] : samples) ordered.push_back(&sample);
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const Sample* a, const Sample* b) { return a->timestamp_ms < b->timestamp_ms; });
    tables::GpuSeries s;
    s.source = fmt::format("{} run {}", store_.describe(), w.run_id);
    const std::string rank = param(w, "global_rank");
    s.device = rank.empty() ? w.name : "rank " + rank;
    double interval = 0;
    const std::string probe = param(w, "probing_interval");
    // Runs synced by `scaleprof mlflow sync` log probing_interval for itwinai's report only: their
    // samples carry their real times, so the energy stays the one of the run directories (trapezoid
    // over the timestamps), not the rectangle rule.
    const bool synced = w.tags.count("scaleprof.sync_id") != 0;
    if (!probe.empty() && !synced) {
      if (parse_double(probe, &interval, kParamNumber) && interval > 0 && std::isfinite(interval)) {
        s.probing_interval_s = interval;
      } else {
        data_.errors.push_back(Diagnostic{Severity::kError, where(w),
                                          fmt::format("probing_interval '{}' is not a positive number", probe)});
      }
    }
    // Within core/time_bounds.h (checked above): the difference cannot overflow.
    const int64_t t0 = ordered.front()->timestamp_ms;
    for (const Sample* sample : ordered) {
      s.time_s.push_back(static_cast<double>(sample->timestamp_ms - t0) / 1000.0);
      s.utilization_pct.push_back(sample->util);
      s.power_w.push_back(sample->power);
      s.energy_j.push_back(tables::kNaN);
    }
    run->gpus.push_back(std::move(s));
  }

  // The profiling averages are optional: an artifact root this store cannot read (a server's
  // mlflow-artifacts:, s3:, ... read from its database) leaves them out with one warning per run; an
  // artifact that cannot be read is an error; neither stops the rest of the report.
  template <class RunFor>
  void read_profiling(const MlflowRun& w, RunFor& run_for) {
    if (const std::string scheme = store_.unreadable_artifact_scheme(w); !scheme.empty()) {
      unreadable_artifacts_[scheme].push_back(store_.redact(fmt::format("{} ({})", w.run_id, w.name)));
      return;
    }
    auto text = store_.artifact(w, kProfilingArtifact);
    collect_problems();
    if (!text) {
      data_.errors.push_back(Diagnostic{
          Severity::kError, where(w),
          fmt::format("artifact {}: {}; profiling averages skipped", kProfilingArtifact, text.error().message)});
      return;
    }
    if (!text.value()) return;
    const std::string file = fmt::format("{} run {} artifact {}", store_.describe(), w.run_id, kProfilingArtifact);
    CsvFile csv = parse_csv(*text.value(), file, false, &data_.warnings, &data_.errors);
    if (!has_profiling_columns(csv, &data_.errors)) return;
    add_profiling_rows(
        csv,
        [&](const ProfilingRowKey& key) -> tables::ComputationSums& {
          tables::RunData& run = run_for(key.strategy, key.gpus);
          if (!run.computation) run.computation = tables::ComputationSums{};
          return *run.computation;
        },
        &data_.errors);
  }

  // One warning per artifact scheme this store cannot read, naming the runs (the first few) and the
  // scheme, never the URI (it may hold a bucket's credentials).
  void warn_unreadable_artifacts() {
    constexpr size_t kNamed = 3;
    for (const auto& [scheme, runs] : unreadable_artifacts_) {
      std::string names;
      for (size_t i = 0; i < runs.size() && i < kNamed; ++i) names += (i == 0 ? "" : ", ") + runs[i];
      if (runs.size() > kNamed) names += fmt::format(" and {} more", runs.size() - kNamed);
      const std::string location = scheme == "empty"           ? "no artifact location"
                                   : scheme == "relative path" ? "a relative artifact path"
                                                               : fmt::format("'{}:' artifact URIs", scheme);
      data_.warnings.push_back(Diagnostic{
          Severity::kWarning, store_.describe(),
          fmt::format("{} run{} with {}, which cannot be read here: {}; their profiling averages (computation "
                      "fraction) are left out, the rest is reported (read them through the tracking server to have "
                      "them)",
                      runs.size(), runs.size() == 1 ? "" : "s", location, names)});
    }
  }

  // Trainings of one (strategy, world size) that bring different pieces are joined by the report's
  // grouping; say which, so nobody mistakes a profiling run's numbers for the timing run's.
  void note_joins() {
    std::map<std::pair<std::string, int64_t>, std::vector<const tables::RunData*>> groups;
    for (const tables::RunData& r : data_.runs) groups[{r.strategy, r.workers}].push_back(&r);
    for (const auto& [key, list] : groups) {
      if (list.size() < 2) continue;
      std::string names;
      for (const tables::RunData* r : list) {
        std::string pieces;
        if (!r->epochs.empty()) pieces += "epoch times";
        if (!r->gpus.empty()) pieces += std::string(pieces.empty() ? "" : ", ") + "GPU data";
        if (r->computation) pieces += std::string(pieces.empty() ? "" : ", ") + "profiling averages";
        if (pieces.empty()) pieces = "no data";
        names += fmt::format("{}'{}' ({})", names.empty() ? "" : ", ", r->name, pieces);
      }
      data_.notes.push_back(Diagnostic{Severity::kNote,
                                       {},
                                       fmt::format("joined {} runs of {} at {} worker{}: {}", list.size(), key.first,
                                                   key.second, key.second == 1 ? "" : "s", names)});
    }
  }

  MlflowStore& store_;
  const MlflowReadOptions& opt_;
  std::vector<MlflowRun> runs_;
  std::map<std::string, std::vector<const MlflowRun*>> children_;
  std::map<std::string, std::vector<std::string>> unreadable_artifacts_;  // scheme -> "id (name)" of its runs
  tables::ScalabilityData data_;
};

}  // namespace

Result<tables::ScalabilityData> read_mlflow_runs(MlflowStore& store, const MlflowReadOptions& options) {
  return Importer(store, options).read();
}

Result<tables::ScalabilityData> read_mlflow_data(const MlflowReadOptions& options) {
  auto store = open_mlflow_store(options.tracking_uri);
  if (!store) return store.error();
  return read_mlflow_runs(*store.value(), options);
}

}  // namespace scaleprof::importers

#include "mlflow_sync/sync_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "collect/run_file.h"

namespace scaleprof::mlflow_sync {

namespace {

namespace fs = std::filesystem;

// MLflow servers before 2.x refuse param values over 500 characters; a longer command line is cut
// (deterministically, so a later sync sends the same value: params cannot change once logged).
constexpr size_t kMaxParamChars = 500;

int64_t ns_to_ms(int64_t ns) {
  return ns / 1'000'000;
}

void add_param(RunPlan* plan, std::string key, std::string value) {
  if (value.empty()) return;
  if (value.size() > kMaxParamChars) value = value.substr(0, kMaxParamChars - 3) + "...";
  plan->params.emplace_back(std::move(key), std::move(value));
}

void add_param(RunPlan* plan, std::string key, std::optional<int64_t> value) {
  if (value) add_param(plan, std::move(key), std::to_string(*value));
}

// Only a regular file itself: a symbolic link is never uploaded (the reader warned about it).
void add_file(RunPlan* plan, const std::string& dir, const char* name, const std::string& artifact_dir) {
  const std::string path = dir + "/" + name;
  if (collect::is_plain_file(path)) plan->artifacts.push_back({path, artifact_dir + "/" + name});
}

// itwinai's `probing_interval` param (seconds, as its GPU monitor logs it: "1", "0.5") of a run that
// gets GPU samples, from the interval scaleprof's monitor recorded; itwinai's report needs it for its
// energy (power x interval). Added once: a run's params cannot change on the server.
void add_probing_interval(RunPlan* plan, std::optional<int64_t> interval_ns) {
  if (!interval_ns || *interval_ns <= 0) return;
  for (const auto& [key, value] : plan->params) {
    if (key == "probing_interval") return;
  }
  add_param(plan, "probing_interval", fmt::format("{}", static_cast<double>(*interval_ns) / 1e9));
}

// The monitor's interval as its samples show it, for runs recorded before rank.json kept
// gpu_interval_ns: the median spacing of consecutive samples of one device, to the millisecond (the
// monitor's own jitter is well under that). None with fewer than two samples on every device.
std::optional<int64_t> sampled_interval_ns(const std::vector<collect::GpuSample>& samples) {
  std::map<int64_t, int64_t> last;  // device -> time of its previous sample
  std::vector<int64_t> gaps;
  for (const collect::GpuSample& s : samples) {
    auto [it, first] = last.emplace(s.device, s.time_unix_ns);
    if (!first) {
      int64_t gap = 0;
      if (!__builtin_sub_overflow(s.time_unix_ns, it->second, &gap) && gap > 0) gaps.push_back(gap);
      it->second = s.time_unix_ns;
    }
  }
  if (gaps.empty()) return std::nullopt;
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
  const int64_t median = gaps[gaps.size() / 2];
  const int64_t ms = (median + 500'000) / 1'000'000;
  return ms > 0 ? std::optional<int64_t>(ms * 1'000'000) : std::nullopt;
}

// The recorded interval, else the one the samples show.
std::optional<int64_t> probing_interval_ns(std::optional<int64_t> recorded,
                                           const std::vector<collect::GpuSample>& gpu) {
  if (recorded && *recorded > 0) return recorded;
  return sampled_interval_ns(gpu);
}

// GPU samples under itwinai's names (gpu_utilization_percent, gpu_power_W) and scaleprof's for the
// rest; the step is the sample's index on its device, as itwinai counts. The first device of the
// series keeps the plain names, others get a "_dev<N>" suffix (itwinai monitors one GPU per worker).
void add_gpu_metrics(RunPlan* plan, const std::vector<collect::GpuSample>& samples) {
  std::map<int64_t, int64_t> next_step;  // device -> samples seen
  for (const collect::GpuSample& s : samples) next_step.emplace(s.device, 0);
  const int64_t first_device = next_step.empty() ? 0 : next_step.begin()->first;
  for (const collect::GpuSample& s : samples) {
    const std::string suffix = s.device == first_device ? "" : fmt::format("_dev{}", s.device);
    const int64_t step = next_step[s.device]++;
    const int64_t ts = ns_to_ms(s.time_unix_ns);
    if (s.utilization_pct) plan->metrics.push_back({"gpu_utilization_percent" + suffix, *s.utilization_pct, ts, step});
    if (s.power_w) plan->metrics.push_back({"gpu_power_W" + suffix, *s.power_w, ts, step});
    if (s.memory_used_bytes) {
      plan->metrics.push_back({"gpu_memory_used_bytes" + suffix, static_cast<double>(*s.memory_used_bytes), ts, step});
    }
    if (s.energy_j) plan->metrics.push_back({"gpu_energy_J" + suffix, *s.energy_j, ts, step});
  }
}

RunPlan plan_worker(const importers::RunData& run, const importers::RankData& rank, const std::string& parent_id) {
  RunPlan p;
  p.sync_id = fmt::format("{}/{}", parent_id, collect::rank_dir_name(rank.rank));
  p.name = worker_run_name(rank.rank);
  p.status = mlflow_status(rank.status);
  const collect::RankInfo* info = rank.info ? &*rank.info : nullptr;
  if (info != nullptr) {
    p.start_time_ms = info->start_unix_ns ? ns_to_ms(*info->start_unix_ns) : 0;
    p.end_time_ms = info->end_unix_ns ? ns_to_ms(*info->end_unix_ns) : 0;
  }
  // itwinai's worker params first, then scaleprof's.
  const std::string strategy = info != nullptr && !info->strategy.empty() ? info->strategy : run.strategy();
  add_param(&p, "strategy", strategy);
  add_param(&p, "global_rank", std::optional<int64_t>(rank.rank));
  const int64_t world = run.world_size();
  add_param(&p, "global_world_size", world > 0 ? std::optional<int64_t>(world) : std::nullopt);
  if (!rank.gpu.empty())
    add_probing_interval(&p, probing_interval_ns(info != nullptr ? info->gpu_interval_ns : std::nullopt, rank.gpu));
  if (info != nullptr) {
    add_param(&p, "local_rank", info->local_rank);
    add_param(&p, "node_rank", info->node_rank);
    add_param(&p, "nodes", info->nodes);
    add_param(&p, "host", info->host);
    add_param(&p, "launcher", info->launcher);
    add_param(&p, "job_id", info->job_id);
    add_param(&p, "torch_version", info->torch_version);
    std::string devices;
    for (const std::string& d : info->devices) devices += (devices.empty() ? "" : ",") + d;
    add_param(&p, "devices", devices);
  }
  p.tags = {{"scaleprof.rank", std::to_string(rank.rank)}, {"scaleprof.status", rank.status}};
  // This worker's own epoch times; itwinai's `epoch_time_s` is the training's, on the main worker
  // only (add_training_epoch_times).
  // Its samples as the report takes them from the run directory (importers/run_reader.h: the epoch
  // record's, else its steps' sum; checked counts only), once per epoch with the timestamp of the
  // epoch's first record, so the MLflow reader sums the same counts.
  const std::map<int64_t, int64_t> samples = importers::rank_samples_per_epoch(rank);
  std::set<int64_t> samples_sent;
  for (const collect::EpochRecord& e : rank.epochs) {
    const int64_t ts = ns_to_ms(e.end_unix_ns);
    p.metrics.push_back({kWorkerEpochTimeMetric, e.duration_s, ts, e.epoch});
    if (auto n = samples.find(e.epoch); n != samples.end() && samples_sent.insert(e.epoch).second) {
      p.metrics.push_back({"epoch_samples", static_cast<double>(n->second), ts, e.epoch});
    }
  }
  int64_t step_index = 0;
  for (const collect::StepRecord& s : rank.steps) {
    const int64_t ts = ns_to_ms(s.start_unix_ns) + static_cast<int64_t>(s.duration_s * 1000);
    p.metrics.push_back({"step_time_s", s.duration_s, ts, step_index++});
  }
  add_gpu_metrics(&p, rank.gpu);
  const std::string raw = "scaleprof/" + collect::rank_dir_name(rank.rank);
  for (const char* name : {collect::kRankJson, collect::kEpochsCsv, collect::kStepsCsv, collect::kGpuCsv}) {
    add_file(&p, rank.dir, name, raw);
  }
  for (const std::string& trace : rank.trace_files) {
    p.artifacts.push_back({trace, "traces/" + fs::path(trace).filename().string()});
  }
  if (!rank.trace_files.empty()) {
    p.profiling = ProfilingInput{rank.trace_files, strategy, world, rank.rank};
  }
  return p;
}

// itwinai 0.4.2's TorchTrainer logs `epoch_time_s` from the main worker only (global rank 0, run
// `worker_0 (main)`), once per epoch, step = epoch; its report reads the metric from every worker
// run that has it and takes a run with more than one such worker for a Ray search of several
// trials. So the training's epoch time goes to the main worker alone: per epoch the slowest rank's
// time (the first record of each rank, finite and not negative), the rule scaleprof's report applies
// to the run directory (importers/run_data_reader.cc), so both tools print the same table. Its
// timestamp is the slowest rank's epoch end.
void add_training_epoch_times(const importers::RunData& run, RunPlan* main_worker) {
  struct Slowest {
    double seconds = 0;
    int64_t end_ns = 0;
  };
  std::map<int64_t, Slowest> epochs;
  for (const importers::RankData& r : run.ranks) {
    std::map<int64_t, bool> seen;
    for (const collect::EpochRecord& e : r.epochs) {
      if (!(e.duration_s >= 0) || !std::isfinite(e.duration_s)) continue;
      if (!seen.emplace(e.epoch, true).second) continue;  // a repeat: the first record counts
      auto [it, fresh] = epochs.try_emplace(e.epoch, Slowest{e.duration_s, e.end_unix_ns});
      if (!fresh && e.duration_s > it->second.seconds) it->second = {e.duration_s, e.end_unix_ns};
    }
  }
  for (const auto& [epoch, slowest] : epochs) {
    main_worker->metrics.push_back({kEpochTimeMetric, slowest.seconds, ns_to_ms(slowest.end_ns), epoch});
  }
}

// FNV-1a, 64 bits: stable across builds and platforms (std::hash is not).
class Fnv1a {
 public:
  void add(std::string_view bytes) {
    for (unsigned char c : bytes) {
      hash_ ^= c;
      hash_ *= 0x100000001b3ULL;
    }
    add_separator();
  }
  void add(int64_t v) { add(std::to_string(v)); }
  void add_double(double v) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(bits));
    add(fmt::format("{:016x}", bits));
  }
  uint64_t value() const { return hash_; }

 private:
  void add_separator() {
    hash_ ^= 0xffU;
    hash_ *= 0x100000001b3ULL;
  }
  uint64_t hash_ = 0xcbf29ce484222325ULL;
};

void add_run(Fnv1a* h, const RunPlan& p) {
  h->add(p.sync_id);
  h->add(p.name);
  h->add(p.start_time_ms);
  h->add(p.end_time_ms);
  h->add(p.status);
  for (const auto& [k, v] : p.params) {
    h->add(k);
    h->add(v);
  }
  h->add("tags");
  for (const auto& [k, v] : p.tags) {
    h->add(k);
    h->add(v);
  }
  h->add("metrics");
  for (const MetricValue& m : p.metrics) {
    h->add(m.key);
    h->add_double(m.value);
    h->add(m.timestamp_ms);
    h->add(m.step);
  }
  h->add("artifacts");
  for (const ArtifactFile& a : p.artifacts) h->add(a.artifact_path);
  h->add(p.profiling ? "profiling" : "-");
}

}  // namespace

std::string plan_digest(const TrainingPlan& plan) {
  Fnv1a h;
  h.add("scaleprof-sync-plan-1");
  h.add(plan.experiment);
  add_run(&h, plan.parent);
  for (const RunPlan& w : plan.workers) add_run(&h, w);
  return fmt::format("{:016x}", h.value());
}

int64_t metric_points(const TrainingPlan& plan) {
  int64_t n = static_cast<int64_t>(plan.parent.metrics.size());
  for (const RunPlan& w : plan.workers) n += static_cast<int64_t>(w.metrics.size());
  return n;
}

std::string worker_run_name(int64_t rank) {
  return rank == 0 ? std::string("worker_0 (main)") : fmt::format("worker_{}", rank);
}

std::string mlflow_status(const std::string& scaleprof_status) {
  if (scaleprof_status == collect::kStatusCompleted) return "FINISHED";
  // A run whose ranks never trained together is no measurement of its scale: FAILED, not FINISHED.
  if (scaleprof_status == collect::kStatusFailed || scaleprof_status == collect::kStatusNotDistributed) {
    return "FAILED";
  }
  return "KILLED";
}

TrainingPlan plan_training(const importers::RunData& run) {
  TrainingPlan plan;
  const collect::RunInfo* info = run.info ? &*run.info : nullptr;
  plan.experiment = info != nullptr && !info->experiment.empty() ? info->experiment : run.experiment;
  const std::string run_name = info != nullptr && !info->run.empty() ? info->run : run.run;
  RunPlan& p = plan.parent;
  // The identity is the run's folder (<experiment folder>/<run folder>), not the names run.json
  // gives: two folders whose run.json say the same run are two runs, as `scaleprof runs` and the
  // report count them. (Folders are named after the run, so for runs as recorded the two agree.)
  // A SLURM requeue's later attempt is a run of its own on the server: its data are not attempt 0's.
  const std::string folder_id = fmt::format("{}/{}", run.experiment.empty() ? plan.experiment : run.experiment,
                                            run.run.empty() ? run_name : run.run);
  p.sync_id = run.attempt > 0 ? fmt::format("{}/{}{}", folder_id, collect::kAttemptDirPrefix, run.attempt) : folder_id;
  p.name = run_name;
  p.status = mlflow_status(run.status);
  // run.json's times when it has them, else the span of the ranks.
  int64_t start = info != nullptr && info->start_unix_ns ? *info->start_unix_ns : 0;
  int64_t end = info != nullptr && info->end_unix_ns ? *info->end_unix_ns : 0;
  const bool own_start = start != 0;
  const bool own_end = end != 0;
  for (const importers::RankData& r : run.ranks) {
    if (!r.info) continue;
    if (!own_start && r.info->start_unix_ns && (start == 0 || *r.info->start_unix_ns < start)) {
      start = *r.info->start_unix_ns;
    }
    if (!own_end && r.info->end_unix_ns && *r.info->end_unix_ns > end) end = *r.info->end_unix_ns;
  }
  p.start_time_ms = ns_to_ms(start);
  p.end_time_ms = ns_to_ms(end);
  add_param(&p, "strategy", run.strategy());
  const int64_t world = run.world_size();
  add_param(&p, "global_world_size", world > 0 ? std::optional<int64_t>(world) : std::nullopt);
  const int64_t nodes = run.node_count();
  add_param(&p, "nodes", nodes > 0 ? std::optional<int64_t>(nodes) : std::nullopt);
  if (info != nullptr) {
    add_param(&p, "gpus_per_node", info->gpus_per_node);
    add_param(&p, "launcher", info->launcher);
    add_param(&p, "job_id", info->job_id);
    add_param(&p, "torch_version", info->torch_version);
    std::string command;
    for (const std::string& word : info->command) command += (command.empty() ? "" : " ") + word;
    add_param(&p, "command", command);
    add_param(&p, "exit_status", info->exit_status);
  }
  p.tags = {{"scaleprof.experiment", plan.experiment},
            {"scaleprof.run", run_name},
            {"scaleprof.status", run.status},
            {"scaleprof.attempt", std::to_string(run.attempt)},
            {"mlflow.source.name", "scaleprof"}};
  add_file(&p, run.dir, collect::kRunJson, "scaleprof");
  for (const importers::RankData& rank : run.ranks) plan.workers.push_back(plan_worker(run, rank, p.sync_id));
  if (!plan.workers.empty()) add_training_epoch_times(run, &plan.workers.front());  // ranks are sorted
  // A node's GPU samples (`scaleprof run` samples every GPU of the node once) go to the lowest rank
  // on that host, where itwinai's report looks for GPU data; without such a rank, to the parent.
  for (const importers::NodeData& node : run.nodes) {
    RunPlan* target = &p;
    for (size_t i = 0; i < run.ranks.size(); ++i) {
      if (run.ranks[i].info && run.ranks[i].info->host == node.host) {
        target = &plan.workers[i];
        break;
      }
    }
    add_gpu_metrics(target, node.gpu);
    if (!node.gpu.empty())
      add_probing_interval(target,
                           probing_interval_ns(info != nullptr ? info->gpu_interval_ns : std::nullopt, node.gpu));
    add_file(&p, node.dir, collect::kGpuCsv, "scaleprof/" + collect::node_dir_name(node.host));
  }
  return plan;
}

}  // namespace scaleprof::mlflow_sync

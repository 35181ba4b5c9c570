// scaleprof run directories into the run-data tables: collect's run-directory reader
// (importers/run_reader.h) reads the files; this turns a run into tables::RunData rows, with GPU readings
// checked (run_data_sink.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "core/number_text.h"
#include "importers/run_data_sink.h"
#include "importers/run_reader.h"
#include "importers/value_checks.h"

namespace scaleprof::importers {

namespace fs = std::filesystem;

namespace {

// Per epoch, the summed duration of one rank's step records (steps.csv); implausible durations are
// left out (their epoch then has no split: a partial sum would overstate the time outside the steps).
std::map<int64_t, double> steps_seconds_per_epoch(const RankData& rank) {
  std::map<int64_t, double> sums;
  std::set<int64_t> broken;
  for (const collect::StepRecord& st : rank.steps) {
    if (std::isnan(st.duration_s) || !implausible_value(Quantity::kEpochSeconds, "duration_s", st.duration_s).empty()) {
      broken.insert(st.epoch);
      continue;
    }
    sums[st.epoch] += st.duration_s;
  }
  for (int64_t e : broken) sums.erase(e);
  return sums;
}

// The device of `samples` that is the rank's: the only one, else the one at the rank's local rank
// among them, the convention of torch's cuda:LOCAL_RANK and of the rank GPU monitor
// (collect/gpu_monitor.h choose_devices). With the node file, a rank whose visible devices are driver
// indices takes its local rank's entry of them. -1 when there are no samples.
int64_t straggler_rank_device(const std::vector<collect::GpuSample>& samples, const RankData& rank) {
  std::set<int64_t> devices;
  for (const collect::GpuSample& g : samples) devices.insert(g.device);
  if (devices.empty()) return -1;
  if (devices.size() == 1) return *devices.begin();
  const int64_t local = rank.info && rank.info->local_rank ? std::max<int64_t>(*rank.info->local_rank, 0) : 0;
  if (rank.info && !rank.info->devices.empty()) {
    const std::string& id = rank.info->devices[static_cast<size_t>(local) % rank.info->devices.size()];
    if (auto index = parse_int64(id); index && devices.count(*index) > 0) return *index;
  }
  auto it = devices.begin();
  std::advance(it, static_cast<long>(static_cast<size_t>(local) % devices.size()));
  return *it;
}

// One rank's steps and its GPU's samples (from its own gpu.csv, else its host's node file).
tables::RankActivity straggler_rank_activity(const RankData& rank, const std::vector<NodeData>& nodes) {
  tables::RankActivity a;
  a.rank = rank.rank;
  for (const collect::StepRecord& s : rank.steps) {
    if (std::isnan(s.duration_s) || s.duration_s < 0 || s.start_unix_ns <= 0 || s.duration_s > 1e6) continue;
    a.steps.push_back({s.epoch, s.step, s.start_unix_ns, s.start_unix_ns + static_cast<int64_t>(s.duration_s * 1e9)});
  }
  const std::vector<collect::GpuSample>* samples = &rank.gpu;
  std::string source = fs::path(rank.dir).filename().string() + "/gpu.csv";
  if (samples->empty() && rank.info) {
    for (const NodeData& n : nodes) {
      if (n.host == rank.info->host && !n.gpu.empty()) {
        samples = &n.gpu;
        source = fs::path(n.dir).filename().string() + "/gpu.csv";
      }
    }
  }
  const int64_t device = straggler_rank_device(*samples, rank);
  if (device < 0) return a;
  a.gpu_source = fmt::format("{} gpu {}", source, device);
  for (const collect::GpuSample& g : *samples) {
    if (g.device != device) continue;
    tables::ClockSample c;
    c.time_ns = g.time_unix_ns;
    if (g.sm_clock_mhz && *g.sm_clock_mhz > 0 && *g.sm_clock_mhz < 100000) {
      c.sm_clock_mhz = static_cast<double>(*g.sm_clock_mhz);
    }
    c.power_w = g.power_w.value_or(tables::kNaN);
    c.throttle_reasons = g.throttle_reasons;
    a.gpu.push_back(c);
  }
  std::stable_sort(a.gpu.begin(), a.gpu.end(),
                   [](const tables::ClockSample& x, const tables::ClockSample& y) { return x.time_ns < y.time_ns; });
  return a;
}

// The samples of one epoch summed over the ranks that gave them (throughput, analysis/throughput.h).
struct EpochSamples {
  double sum = 0;
  int64_t ranks = 0;
};

class ScaleprofRunReader : RunDataReader {
 public:
  explicit ScaleprofRunReader(RunDataSink& sink) : RunDataReader(sink) {}

  // One series per device of `samples` (any order), times in seconds.
  void add_gpu_series(const std::vector<collect::GpuSample>& samples, const std::string& source,
                      const std::string& label, tables::RunData* run) {
    std::map<int64_t, std::vector<const collect::GpuSample*>> by_device;
    for (const collect::GpuSample& g : samples) by_device[g.device].push_back(&g);
    for (auto& entry : by_device) {
      std::vector<const collect::GpuSample*>& list = entry.second;
      std::stable_sort(list.begin(), list.end(), [](const collect::GpuSample* x, const collect::GpuSample* y) {
        return x->time_unix_ns < y->time_unix_ns;
      });
      tables::GpuSeries s;
      s.source = source;
      s.device = fmt::format("{} gpu {}", label, entry.first);
      for (const collect::GpuSample* g : list) {
        s.time_s.push_back(static_cast<double>(g->time_unix_ns) / 1e9);
        s.utilization_pct.push_back(
            checked_reading(g->utilization_pct.value_or(tables::kNaN), "utilization_pct", source, g->line));
        s.power_w.push_back(checked_reading(g->power_w.value_or(tables::kNaN), "power_w", source, g->line));
        s.energy_j.push_back(checked_reading(g->energy_j.value_or(tables::kNaN), "energy_j", source, g->line));
      }
      run->gpus.push_back(std::move(s));
    }
  }

  void read_run(const fs::path& dir, const std::string& experiment_folder) {
    if (!opt_.scaleprof_runs) return;
    ReadOptions read;
    auto loaded = importers::read_run(dir.string(), read);
    if (!loaded) {
      error(loaded.error().message);
      return;
    }
    const RunData& in = loaded.value();
    const std::string folder = dir.filename().string();
    if (in.status == collect::kStatusNotDistributed) {
      // Its epoch times are those of single processes: pooled with real W-rank runs they would be a
      // wrong number, so the run is left out and the reason is an error (exit code 3).
      if (wanted_run(folder, in.info && !in.info->run.empty() ? in.info->run : folder)) {
        error(dir.string(), fmt::format("left out: {}", in.status_reason));
      }
      return;
    }
    tables::RunData run;
    run.layout = "scaleprof";
    run.path = dir.string();
    run.experiment = in.info && !in.info->experiment.empty() ? in.info->experiment : experiment_folder;
    run.name = in.info && !in.info->run.empty() ? in.info->run : folder;
    if (!wanted_run(folder, run.name)) return;
    // What collect's reader rejected (lines, files) is an error here (exit code 3); a torn last line or
    // a rank that never wrote is a warning. The reader's severity decides, never the wording.
    for (const Diagnostic& w : in.warnings) sink_.add(w);
    run.strategy = in.strategy();
    // run.json's world size wins; a rank that says otherwise is inconsistent data. Values outside
    // 1 .. kMaxWorkers are corrupt: they are errors, never used.
    auto valid_count = [](int64_t n) { return n >= 1 && n <= kMaxWorkers; };
    const std::optional<int64_t> declared = in.info ? in.info->world_size : std::nullopt;
    const int64_t run_world = declared && valid_count(*declared) ? *declared : 0;
    int64_t rank_world = 0;
    for (const RankData& r : in.ranks) {
      if (!r.info || !r.info->world_size) continue;
      const int64_t w = *r.info->world_size;
      if (!valid_count(w)) {
        error(fmt::format("{}/rank.json", r.dir),
              fmt::format("world_size {} is out of range (1 to {}); ignored", w, kMaxWorkers));
      } else if (run_world > 0 && w != run_world) {
        error(fmt::format("{}/rank.json", r.dir),
              fmt::format("world_size {} contradicts run.json's {}; run.json's is used", w, run_world));
      } else {
        rank_world = std::max(rank_world, w);
      }
    }
    run.workers = run_world > 0 ? run_world : rank_world > 0 ? rank_world : static_cast<int64_t>(in.ranks.size());
    if (declared && run_world == 0) {
      error(fmt::format("{}/run.json", run.path),
            fmt::format("world_size {} is out of range (1 to {}); {} worker(s) taken from the rank folders instead",
                        *declared, kMaxWorkers, run.workers));
    }
    const int64_t nodes = in.info && in.info->nodes ? *in.info->nodes : in.node_count();
    if (nodes != 0 && !valid_count(nodes)) {
      error(fmt::format("{}/run.json", run.path),
            fmt::format("nodes {} is out of range (1 to {}); ignored", nodes, kMaxWorkers));
    }
    run.nodes = valid_count(nodes) ? nodes : 0;
    run.status = in.status;
    if (in.info) run.exit_code = in.info->exit_status;
    std::map<int64_t, tables::EpochTime> epoch_max;  // epoch -> the slowest rank's duration and steps
    std::map<int64_t, EpochSamples> epoch_samples;   // epoch -> samples of the ranks that gave them
    for (const RankData& r : in.ranks) {
      const std::map<int64_t, double> in_steps = steps_seconds_per_epoch(r);
      // The rank's samples per epoch (its epoch records', else its steps'); a rejected count is an error.
      std::vector<std::string> rejected;
      const std::map<int64_t, int64_t> rank_samples = rank_samples_per_epoch(r, &rejected);
      for (std::string& why : rejected) error(std::move(why));
      // One record per epoch and rank: a repeat (a restarted process appending to the same file)
      // would otherwise be merged by max and inflate every figure; the first record is kept.
      std::map<int64_t, int64_t> first_line;  // epoch -> line of its first record
      for (const collect::EpochRecord& e : r.epochs) {
        if (std::isnan(e.duration_s) ||
            !implausible_value(Quantity::kEpochSeconds, "duration_s", e.duration_s).empty()) {
          error(fmt::format("{}/epochs.csv:{}", r.dir, e.line),
                fmt::format("epoch {} has duration_s {}; epoch ignored", e.epoch, e.duration_s));
          continue;
        }
        auto [seen, first] = first_line.try_emplace(e.epoch, e.line);
        if (!first) {
          warn(fmt::format("{}/epochs.csv:{}", r.dir, e.line),
               fmt::format("epoch {} recorded again (first on line {}); the first record is used", e.epoch,
                           seen->second));
          continue;
        }
        if (auto samples = rank_samples.find(e.epoch); samples != rank_samples.end()) {
          EpochSamples& es = epoch_samples[e.epoch];
          es.sum += static_cast<double>(samples->second);
          ++es.ranks;
        }
        tables::EpochTime t{e.epoch, e.duration_s};
        if (auto s = in_steps.find(e.epoch); s != in_steps.end()) t.steps_seconds = s->second;
        // Steps that take longer than their epoch were not timed inside it (another clock, an epoch
        // record written before its steps ended): the split is not used rather than made negative.
        if (t.steps_seconds > t.seconds * (1 + 1e-6)) {
          warn(fmt::format("{}/steps.csv", r.dir),
               fmt::format("the steps of epoch {} sum to {:.6g} s, more than the epoch's {:.6g} s; time outside the "
                           "steps not used for it",
                           e.epoch, t.steps_seconds, t.seconds));
          t.steps_seconds = tables::kNaN;
        }
        auto [it, inserted] = epoch_max.try_emplace(e.epoch, t);
        if (!inserted && t.seconds > it->second.seconds) it->second = t;
      }
      run.trace_files.insert(run.trace_files.end(), r.trace_files.begin(), r.trace_files.end());
    }
    // GPU samples: the wrapper's node-<host>/gpu.csv when present (ranks then do not sample), else
    // each rank's own.
    bool node_gpu = false;
    for (const NodeData& n : in.nodes) {
      if (n.gpu.empty()) continue;
      add_gpu_series(n.gpu, n.dir + "/gpu.csv", fs::path(n.dir).filename().string(), &run);
      node_gpu = true;
    }
    if (!node_gpu) {
      for (const RankData& r : in.ranks) {
        add_gpu_series(r.gpu, r.dir + "/gpu.csv", fs::path(r.dir).filename().string(), &run);
      }
    }
    for (const RankData& r : in.ranks) {
      if (!r.steps.empty()) run.rank_activity.push_back(straggler_rank_activity(r, in.nodes));
    }
    if (run.strategy.empty()) {
      run.strategy = "unknown";
      warn(run.path, "no strategy in run.json or rank.json; shown as 'unknown'");
    }
    run.epochs.reserve(epoch_max.size());
    for (auto [epoch, time] : epoch_max) {
      // Every rank's samples, or none: a rank missing from the sum would understate the throughput.
      if (auto es = epoch_samples.find(epoch); es != epoch_samples.end() && es->second.ranks == run.workers) {
        time.samples = es->second.sum;
      }
      run.epochs.push_back(time);
    }
    if (run.workers <= 0) {
      error(run.path, "world size unknown (no run.json, no rank folders); run skipped");
      return;
    }
    // A failed or interrupted run is never used as if it were valid: the analysis leaves it out and
    // says so (tables::run_failed, analysis/scalability.h); other statuses keep their finished epochs.
    if (run.status != "completed" && !tables::run_failed(run)) {
      warn(run.path, fmt::format("run status is {}; its {} finished epoch(s) are used", run.status, run.epochs.size()));
    }
    data_.runs.push_back(std::move(run));
  }

 private:
  bool wanted_run(const std::string& folder, const std::string& name) { return sink_.wanted_run(folder, name); }
};

}  // namespace

void read_scaleprof_run(RunDataSink& sink, const fs::path& dir, const std::string& experiment_folder) {
  ScaleprofRunReader(sink).read_run(dir, experiment_folder);
}

}  // namespace scaleprof::importers

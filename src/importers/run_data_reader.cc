#include "importers/run_data_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "core/file_read.h"
#include "core/number_text.h"
#include "importers/csv.h"
#include "importers/profiling_averages.h"
#include "importers/run_reader.h"
#include "trace/trace_set.h"

namespace scaleprof::importers {

namespace fs = std::filesystem;

namespace {

// What an itwinai CSV file may weigh when read whole (as collect's cap on a run's CSV files).
constexpr size_t kMaxCsvBytes = size_t{2} << 30;

// The whole file, with the one file reader (core/file_read.h).
bool read_text(const fs::path& path, std::string* out) {
  auto text = read_named_file(path.string(), kMaxCsvBytes);
  if (std::holds_alternative<FileReadFailure>(text)) return false;
  *out = std::move(std::get<std::string>(text));
  return true;
}

// A finite number in an itwinai CSV cell (core/number_text.h, kCellNumber); an empty cell, "nan" and
// "NaN" are NaN (an unknown value). Returns false for anything else.
bool parse_double(std::string_view text, double* out) {
  text = trim_blanks(text);
  if (text.empty() || text == "nan" || text == "NaN") {
    *out = analysis::kNaN;
    return true;
  }
  return scaleprof::parse_double(text, out, kCellNumber);
}

std::vector<fs::path> sorted_subdirs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_directory(ec2)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> sorted_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_regular_file(ec2)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

constexpr const char* kItwinaiDirs[] = {"epoch-time", "gpu-energy-data", "computation-data", "communication-data"};

bool is_itwinai_dir(const fs::path& dir) {
  return std::any_of(std::begin(kItwinaiDirs), std::end(kItwinaiDirs),
                     [&](const char* d) { return path_exists(dir / d); });
}

bool is_rank_dir_name(const std::string& name) {
  return name.size() > 5 && name.starts_with("rank-") &&
         std::all_of(name.begin() + 5, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_run_dir(const fs::path& dir) {
  if (path_exists(dir / "run.json")) return true;
  for (const fs::path& sub : sorted_subdirs(dir)) {
    if (is_rank_dir_name(sub.filename().string())) return true;
  }
  return false;
}

class Reader {
 public:
  explicit Reader(const ScalabilityReadOptions& options) : opt_(options) {}

  ScalabilityData take() {
    for (const auto& [file, count] : bad_readings_) {
      if (count > kReadingWarningsPerFile) {
        warn(fmt::format("{}: {} more out-of-range GPU reading(s) ignored", file, count - kReadingWarningsPerFile));
      }
    }
    return std::move(data_);
  }

  // Whether a run passes --run-names; every name that selects a run is remembered, so that a name
  // selecting nothing can be reported.
  bool wanted_run(const std::string& folder, const std::string& name) {
    if (opt_.run_names.empty()) return true;
    bool wanted = false;
    for (const std::string& n : opt_.run_names) {
      if (n == folder || n == name) {
        matched_names_.insert(n);
        wanted = true;
      }
    }
    return wanted;
  }

  // itwinai's CSV layout has no experiment names: with --experiment its folders are left out (and
  // said so), never silently mixed in.
  void read_itwinai_if_wanted(const fs::path& dir, const std::string& run_id) {
    if (!opt_.experiment.empty()) {
      skipped_itwinai_.push_back(dir.string());
      return;
    }
    if (wanted_run(run_id.empty() ? dir.filename().string() : run_id, run_id)) read_itwinai(dir, run_id);
  }

  void read_root(const fs::path& root) {
    if (is_itwinai_dir(root)) read_itwinai_if_wanted(root, "");
    if (is_run_dir(root)) {
      if (opt_.experiment.empty() || opt_.experiment == root.parent_path().filename().string()) {
        experiment_found_ = true;
        read_run(root, root.parent_path().filename().string());
      }
      return;
    }
    for (const fs::path& child : sorted_subdirs(root)) {
      const std::string name = child.filename().string();
      if (kItwinaiSubdir(name)) continue;
      if (is_itwinai_dir(child)) {
        read_itwinai_if_wanted(child, name);
      } else if (is_run_dir(child)) {  // the root is one experiment
        if (opt_.experiment.empty() || opt_.experiment == root.filename().string()) {
          experiment_found_ = true;
          read_run(child, root.filename().string());
        }
      } else {
        if (!opt_.experiment.empty() && opt_.experiment != name) continue;
        experiment_found_ = true;
        for (const fs::path& run : sorted_subdirs(child)) {
          if (is_run_dir(run)) read_run(run, name);
        }
      }
    }
  }

  // A selection that matched nothing is an error naming it (a typo must not pass as "no data").
  Status check_selection(const std::string& root) {
    if (!opt_.experiment.empty() && !experiment_found_) {
      return Error{fmt::format("--experiment: no experiment named '{}' under {}{}", opt_.experiment, root,
                               skipped_itwinai_.empty() ? ""
                                                        : " (itwinai's CSV layout has no experiment names: select "
                                                          "its runs with --run-ids)"),
                   ErrorKind::kNotFound};
    }
    std::string missing;
    for (const std::string& n : opt_.run_names) {
      if (matched_names_.count(n) == 0) missing += fmt::format("{}'{}'", missing.empty() ? "" : ", ", n);
    }
    if (!missing.empty()) {
      return Error{fmt::format("--run-names: no run named {} under {}{}", missing, root,
                               opt_.experiment.empty() ? "" : " in experiment '" + opt_.experiment + "'"),
                   ErrorKind::kNotFound};
    }
    for (const std::string& dir : skipped_itwinai_) {
      warn(fmt::format("{}: itwinai CSV data left out: its layout has no experiment name to match --experiment {}", dir,
                       opt_.experiment));
    }
    return Ok{};
  }

 private:
  static bool kItwinaiSubdir(const std::string& name) {
    return std::any_of(std::begin(kItwinaiDirs), std::end(kItwinaiDirs), [&](const char* d) { return name == d; });
  }

  void error(std::string message) { data_.errors.push_back(std::move(message)); }
  void warn(std::string message) { data_.warnings.push_back(std::move(message)); }

  bool load_csv(const fs::path& path, bool appended, CsvFile* out) {
    std::string text;
    if (!read_text(path, &text)) {
      error(fmt::format("{}: cannot read", path.string()));
      return false;
    }
    *out = parse_csv(text, path.string(), appended, &data_.warnings, &data_.errors);
    return true;
  }

  // Column indices of `names`; an error naming the first missing one.
  bool columns(const CsvFile& csv, std::initializer_list<const char*> names, std::vector<int>* idx) {
    idx->clear();
    for (const char* n : names) {
      const int c = csv.column(n);
      if (c < 0) {
        error(fmt::format("{}:1: no column '{}'; file skipped", csv.path, n));
        return false;
      }
      idx->push_back(c);
    }
    return true;
  }

  // ---- scaleprof run directories: the run-directory reader (src/importers/run_reader.h) -------------------

  // A GPU reading outside what hardware reports (utilization outside 0..100 %, negative power or
  // energy, power above kMaxGpuPowerW) is ignored, that value only, with a warning naming file and
  // line: averaged in or integrated it would make every figure of its run wrong. After
  // kReadingWarningsPerFile warnings per file, take() adds one line with the count.
  static constexpr int kReadingWarningsPerFile = 5;
  double checked_reading(double value, std::string_view column, const std::string& file, int64_t line) {
    const Quantity quantity = column.starts_with("utilization") ? Quantity::kUtilizationPct
                              : column.starts_with("power")     ? Quantity::kPowerW
                                                                : Quantity::kEnergyJ;
    const std::string why = implausible_value(quantity, column, value);
    if (why.empty()) return value;
    if (++bad_readings_[file] <= kReadingWarningsPerFile)
      warn(fmt::format("{}:{}: {}; value ignored", file, line, why));
    return analysis::kNaN;
  }

  // One series per device of `samples` (any order), times in seconds.
  void add_gpu_series(const std::vector<collect::GpuSample>& samples, const std::string& source,
                      const std::string& label, RunData* run) {
    std::map<int64_t, std::vector<const collect::GpuSample*>> by_device;
    for (const collect::GpuSample& g : samples) by_device[g.device].push_back(&g);
    for (auto& entry : by_device) {
      std::vector<const collect::GpuSample*>& list = entry.second;
      std::stable_sort(list.begin(), list.end(), [](const collect::GpuSample* x, const collect::GpuSample* y) {
        return x->time_unix_ns < y->time_unix_ns;
      });
      GpuSeries s;
      s.source = source;
      s.device = fmt::format("{} gpu {}", label, entry.first);
      for (const collect::GpuSample* g : list) {
        s.time_s.push_back(static_cast<double>(g->time_unix_ns) / 1e9);
        s.utilization_pct.push_back(
            checked_reading(g->utilization_pct.value_or(analysis::kNaN), "utilization_pct", source, g->line));
        s.power_w.push_back(checked_reading(g->power_w.value_or(analysis::kNaN), "power_w", source, g->line));
        s.energy_j.push_back(checked_reading(g->energy_j.value_or(analysis::kNaN), "energy_j", source, g->line));
      }
      run->gpus.push_back(std::move(s));
    }
  }

  void read_run(const fs::path& dir, const std::string& experiment_folder) {
    if (!opt_.scaleprof_runs) return;
    collect::ReadOptions read;
    read.read_steps = false;
    auto loaded = collect::read_run(dir.string(), read);
    if (!loaded) {
      error(loaded.error().message);
      return;
    }
    const collect::RunData& in = loaded.value();
    const std::string folder = dir.filename().string();
    RunData run;
    run.layout = "scaleprof";
    run.path = dir.string();
    run.experiment = in.info && !in.info->experiment.empty() ? in.info->experiment : experiment_folder;
    run.name = in.info && !in.info->run.empty() ? in.info->run : folder;
    if (!wanted_run(folder, run.name)) return;
    // What collect's reader rejected (lines, files) is an error here (exit code 3); a torn last line or
    // a rank that never wrote is a warning. The reader's severity decides, never the wording.
    for (const Diagnostic& w : in.warnings) {
      (w.severity == Severity::kError ? data_.errors : data_.warnings).push_back(w.text());
    }
    run.strategy = in.strategy();
    // run.json's world size wins; a rank that says otherwise is inconsistent data. Values outside
    // 1 .. kMaxWorkers are corrupt: they are errors, never used.
    auto valid_count = [](int64_t n) { return n >= 1 && n <= kMaxWorkers; };
    const std::optional<int64_t> declared = in.info ? in.info->world_size : std::nullopt;
    const int64_t run_world = declared && valid_count(*declared) ? *declared : 0;
    int64_t rank_world = 0;
    for (const collect::RankData& r : in.ranks) {
      if (!r.info || !r.info->world_size) continue;
      const int64_t w = *r.info->world_size;
      if (!valid_count(w)) {
        error(fmt::format("{}/rank.json: world_size {} is out of range (1 to {}); ignored", r.dir, w, kMaxWorkers));
      } else if (run_world > 0 && w != run_world) {
        error(fmt::format("{}/rank.json: world_size {} contradicts run.json's {}; run.json's is used", r.dir, w,
                          run_world));
      } else {
        rank_world = std::max(rank_world, w);
      }
    }
    run.workers = run_world > 0 ? run_world : rank_world > 0 ? rank_world : static_cast<int64_t>(in.ranks.size());
    if (declared && run_world == 0) {
      error(
          fmt::format("{}/run.json: world_size {} is out of range (1 to {}); {} worker(s) taken from the rank "
                      "folders instead",
                      run.path, *declared, kMaxWorkers, run.workers));
    }
    const int64_t nodes = in.info && in.info->nodes ? *in.info->nodes : in.node_count();
    if (nodes != 0 && !valid_count(nodes)) {
      error(fmt::format("{}/run.json: nodes {} is out of range (1 to {}); ignored", run.path, nodes, kMaxWorkers));
    }
    run.nodes = valid_count(nodes) ? nodes : 0;
    run.status = in.status;
    std::map<int64_t, double> epoch_max;  // epoch -> slowest rank's duration
    for (const collect::RankData& r : in.ranks) {
      // One record per epoch and rank: a repeat (a restarted process appending to the same file)
      // would otherwise be merged by max and inflate every figure; the first record is kept.
      std::map<int64_t, int64_t> first_line;  // epoch -> line of its first record
      for (const collect::EpochRecord& e : r.epochs) {
        if (std::isnan(e.duration_s) ||
            !implausible_value(Quantity::kEpochSeconds, "duration_s", e.duration_s).empty()) {
          error(fmt::format("{}/epochs.csv:{}: epoch {} has duration_s {}; epoch ignored", r.dir, e.line, e.epoch,
                            e.duration_s));
          continue;
        }
        auto [seen, first] = first_line.try_emplace(e.epoch, e.line);
        if (!first) {
          warn(fmt::format("{}/epochs.csv:{}: epoch {} recorded again (first on line {}); the first record is used",
                           r.dir, e.line, e.epoch, seen->second));
          continue;
        }
        auto [it, inserted] = epoch_max.try_emplace(e.epoch, e.duration_s);
        if (!inserted) it->second = std::max(it->second, e.duration_s);
      }
      run.trace_files.insert(run.trace_files.end(), r.trace_files.begin(), r.trace_files.end());
    }
    // GPU samples: the wrapper's node-<host>/gpu.csv when present (ranks then do not sample), else
    // each rank's own.
    bool node_gpu = false;
    for (const collect::NodeData& n : in.nodes) {
      if (n.gpu.empty()) continue;
      add_gpu_series(n.gpu, n.dir + "/gpu.csv", fs::path(n.dir).filename().string(), &run);
      node_gpu = true;
    }
    if (!node_gpu) {
      for (const collect::RankData& r : in.ranks) {
        add_gpu_series(r.gpu, r.dir + "/gpu.csv", fs::path(r.dir).filename().string(), &run);
      }
    }
    if (run.strategy.empty()) {
      run.strategy = "unknown";
      warn(fmt::format("{}: no strategy in run.json or rank.json; shown as 'unknown'", run.path));
    }
    run.epochs.reserve(epoch_max.size());
    for (const auto& [epoch, seconds] : epoch_max) run.epochs.push_back({epoch, seconds});
    if (run.workers <= 0) {
      error(fmt::format("{}: world size unknown (no run.json, no rank folders); run skipped", run.path));
      return;
    }
    if (run.status != "completed") {
      warn(fmt::format("{}: run status is {}; its {} finished epoch(s) are used", run.path, run.status,
                       run.epochs.size()));
    }
    data_.runs.push_back(std::move(run));
  }

  // ---- itwinai's CSV layout ----------------------------------------------------------------------

  RunData& itwinai_run(std::map<std::tuple<std::string, int64_t>, RunData>& runs, const fs::path& dir,
                       const std::string& run_id, const std::string& strategy, int64_t workers) {
    RunData& r = runs[{strategy, workers}];
    if (r.layout.empty()) {
      r.layout = "itwinai";
      r.experiment = "";
      r.name = run_id.empty() ? dir.filename().string() : run_id;
      r.strategy = strategy;
      r.workers = workers;
      r.path = dir.string();
    }
    return r;
  }

  // GPUs per node of an itwinai folder: what its GPU files say (num_global_gpus / nodes sampled, the
  // same for every file), else --gpus-per-node, else itwinai's own assumption of 4. An option that
  // contradicts the data is warned about; the data wins.
  int64_t gpus_per_node(
      const fs::path& dir,
      const std::map<std::pair<std::string, int64_t>, std::pair<std::set<int64_t>, std::string>>& gpu) {
    std::map<int64_t, std::string> found;  // GPUs per node -> an example file
    for (const auto& [key, seen] : gpu) {
      const auto nodes = static_cast<int64_t>(seen.first.size());
      if (nodes > 0 && key.second % nodes == 0) {
        found.try_emplace(key.second / nodes, fmt::format("{} ({} GPUs on {} node{})", seen.second, key.second, nodes,
                                                          nodes == 1 ? "" : "s"));
      }
    }
    const int64_t option = opt_.gpus_per_node > 0 ? opt_.gpus_per_node : 4;
    if (found.size() != 1) {
      if (found.size() > 1) {
        warn(fmt::format("{}: the GPU files disagree on GPUs per node ({} and {}); epoch-time rows use {}",
                         dir.string(), found.begin()->second, found.rbegin()->second, option));
      }
      return option;
    }
    const auto& [per_node, example] = *found.begin();
    if (opt_.gpus_per_node > 0 && opt_.gpus_per_node != per_node) {
      warn(
          fmt::format("{}: --gpus-per-node {} contradicts the GPU data, {} GPUs per node in gpu-energy-data/{}; "
                      "the data's count is used",
                      dir.string(), opt_.gpus_per_node, per_node, example));
    }
    return per_node;
  }

  // itwinai's stored profiler traces (<run>/torch-traces/worker_<rank>.<time>.pt.trace.json) belong
  // to the run of the folder; the worker number in the name is the rank (trace/trace_set.h). One run
  // id folder is one training run; a folder holding several configurations cannot say whose they are.
  void attach_itwinai_traces(const fs::path& dir, std::map<std::tuple<std::string, int64_t>, RunData>* runs) {
    const fs::path traces = dir / "torch-traces";
    std::error_code ec;
    if (!fs::is_directory(traces, ec)) return;
    auto files = trace::expand_trace_paths({traces.string()});
    if (!files || files.value().empty()) return;
    if (runs->size() != 1) {
      warn(fmt::format("{}: {} configurations in one folder; its traces cannot be matched to one and are not used",
                       traces.string(), runs->size()));
      return;
    }
    runs->begin()->second.trace_files = std::move(files).value();
  }

  void read_itwinai(const fs::path& dir, const std::string& run_id) {
    std::map<std::tuple<std::string, int64_t>, RunData> runs;
    // Epoch-time files count nodes, not GPUs: their rows wait until the GPU files have said how many
    // GPUs a node has. (strategy, nodes) -> epochs.
    std::map<std::pair<std::string, int64_t>, std::vector<analysis::EpochTime>> epoch_rows;
    // From the GPU files: (strategy, GPUs) -> the nodes sampled (node_idx values) and the file.
    std::map<std::pair<std::string, int64_t>, std::pair<std::set<int64_t>, std::string>> gpu_nodes;
    // epoch-time/epochtime_{strategy}_{N}N.csv: epoch_id,time,name,nodes
    for (const fs::path& f : sorted_files(dir / "epoch-time")) {
      if (f.extension() != ".csv") continue;
      CsvFile csv;
      std::vector<int> c;
      if (!load_csv(f, false, &csv) || !columns(csv, {"epoch_id", "time", "name", "nodes"}, &c)) continue;
      for (size_t r = 0; r < csv.rows.size(); ++r) {
        const auto& row = csv.rows[r];
        int64_t epoch = 0;
        int64_t nodes = 0;
        double seconds = 0;
        if (!parse_int64(row[c[0]], &epoch, kCellNumber) || !parse_double(row[c[1]], &seconds) || std::isnan(seconds) ||
            seconds < 0 || !parse_int64(row[c[3]], &nodes, kCellNumber) || nodes <= 0) {
          error(fmt::format("{}:{}: epoch_id, time or nodes is not a valid number; line skipped", csv.path,
                            csv.lines[r]));
          continue;
        }
        // GPUs per node are only known after the GPU files (below; checked again there); here the bound
        // uses the option or its default.
        const int64_t per_node_bound = opt_.gpus_per_node > 0 ? opt_.gpus_per_node : 4;
        const int64_t max_nodes = kMaxWorkers / per_node_bound;
        if (nodes > max_nodes) {
          error(fmt::format("{}:{}: nodes {} is out of range (1 to {} with --gpus-per-node {}); line skipped", csv.path,
                            csv.lines[r], nodes, max_nodes, per_node_bound));
          continue;
        }
        if (const std::string why = implausible_value(Quantity::kEpochSeconds, "time", seconds); !why.empty()) {
          error(fmt::format("{}:{}: {}; line skipped", csv.path, csv.lines[r], why));
          continue;
        }
        epoch_rows[{std::string(trim_blanks(row[c[2]])), nodes}].push_back({epoch, seconds});
      }
    }
    // gpu-energy-data/{strategy}_{gpus}.csv
    for (const fs::path& f : sorted_files(dir / "gpu-energy-data")) {
      if (f.extension() != ".csv") continue;
      CsvFile csv;
      std::vector<int> c;
      if (!load_csv(f, false, &csv) || !columns(csv,
                                                {"sample_idx", "utilization", "power", "local_rank", "node_idx",
                                                 "num_global_gpus", "strategy", "probing_interval"},
                                                &c)) {
        continue;
      }
      struct Key {
        std::string strategy;
        int64_t gpus;
        std::string device;
        bool operator<(const Key& o) const {
          return std::tie(strategy, gpus, device) < std::tie(o.strategy, o.gpus, o.device);
        }
      };
      std::map<Key, GpuSeries> series;
      std::map<std::pair<std::string, int64_t>, std::pair<double, int64_t>> interval;  // -> (interval, line)
      for (size_t r = 0; r < csv.rows.size(); ++r) {
        const auto& row = csv.rows[r];
        int64_t idx = 0;
        int64_t local_rank = 0;
        int64_t node = 0;
        int64_t gpus = 0;
        double util = 0;
        double power = 0;
        double probe = 0;
        if (!parse_int64(row[c[0]], &idx, kCellNumber) || !parse_double(row[c[1]], &util) ||
            !parse_double(row[c[2]], &power) || !parse_int64(row[c[3]], &local_rank, kCellNumber) ||
            !parse_int64(row[c[4]], &node, kCellNumber) || !parse_int64(row[c[5]], &gpus, kCellNumber) || gpus <= 0 ||
            !parse_double(row[c[7]], &probe) || !(probe > 0)) {
          error(fmt::format("{}:{}: a value is not a valid number; line skipped", csv.path, csv.lines[r]));
          continue;
        }
        if (gpus > kMaxWorkers) {
          error(fmt::format("{}:{}: num_global_gpus {} is out of range (1 to {}); line skipped", csv.path, csv.lines[r],
                            gpus, kMaxWorkers));
          continue;
        }
        util = checked_reading(util, "utilization", csv.path, csv.lines[r]);
        power = checked_reading(power, "power", csv.path, csv.lines[r]);
        const std::string strategy(trim_blanks(row[c[6]]));
        auto [it, inserted] = interval.try_emplace({strategy, gpus}, probe, csv.lines[r]);
        if (!inserted && it->second.first != probe) {
          error(
              fmt::format("{}:{}: probing_interval {} differs from {} on line {} (one interval per strategy and "
                          "GPU count); line skipped",
                          csv.path, csv.lines[r], probe, it->second.first, it->second.second));
          continue;
        }
        auto& nodes_seen = gpu_nodes[{strategy, gpus}];
        nodes_seen.first.insert(node);
        nodes_seen.second = f.filename().string();
        GpuSeries& s = series[{strategy, gpus, fmt::format("node {} gpu {}", node, local_rank)}];
        s.time_s.push_back(static_cast<double>(idx) * probe);
        s.utilization_pct.push_back(util);
        s.power_w.push_back(power);
        s.energy_j.push_back(analysis::kNaN);
        s.probing_interval_s = probe;
      }
      for (auto& [key, s] : series) {
        s.source = f.string();
        s.device = key.device;
        itwinai_run(runs, dir, run_id, key.strategy, key.gpus).gpus.push_back(std::move(s));
      }
    }
    // computation-data/{strategy}_{gpus}_{rank}.csv (communication-data/ before v0.3.1)
    for (const char* sub : {"computation-data", "communication-data"}) {
      for (const fs::path& f : sorted_files(dir / sub)) {
        if (f.extension() != ".csv") continue;
        CsvFile csv;
        if (!load_csv(f, false, &csv) || !has_profiling_columns(csv, &data_.errors)) continue;
        add_profiling_rows(
            csv,
            [&](const ProfilingRowKey& key) -> ComputationSums& {
              RunData& run = itwinai_run(runs, dir, run_id, key.strategy, key.gpus);
              if (!run.computation) run.computation = ComputationSums{};
              return *run.computation;
            },
            &data_.errors);
      }
    }
    // Workers of the epoch-time rows: nodes x GPUs per node, the latter from the GPU files of the same
    // folder where they exist (itwinai's num_global_gpus over the nodes sampled), else the option.
    const int64_t per_node = gpus_per_node(dir, gpu_nodes);
    for (auto& [key, epochs] : epoch_rows) {
      if (key.second > kMaxWorkers / per_node) {
        error(fmt::format("{}/epoch-time: {} nodes x {} GPUs per node is out of range (1 to {} workers); rows skipped",
                          dir.string(), key.second, per_node, kMaxWorkers));
        continue;
      }
      RunData& run = itwinai_run(runs, dir, run_id, key.first, key.second * per_node);
      run.nodes = key.second;
      run.epochs.insert(run.epochs.end(), epochs.begin(), epochs.end());
    }
    for (auto& [key, seen] : gpu_nodes) {
      RunData& run = itwinai_run(runs, dir, run_id, key.first, key.second);
      if (run.nodes == 0) run.nodes = static_cast<int64_t>(seen.first.size());
    }
    attach_itwinai_traces(dir, &runs);
    if (runs.empty()) warn(fmt::format("{}: itwinai layout folders hold no usable CSV data", dir.string()));
    for (auto& [key, run] : runs) data_.runs.push_back(std::move(run));
  }

  const ScalabilityReadOptions& opt_;
  ScalabilityData data_;
  std::map<std::string, int64_t> bad_readings_;  // file -> GPU readings ignored
  std::set<std::string> matched_names_;          // --run-names entries that selected a run
  bool experiment_found_ = false;                // --experiment named a folder that was read
  std::vector<std::string> skipped_itwinai_;     // itwinai folders left out because of --experiment
};

}  // namespace

Result<ScalabilityData> read_scalability_data(const ScalabilityReadOptions& options) {
  const fs::path root(options.root);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return Error{fmt::format("{}: no such directory (give the data folder with --root)", options.root),
                 ErrorKind::kNotFound};
  }
  Reader reader(options);
  reader.read_root(root);
  if (Status st = reader.check_selection(options.root); !st) return st.error();
  return reader.take();
}

}  // namespace scaleprof::importers

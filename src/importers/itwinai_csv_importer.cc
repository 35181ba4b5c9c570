// itwinai's CSV layout into the run-data tables: epoch-time/, gpu-energy-data/, computation-data/
// and communication-data/ CSVs of one folder, runs keyed by strategy and worker count as itwinai keys
// them, GPU readings checked (run_data_sink.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/file_read.h"
#include "core/number_text.h"
#include "importers/csv.h"
#include "importers/profiling_averages.h"
#include "importers/run_data_sink.h"
#include "importers/value_checks.h"
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
    *out = tables::kNaN;
    return true;
  }
  return scaleprof::parse_double(text, out, kCellNumber);
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

class ItwinaiCsvReader : RunDataReader {
 public:
  explicit ItwinaiCsvReader(RunDataSink& sink) : RunDataReader(sink) {}

  tables::RunData& itwinai_run(std::map<std::tuple<std::string, int64_t>, tables::RunData>& runs, const fs::path& dir,
                               const std::string& run_id, const std::string& strategy, int64_t workers) {
    tables::RunData& r = runs[{strategy, workers}];
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
        warn(dir.string(), fmt::format("the GPU files disagree on GPUs per node ({} and {}); epoch-time rows use {}",
                                       found.begin()->second, found.rbegin()->second, option));
      }
      return option;
    }
    const auto& [per_node, example] = *found.begin();
    if (opt_.gpus_per_node > 0 && opt_.gpus_per_node != per_node) {
      warn(dir.string(), fmt::format("--gpus-per-node {} contradicts the GPU data, {} GPUs per node in "
                                     "gpu-energy-data/{}; the data's count is used",
                                     opt_.gpus_per_node, per_node, example));
    }
    return per_node;
  }

  // itwinai's stored profiler traces (<run>/torch-traces/worker_<rank>.<time>.pt.trace.json) belong
  // to the run of the folder; the worker number in the name is the rank (trace/trace_set.h). One run
  // id folder is one training run; a folder holding several configurations cannot say whose they are.
  void attach_itwinai_traces(const fs::path& dir, std::map<std::tuple<std::string, int64_t>, tables::RunData>* runs) {
    const fs::path traces = dir / "torch-traces";
    std::error_code ec;
    if (!fs::is_directory(traces, ec)) return;
    auto files = trace::expand_trace_paths({traces.string()});
    if (!files || files.value().empty()) return;
    if (runs->size() != 1) {
      warn(traces.string(),
           fmt::format("{} configurations in one folder; its traces cannot be matched to one and are not used",
                       runs->size()));
      return;
    }
    runs->begin()->second.trace_files = std::move(files).value();
  }

  void read_itwinai(const fs::path& dir, const std::string& run_id) {
    std::map<std::tuple<std::string, int64_t>, tables::RunData> runs;
    // Epoch-time files count nodes, not GPUs: their rows wait until the GPU files have said how many
    // GPUs a node has. (strategy, nodes) -> epochs.
    std::map<std::pair<std::string, int64_t>, std::vector<tables::EpochTime>> epoch_rows;
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
          error(fmt::format("{}:{}", csv.path, csv.lines[r]),
                "epoch_id, time or nodes is not a valid number; line skipped");
          continue;
        }
        // GPUs per node are only known after the GPU files (below; checked again there); here the bound
        // uses the option or its default.
        const int64_t per_node_bound = opt_.gpus_per_node > 0 ? opt_.gpus_per_node : 4;
        const int64_t max_nodes = kMaxWorkers / per_node_bound;
        if (nodes > max_nodes) {
          error(fmt::format("{}:{}", csv.path, csv.lines[r]),
                fmt::format("nodes {} is out of range (1 to {} with --gpus-per-node {}); line skipped", nodes,
                            max_nodes, per_node_bound));
          continue;
        }
        if (const std::string why = implausible_value(Quantity::kEpochSeconds, "time", seconds); !why.empty()) {
          error(fmt::format("{}:{}", csv.path, csv.lines[r]), fmt::format("{}; line skipped", why));
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
      std::map<Key, tables::GpuSeries> series;
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
          error(fmt::format("{}:{}", csv.path, csv.lines[r]), "a value is not a valid number; line skipped");
          continue;
        }
        if (gpus > kMaxWorkers) {
          error(fmt::format("{}:{}", csv.path, csv.lines[r]),
                fmt::format("num_global_gpus {} is out of range (1 to {}); line skipped", gpus, kMaxWorkers));
          continue;
        }
        util = checked_reading(util, "utilization", csv.path, csv.lines[r]);
        power = checked_reading(power, "power", csv.path, csv.lines[r]);
        const std::string strategy(trim_blanks(row[c[6]]));
        auto [it, inserted] = interval.try_emplace({strategy, gpus}, probe, csv.lines[r]);
        if (!inserted && it->second.first != probe) {
          error(fmt::format("{}:{}", csv.path, csv.lines[r]),
                fmt::format("probing_interval {} differs from {} on line {} (one interval per strategy and GPU count); "
                            "line skipped",
                            probe, it->second.first, it->second.second));
          continue;
        }
        auto& nodes_seen = gpu_nodes[{strategy, gpus}];
        nodes_seen.first.insert(node);
        nodes_seen.second = f.filename().string();
        tables::GpuSeries& s = series[{strategy, gpus, fmt::format("node {} gpu {}", node, local_rank)}];
        s.time_s.push_back(static_cast<double>(idx) * probe);
        s.utilization_pct.push_back(util);
        s.power_w.push_back(power);
        s.energy_j.push_back(tables::kNaN);
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
            [&](const ProfilingRowKey& key) -> tables::ComputationSums& {
              tables::RunData& run = itwinai_run(runs, dir, run_id, key.strategy, key.gpus);
              if (!run.computation) run.computation = tables::ComputationSums{};
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
        error(fmt::format("{}/epoch-time", dir.string()),
              fmt::format("{} nodes x {} GPUs per node is out of range (1 to {} workers); rows skipped", key.second,
                          per_node, kMaxWorkers));
        continue;
      }
      tables::RunData& run = itwinai_run(runs, dir, run_id, key.first, key.second * per_node);
      run.nodes = key.second;
      run.epochs.insert(run.epochs.end(), epochs.begin(), epochs.end());
    }
    for (auto& [key, seen] : gpu_nodes) {
      tables::RunData& run = itwinai_run(runs, dir, run_id, key.first, key.second);
      if (run.nodes == 0) run.nodes = static_cast<int64_t>(seen.first.size());
    }
    attach_itwinai_traces(dir, &runs);
    if (runs.empty()) warn(dir.string(), "itwinai layout folders hold no usable CSV data");
    for (auto& [key, run] : runs) data_.runs.push_back(std::move(run));
  }

 private:
  bool load_csv(const fs::path& path, bool appended, CsvFile* out) {
    std::string text;
    if (!read_text(path, &text)) {
      error(path.string(), "cannot read");
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
};

}  // namespace

void read_itwinai_folder(RunDataSink& sink, const fs::path& dir, const std::string& run_id) {
  ItwinaiCsvReader(sink).read_itwinai(dir, run_id);
}

}  // namespace scaleprof::importers

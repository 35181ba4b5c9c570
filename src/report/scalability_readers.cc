#include "report/scalability_readers.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace scaleprof::report {

namespace fs = std::filesystem;

int CsvFile::column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

CsvFile parse_csv(std::string_view text, const std::string& path, bool appended, std::vector<std::string>* warnings,
                  std::vector<std::string>* errors) {
  CsvFile out;
  out.path = path;
  std::vector<std::string> record;
  std::string field;
  int64_t line = 1;
  int64_t record_line = 1;
  bool in_quotes = false;
  bool first = true;
  auto finish_record = [&] {
    record.push_back(std::move(field));
    field.clear();
    if (first) {
      out.header = std::move(record);
      first = false;
    } else if (!(record.size() == 1 && record[0].empty())) {  // blank lines are not records
      if (record.size() != out.header.size()) {
        errors->push_back(fmt::format("{}:{}: {} fields, the header has {}; line skipped", path, record_line,
                                      record.size(), out.header.size()));
      } else {
        out.rows.push_back(std::move(record));
        out.lines.push_back(record_line);
      }
    }
    record.clear();
  };
  size_t i = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"') {
      in_quotes = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      finish_record();
      ++line;
      record_line = line;
    } else {
      field += c;
    }
  }
  const bool pending = !field.empty() || !record.empty() || in_quotes;
  if (pending) {
    if (appended && !first) {
      warnings->push_back(
          fmt::format("{}:{}: torn last line (the writer stopped mid-record); line skipped", path, record_line));
    } else {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      finish_record();
    }
  }
  for (std::string& h : out.header) {  // a UTF-8 byte order mark or stray spaces are not part of names
    if (h.starts_with("\xEF\xBB\xBF")) h.erase(0, 3);
    while (!h.empty() && h.back() == ' ') h.pop_back();
    while (!h.empty() && h.front() == ' ') h.erase(0, 1);
  }
  return out;
}

namespace {

bool read_text(const fs::path& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = std::move(ss).str();
  return !in.bad();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A decimal number; empty text is NaN (an unknown value). Returns false for anything else.
bool parse_double(std::string_view text, double* out) {
  text = trim(text);
  if (text.empty()) {
    *out = analysis::kNaN;
    return true;
  }
  if (text == "nan" || text == "NaN") {
    *out = analysis::kNaN;
    return true;
  }
  if (text.front() == '+') text.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size() && std::isfinite(*out);
}

bool parse_int(std::string_view text, int64_t* out) {
  text = trim(text);
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  if (ec == std::errc() && ptr == text.data() + text.size()) return true;
  // Integers written as floats by pandas ("4.0").
  double d = 0;
  if (parse_double(text, &d) && !std::isnan(d) && d == std::floor(d) && std::abs(d) < 9e15) {
    *out = static_cast<int64_t>(d);
    return true;
  }
  return false;
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

  ScalabilityData take() { return std::move(data_); }

  bool wanted_run(const std::string& folder, const std::string& name) const {
    if (opt_.run_names.empty()) return true;
    return std::find(opt_.run_names.begin(), opt_.run_names.end(), folder) != opt_.run_names.end() ||
           std::find(opt_.run_names.begin(), opt_.run_names.end(), name) != opt_.run_names.end();
  }

  void read_root(const fs::path& root) {
    if (is_itwinai_dir(root)) read_itwinai(root, "");
    if (is_run_dir(root)) {
      read_run(root, root.parent_path().filename().string());
      return;
    }
    for (const fs::path& child : sorted_subdirs(root)) {
      const std::string name = child.filename().string();
      if (kItwinaiSubdir(name)) continue;
      if (is_itwinai_dir(child)) {
        if (wanted_run(name, name)) read_itwinai(child, name);
      } else if (is_run_dir(child)) {  // the root is one experiment
        if (opt_.experiment.empty() || opt_.experiment == root.filename().string()) {
          read_run(child, root.filename().string());
        }
      } else {
        if (!opt_.experiment.empty() && opt_.experiment != name) continue;
        for (const fs::path& run : sorted_subdirs(child)) {
          if (is_run_dir(run)) read_run(run, name);
        }
      }
    }
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

  // ---- scaleprof run directories -------------------------------------------------------------

  struct JsonFacts {
    bool present = false;
    std::string experiment, run, strategy, status, host;
    int64_t world_size = 0, nodes = 0, rank = -1;
  };

  JsonFacts read_json(const fs::path& path) {
    JsonFacts f;
    if (!path_exists(path)) return f;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    auto err = parser.load(path.string()).get(doc);
    if (err) {
      error(fmt::format("{}: unreadable JSON ({}); file ignored", path.string(), simdjson::error_message(err)));
      return f;
    }
    if (!doc.is_object()) {
      error(fmt::format("{}: not a JSON object; file ignored", path.string()));
      return f;
    }
    f.present = true;
    auto str = [&](const char* key, std::string* out) {
      std::string_view sv;
      if (!doc[key].get(sv)) *out = std::string(sv);
    };
    auto num = [&](const char* key, int64_t* out) {
      simdjson::dom::element e;
      if (doc[key].get(e) || e.is_null()) return;
      int64_t v = 0;
      if (!e.get(v)) {
        *out = v;
      } else {
        error(fmt::format("{}: {} is not an integer; ignored", path.string(), key));
      }
    };
    str("experiment", &f.experiment);
    str("run", &f.run);
    str("strategy", &f.strategy);
    str("status", &f.status);
    str("host", &f.host);
    num("world_size", &f.world_size);
    num("nodes", &f.nodes);
    num("rank", &f.rank);
    return f;
  }

  // gpu.csv of a rank or a node: one series per device.
  void read_gpu_csv(const fs::path& path, const std::string& label, RunData* run) {
    CsvFile csv;
    if (!load_csv(path, true, &csv)) return;
    std::vector<int> c;
    if (!columns(csv, {"time_unix_ns", "device"}, &c)) return;
    const int util = csv.column("utilization_pct");
    const int power = csv.column("power_w");
    const int energy = csv.column("energy_j");
    std::map<std::string, GpuSeries> by_device;
    for (size_t r = 0; r < csv.rows.size(); ++r) {
      const auto& row = csv.rows[r];
      int64_t t = 0;
      double u = analysis::kNaN;
      double p = analysis::kNaN;
      double e = analysis::kNaN;
      if (!parse_int(row[c[0]], &t) || (util >= 0 && !parse_double(row[util], &u)) ||
          (power >= 0 && !parse_double(row[power], &p)) || (energy >= 0 && !parse_double(row[energy], &e))) {
        error(fmt::format("{}:{}: a value is not a number; line skipped", csv.path, csv.lines[r]));
        continue;
      }
      GpuSeries& s = by_device[std::string(trim(row[c[1]]))];
      s.time_s.push_back(static_cast<double>(t) / 1e9);
      s.utilization_pct.push_back(u);
      s.power_w.push_back(p);
      s.energy_j.push_back(e);
    }
    for (auto& entry : by_device) {
      const std::string& device = entry.first;
      GpuSeries& s = entry.second;
      s.source = path.string();
      s.device = label.empty() ? device : fmt::format("{} gpu {}", label, device);
      // Samples sorted by time (writers append in order; this guards against clock steps).
      std::vector<size_t> order(s.time_s.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s.time_s[a] < s.time_s[b]; });
      GpuSeries sorted = s;
      for (size_t i = 0; i < order.size(); ++i) {
        sorted.time_s[i] = s.time_s[order[i]];
        sorted.utilization_pct[i] = s.utilization_pct[order[i]];
        sorted.power_w[i] = s.power_w[order[i]];
        sorted.energy_j[i] = s.energy_j[order[i]];
      }
      run->gpus.push_back(std::move(sorted));
    }
  }

  void read_run(const fs::path& dir, const std::string& experiment_folder) {
    const std::string folder = dir.filename().string();
    const JsonFacts run_json = read_json(dir / "run.json");
    RunData run;
    run.layout = "scaleprof";
    run.path = dir.string();
    run.experiment = run_json.experiment.empty() ? experiment_folder : run_json.experiment;
    run.name = run_json.run.empty() ? folder : run_json.run;
    if (!wanted_run(folder, run.name)) return;
    run.strategy = run_json.strategy;
    run.workers = run_json.world_size;
    run.nodes = run_json.nodes;
    run.status = run_json.status;

    std::map<int64_t, double> epoch_max;  // epoch -> slowest rank's duration
    std::set<std::string> hosts;
    int64_t ranks = 0;
    int64_t rank_world = 0;
    int64_t rank_nodes = 0;
    bool any_failed = false;
    bool all_completed = true;
    std::vector<fs::path> rank_gpu_files;
    for (const fs::path& rdir : sorted_subdirs(dir)) {
      const std::string rname = rdir.filename().string();
      if (!is_rank_dir_name(rname)) continue;
      ++ranks;
      const JsonFacts rank_json = read_json(rdir / "rank.json");
      if (rank_json.present) {
        if (!rank_json.host.empty()) hosts.insert(rank_json.host);
        if (run.strategy.empty()) run.strategy = rank_json.strategy;
        if (rank_json.world_size > 0) {
          if (run_json.world_size > 0 && rank_json.world_size != run_json.world_size) {
            error(fmt::format("{}: world_size {} contradicts run.json's {}; run.json's is used",
                              (rdir / "rank.json").string(), rank_json.world_size, run_json.world_size));
          }
          rank_world = std::max(rank_world, rank_json.world_size);
        }
        rank_nodes = std::max(rank_nodes, rank_json.nodes);
        any_failed |= rank_json.status == "failed";
        all_completed &= rank_json.status == "completed";
      } else {
        all_completed = false;
      }
      const fs::path epochs_path = rdir / "epochs.csv";
      if (path_exists(epochs_path)) {
        CsvFile csv;
        std::vector<int> c;
        if (load_csv(epochs_path, true, &csv) && columns(csv, {"epoch", "duration_s"}, &c)) {
          for (size_t r = 0; r < csv.rows.size(); ++r) {
            int64_t epoch = 0;
            double seconds = 0;
            if (!parse_int(csv.rows[r][c[0]], &epoch)) {
              error(fmt::format("{}:{}: epoch '{}' is not an integer; line skipped", csv.path, csv.lines[r],
                                csv.rows[r][c[0]]));
              continue;
            }
            if (!parse_double(csv.rows[r][c[1]], &seconds) || std::isnan(seconds) || seconds < 0) {
              error(fmt::format("{}:{}: duration_s '{}' is not a non-negative number; line skipped", csv.path,
                                csv.lines[r], csv.rows[r][c[1]]));
              continue;
            }
            auto [it, inserted] = epoch_max.try_emplace(epoch, seconds);
            if (!inserted) it->second = std::max(it->second, seconds);
          }
        }
      }
      if (path_exists(rdir / "gpu.csv")) rank_gpu_files.push_back(rdir / "gpu.csv");
      const fs::path traces = rdir / "traces";
      for (const fs::path& f : sorted_files(traces)) {
        const std::string n = f.filename().string();
        if (n.ends_with(".json") || n.ends_with(".json.gz")) run.trace_files.push_back(f.string());
      }
    }
    // GPU samples: the wrapper's node-<host>/gpu.csv when present (ranks then do not sample), else
    // each rank's own.
    bool node_gpu = false;
    for (const fs::path& ndir : sorted_subdirs(dir)) {
      const std::string nname = ndir.filename().string();
      if (nname.starts_with("node-") && path_exists(ndir / "gpu.csv")) {
        read_gpu_csv(ndir / "gpu.csv", nname, &run);
        node_gpu = true;
      }
    }
    if (!node_gpu) {
      for (const fs::path& f : rank_gpu_files) read_gpu_csv(f, f.parent_path().filename().string(), &run);
    }
    if (run.workers <= 0) run.workers = rank_world > 0 ? rank_world : ranks;
    if (run.nodes <= 0) run.nodes = rank_nodes > 0 ? rank_nodes : static_cast<int64_t>(hosts.size());
    if (run.strategy.empty()) {
      run.strategy = "unknown";
      warn(fmt::format("{}: no strategy in run.json or rank.json; shown as 'unknown'", run.path));
    }
    if (any_failed) {
      run.status = "failed";
    } else if (run.status.empty()) {
      run.status = ranks > 0 && all_completed ? "completed" : "incomplete";
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

  void read_itwinai(const fs::path& dir, const std::string& run_id) {
    std::map<std::tuple<std::string, int64_t>, RunData> runs;
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
        if (!parse_int(row[c[0]], &epoch) || !parse_double(row[c[1]], &seconds) || std::isnan(seconds) || seconds < 0 ||
            !parse_int(row[c[3]], &nodes) || nodes <= 0) {
          error(fmt::format("{}:{}: epoch_id, time or nodes is not a valid number; line skipped", csv.path,
                            csv.lines[r]));
          continue;
        }
        RunData& run = itwinai_run(runs, dir, run_id, std::string(trim(row[c[2]])), nodes * opt_.gpus_per_node);
        run.nodes = nodes;
        run.epochs.push_back({epoch, seconds});
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
        if (!parse_int(row[c[0]], &idx) || !parse_double(row[c[1]], &util) || !parse_double(row[c[2]], &power) ||
            !parse_int(row[c[3]], &local_rank) || !parse_int(row[c[4]], &node) || !parse_int(row[c[5]], &gpus) ||
            gpus <= 0 || !parse_double(row[c[7]], &probe) || !(probe > 0)) {
          error(fmt::format("{}:{}: a value is not a valid number; line skipped", csv.path, csv.lines[r]));
          continue;
        }
        const std::string strategy(trim(row[c[6]]));
        auto [it, inserted] = interval.try_emplace({strategy, gpus}, probe, csv.lines[r]);
        if (!inserted && it->second.first != probe) {
          error(
              fmt::format("{}:{}: probing_interval {} differs from {} on line {} (one interval per strategy and "
                          "GPU count); line skipped",
                          csv.path, csv.lines[r], probe, it->second.first, it->second.second));
          continue;
        }
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
        std::vector<int> c;
        if (!load_csv(f, false, &csv) ||
            !columns(csv, {"name", "self_cuda_time_total", "strategy", "num_gpus", "global_rank"}, &c)) {
          continue;
        }
        std::set<std::tuple<std::string, int64_t, int64_t>> ranks_seen;
        for (size_t r = 0; r < csv.rows.size(); ++r) {
          const auto& row = csv.rows[r];
          double self_us = 0;
          int64_t gpus = 0;
          int64_t rank = 0;
          if (!parse_double(row[c[1]], &self_us) || std::isnan(self_us) || !parse_int(row[c[3]], &gpus) || gpus <= 0 ||
              !parse_int(row[c[4]], &rank)) {
            // itwinai drops rows with no strategy/num_gpus ("corrupted rows") the same way.
            error(
                fmt::format("{}:{}: self_cuda_time_total, num_gpus or global_rank is not a valid number; line "
                            "skipped",
                            csv.path, csv.lines[r]));
            continue;
          }
          const std::string strategy(trim(row[c[2]]));
          RunData& run = itwinai_run(runs, dir, run_id, strategy, gpus);
          if (!run.computation) run.computation = ComputationSums{};
          ComputationSums& sums = *run.computation;
          const auto ns = static_cast<int64_t>(std::llround(self_us * 1000.0));
          const std::string& name = row[c[0]];
          sums.total_ns += ns;
          if (name.starts_with("ProfilerStep")) sums.profiler_step_ns += ns;
          if (analysis::is_computation_op_name(name)) sums.computation_ns += ns;
          if (ranks_seen.insert({strategy, gpus, rank}).second) ++sums.ranks;
        }
      }
    }
    if (runs.empty()) warn(fmt::format("{}: itwinai layout folders hold no usable CSV data", dir.string()));
    for (auto& [key, run] : runs) data_.runs.push_back(std::move(run));
  }

  const ScalabilityReadOptions& opt_;
  ScalabilityData data_;
};

}  // namespace

Result<ScalabilityData> read_scalability_data(const ScalabilityReadOptions& options) {
  const fs::path root(options.root);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return Error{fmt::format("{}: no such directory (give the data folder with --root)", options.root)};
  }
  Reader reader(options);
  reader.read_root(root);
  return reader.take();
}

}  // namespace scaleprof::report

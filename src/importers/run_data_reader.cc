// The walk over a data folder for read_scalability_data (importers/run_data_reader.h): which folders
// are scaleprof run directories (importers/run_dir_importer.cc) and which hold itwinai's CSV layout
// (importers/itwinai_csv_importer.cc), --experiment and --run-names, and the selection check.
#include "importers/run_data_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "collect/run_names.h"
#include "core/file_read.h"
#include "importers/jobs_not_run.h"
#include "importers/run_data_sink.h"

namespace scaleprof::importers {

namespace fs = std::filesystem;

namespace {

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
  explicit Reader(const ScalabilityReadOptions& options) : sink_(options), opt_(options) {}

  tables::ScalabilityData take() { return sink_.take(); }

  // itwinai's CSV layout has no experiment names: with --experiment its folders are left out (and
  // said so), never silently mixed in.
  void read_itwinai_if_wanted(const fs::path& dir, const std::string& run_id) {
    if (!opt_.experiment.empty()) {
      skipped_itwinai_.push_back(dir.string());
      return;
    }
    if (sink_.wanted_run(run_id.empty() ? dir.filename().string() : run_id, run_id)) {
      read_itwinai_folder(sink_, dir, run_id);
    }
  }

  void read_root(const fs::path& root) {
    if (is_itwinai_dir(root)) read_itwinai_if_wanted(root, "");
    if (is_run_dir(root)) {
      if (opt_.experiment.empty() || opt_.experiment == root.parent_path().filename().string()) {
        experiment_found_ = true;
        read_run_unless_superseded(root, root.parent_path(), root.parent_path().filename().string());
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
          read_run_unless_superseded(child, root, root.filename().string());
        }
      } else {
        if (!opt_.experiment.empty() && opt_.experiment != name) continue;
        experiment_found_ = true;
        for (const fs::path& run : sorted_subdirs(child)) {
          if (is_run_dir(run)) read_run_unless_superseded(run, child, name);
        }
        read_jobs_not_run(child, name);
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
      if (!sink_.selected_something(n)) missing += fmt::format("{}'{}'", missing.empty() ? "" : ", ", n);
    }
    if (!missing.empty()) {
      return Error{fmt::format("--run-names: no run named {} under {}{}", missing, root,
                               opt_.experiment.empty() ? "" : " in experiment '" + opt_.experiment + "'"),
                   ErrorKind::kNotFound};
    }
    for (const auto& [experiment_dir, runs] : left_out_) {
      std::string names;
      for (const std::string& r : runs) names += (names.empty() ? "" : ", ") + r;
      warn(experiment_dir, fmt::format("left out {} run(s) of SLURM jobs that a later 'scaleprof slurm --force' "
                                       "superseded ({} lists them): {}; --include-superseded keeps them",
                                       runs.size(), collect::kSupersededJobsFile, names));
    }
    for (const std::string& dir : skipped_itwinai_) {
      warn(dir, fmt::format("itwinai CSV data left out: its layout has no experiment name to match --experiment {}",
                            opt_.experiment));
    }
    return Ok{};
  }

 private:
  // A run of the experiment folder `experiment_dir`, unless its SLURM job was superseded.
  void read_run_unless_superseded(const fs::path& run, const fs::path& experiment_dir, const std::string& name) {
    if (!opt_.include_superseded) {
      const std::string job = collect::slurm_job_of_run(run.filename().string());
      if (!job.empty() && superseded_jobs(experiment_dir).count(job) != 0) {
        left_out_[experiment_dir.string()].push_back(run.filename().string());
        return;
      }
    }
    const size_t before = sink_.data().runs.size();
    read_scaleprof_run(sink_, run, name);
    // The log `scaleprof slurm` recorded for the run's job, named beside it where it failed.
    const std::string job = collect::slurm_job_of_run(run.filename().string());
    if (job.empty()) return;
    const std::map<std::string, std::string>& logs = job_logs(experiment_dir);
    if (auto it = logs.find(job); it != logs.end()) {
      for (size_t i = before; i < sink_.data().runs.size(); ++i) sink_.data().runs[i].log = it->second;
    }
  }

  // The SLURM jobs of the experiment that never ran their configuration (jobs-not-run.txt, written by
  // `scaleprof slurm status`): one run each, status not_run, with no data, so that the report shows
  // the configuration as one that did not run. A job whose run was read since (it ran after all), or
  // that a later --force superseded, is not one.
  void read_jobs_not_run(const fs::path& experiment_dir, const std::string& experiment) {
    const std::string path = (experiment_dir / kJobsNotRunFile).string();
    auto text = read_named_file(path, size_t{16} << 20);
    if (const auto* failure = std::get_if<FileReadFailure>(&text)) {
      if (failure->what != FileReadFailure::What::kMissing) warn(path, "cannot be read");
      return;
    }
    std::vector<std::string> warnings;
    const std::vector<JobNotRun> jobs = parse_jobs_not_run(std::get<std::string>(text), path, &warnings);
    for (std::string& w : warnings) warn(std::move(w));
    std::set<std::string> read;
    int64_t per_node = 0;  // processes per node of the experiment's runs, for records that lack workers
    for (const tables::RunData& r : sink_.data().runs) {
      if (r.experiment != experiment) continue;
      read.insert(r.name);
      read.insert(fs::path(r.path).filename().string());
      if (per_node == 0 && r.nodes > 0 && r.workers > 0 && r.workers % r.nodes == 0) per_node = r.workers / r.nodes;
    }
    for (const JobNotRun& j : jobs) {
      const std::string name = j.run_prefix + "-slurm" + j.job_id;
      if (read.count(name) != 0) continue;
      if (!opt_.include_superseded && superseded_jobs(experiment_dir).count(j.job_id) != 0) continue;
      if (!sink_.wanted_run(name, name)) continue;
      tables::RunData r;
      r.layout = "scaleprof";
      r.experiment = experiment;
      r.name = name;
      r.strategy = j.strategy;
      r.nodes = j.nodes;
      r.workers = j.workers > 0 ? j.workers : j.nodes * std::max<int64_t>(1, per_node);
      r.path = (experiment_dir / name).string();
      r.status = "not_run";
      r.not_run = not_run_reason(j);
      // A job that started wrote its log; one cancelled while pending never did.
      if (j.state == "failed" || (j.elapsed_s && *j.elapsed_s > 0)) {
        const std::map<std::string, std::string>& logs = job_logs(experiment_dir);
        if (auto it = logs.find(j.job_id); it != logs.end()) r.log = it->second;
      }
      sink_.data().runs.push_back(std::move(r));
    }
  }

  // The job logs of the folder's job-logs.txt ("<job id> <path>" per line; other lines ignored), read once.
  const std::map<std::string, std::string>& job_logs(const fs::path& experiment_dir) {
    auto [it, fresh] = job_logs_.try_emplace(experiment_dir.string());
    if (!fresh) return it->second;
    auto text = read_named_file((experiment_dir / collect::kJobLogsFile).string(), size_t{16} << 20);
    if (const auto* all = std::get_if<std::string>(&text)) {
      std::istringstream in(*all);
      std::string line;
      while (std::getline(in, line)) {
        const size_t space = line.find(' ');
        if (space == 0 || space == std::string::npos || space + 1 == line.size()) continue;
        const std::string id = line.substr(0, space);
        if (id.find_first_not_of("0123456789") == std::string::npos) it->second[id] = line.substr(space + 1);
      }
    }
    return it->second;  // missing or unreadable: no logs named (they are a help, not data)
  }

  // The job ids of the folder's superseded-jobs.txt (one per line; other lines ignored), read once.
  const std::set<std::string>& superseded_jobs(const fs::path& experiment_dir) {
    auto [it, fresh] = superseded_.try_emplace(experiment_dir.string());
    if (!fresh) return it->second;
    const std::string path = (experiment_dir / collect::kSupersededJobsFile).string();
    auto text = read_named_file(path, size_t{16} << 20);
    if (const auto* failure = std::get_if<FileReadFailure>(&text)) {
      if (failure->what != FileReadFailure::What::kMissing) {
        warn(path, "cannot be read; runs of superseded SLURM jobs may be pooled with the others");
      }
      return it->second;
    }
    const std::string& all = std::get<std::string>(text);
    size_t from = 0;
    while (from < all.size()) {
      size_t end = all.find('\n', from);
      if (end == std::string::npos) end = all.size();
      const std::string line = all.substr(from, end - from);
      if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos) it->second.insert(line);
      from = end + 1;
    }
    return it->second;
  }

  static bool kItwinaiSubdir(const std::string& name) {
    return std::any_of(std::begin(kItwinaiDirs), std::end(kItwinaiDirs), [&](const char* d) { return name == d; });
  }

  void warn(std::string message) { sink_.warn(std::move(message)); }
  void warn(std::string where, std::string message) { sink_.warn(std::move(where), std::move(message)); }

  RunDataSink sink_;
  const ScalabilityReadOptions& opt_;
  bool experiment_found_ = false;                            // --experiment named a folder that was read
  std::vector<std::string> skipped_itwinai_;                 // itwinai folders left out because of --experiment
  std::map<std::string, std::set<std::string>> superseded_;  // experiment folder -> job ids
  std::map<std::string, std::map<std::string, std::string>> job_logs_;  // experiment folder -> job id -> log
  std::map<std::string, std::vector<std::string>> left_out_;            // experiment folder -> runs left out
};

}  // namespace

Result<tables::ScalabilityData> read_scalability_data(const ScalabilityReadOptions& options) {
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

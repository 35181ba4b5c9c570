#include "launch/jobs_not_run.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "core/file_read.h"
#include "core/output_file.h"
#include "importers/jobs_not_run.h"

namespace scaleprof::launch {

namespace {

// A job that ended (or waits) without its run: what the report shows as a configuration that did not run.
bool never_ran(const JobStatus& s) {
  return s.job.kind == "job" && !s.job.superseded && s.run.empty() &&
         (s.state == "cancelled" || s.state == "failed" || s.state == "pending");
}

}  // namespace

void record_jobs_not_run(const std::vector<JobStatus>& statuses, std::vector<std::string>* notes) {
  // Per experiment folder: the jobs these statuses speak for, and those of them that did not run.
  std::map<std::string, std::set<std::string>> spoken;
  std::map<std::string, std::vector<importers::JobNotRun>> found;
  for (const JobStatus& s : statuses) {
    if (s.job.kind != "job" || s.job.root.empty() || s.job.experiment.empty()) continue;
    const std::string dir = s.job.root + "/" + s.job.experiment;
    spoken[dir].insert(s.job.job_id);
    if (!never_ran(s)) continue;
    importers::JobNotRun j;
    j.job_id = s.job.job_id;
    j.strategy = s.job.strategy;
    j.nodes = s.job.nodes;
    j.workers = s.job.nodes * s.job.processes_per_node;
    j.repetition = s.job.repetition;
    j.run_prefix = s.job.run_prefix;
    j.slurm_state = s.slurm_state.empty() ? std::string("UNKNOWN") : s.slurm_state.substr(0, s.slurm_state.find(' '));
    j.state = s.state;
    j.elapsed_s = s.elapsed_s;
    found[dir].push_back(std::move(j));
  }
  for (const auto& [dir, ids] : spoken) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) continue;  // nothing was recorded there: no report to tell
    const std::string path = dir + "/" + std::string(importers::kJobsNotRunFile);
    std::vector<importers::JobNotRun> kept;
    std::string before;
    auto text = read_named_file(path, size_t{16} << 20);
    if (const auto* all = std::get_if<std::string>(&text)) {
      before = *all;
      std::vector<std::string> warnings;
      for (importers::JobNotRun& j : importers::parse_jobs_not_run(*all, path, &warnings)) {
        if (ids.count(j.job_id) == 0) kept.push_back(std::move(j));  // another launch's: not ours to judge
      }
    } else if (std::get<FileReadFailure>(text).what != FileReadFailure::What::kMissing) {
      notes->push_back(fmt::format("{}: cannot be read; the jobs that did not run are not recorded", path));
      continue;
    }
    const auto it = found.find(dir);
    if (it != found.end()) kept.insert(kept.end(), it->second.begin(), it->second.end());
    if (kept.empty() && before.empty()) continue;
    const std::string after = importers::jobs_not_run_text(kept);
    if (after == before) continue;
    if (Status ok = write_output_file(path, after); !ok) {
      notes->push_back(fmt::format("the jobs that did not run could not be recorded: {}", ok.error().message));
    }
  }
}

}  // namespace scaleprof::launch

#include "importers/jobs_not_run.h"

#include <fmt/format.h>

#include "core/number_text.h"
#include "importers/run_data_reader.h"

namespace scaleprof::importers {

namespace {

constexpr std::string_view kHeader =
    "job_id\tstrategy\tnodes\tworkers\trepetition\trun_prefix\tslurm_state\tstate\telapsed_s";

std::optional<int64_t> number(std::string_view s, int64_t max) {
  const std::optional<int64_t> v = parse_int64(s);
  if (!v || *v < 0 || *v > max) return std::nullopt;
  return v;
}

bool plain(std::string_view s) {
  return !s.empty() && s.size() <= 256 &&
         s.find_first_not_of(
             "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
             "0123456789._+-") == std::string_view::npos;
}

std::string duration(int64_t s) {
  return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}

}  // namespace

std::string jobs_not_run_text(const std::vector<JobNotRun>& jobs) {
  std::string out(kHeader);
  out += '\n';
  for (const JobNotRun& j : jobs) {
    out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", j.job_id, j.strategy, j.nodes, j.workers, j.repetition,
                       j.run_prefix, j.slurm_state, j.state, j.elapsed_s ? std::to_string(*j.elapsed_s) : "-");
  }
  return out;
}

std::vector<JobNotRun> parse_jobs_not_run(std::string_view text, const std::string& path,
                                          std::vector<std::string>* warnings) {
  std::vector<JobNotRun> out;
  int64_t line_no = 0;
  size_t from = 0;
  while (from < text.size()) {
    size_t end = text.find('\n', from);
    const bool torn = end == std::string_view::npos;
    if (torn) end = text.size();
    const std::string_view line = text.substr(from, end - from);
    from = end + 1;
    ++line_no;
    if (line == kHeader || line.empty()) continue;
    if (out.size() >= kMaxJobsNotRun) {
      warnings->push_back(fmt::format("{}: more than {} jobs; the rest are not read", path, kMaxJobsNotRun));
      break;
    }
    std::vector<std::string_view> f;
    size_t at = 0;
    while (f.size() < 10) {
      const size_t tab = line.find('\t', at);
      f.push_back(line.substr(at, tab == std::string_view::npos ? std::string_view::npos : tab - at));
      if (tab == std::string_view::npos) break;
      at = tab + 1;
    }
    JobNotRun j;
    const auto nodes = f.size() == 9 ? number(f[2], kMaxWorkers) : std::nullopt;
    const auto workers = f.size() == 9 ? number(f[3], kMaxWorkers) : std::nullopt;
    const auto repetition = f.size() == 9 ? number(f[4], 1'000'000) : std::nullopt;
    const auto elapsed = f.size() == 9 && f[8] != "-" ? number(f[8], int64_t{1} << 40) : std::nullopt;
    const bool states_ok =
        f.size() == 9 && plain(f[6]) && (f[7] == "cancelled" || f[7] == "failed" || f[7] == "pending");
    if (torn || f.size() != 9 || f[0].find_first_not_of("0123456789_") != std::string_view::npos || f[0].empty() ||
        f[0].size() > 32 || !plain(f[1]) || !nodes || *nodes == 0 || !workers || !repetition || !plain(f[5]) ||
        !states_ok || (f[8] != "-" && !elapsed)) {
      warnings->push_back(
          fmt::format("{}:{}: {}; skipped", path, line_no,
                      torn ? "torn last line (the writer stopped mid-record)"
                           : "not a job record (job id, strategy, nodes, workers, repetition, run prefix, SLURM "
                             "state, state, elapsed seconds; tab-separated)"));
      continue;
    }
    j.job_id = std::string(f[0]);
    j.strategy = std::string(f[1]);
    j.nodes = *nodes;
    j.workers = *workers;
    j.repetition = *repetition;
    j.run_prefix = std::string(f[5]);
    j.slurm_state = std::string(f[6]);
    j.state = std::string(f[7]);
    j.elapsed_s = elapsed;
    out.push_back(std::move(j));
  }
  return out;
}

std::string not_run_reason(const JobNotRun& j) {
  std::string what;
  const bool started = j.elapsed_s && *j.elapsed_s > 0;
  if (j.state == "pending") {
    what = "has not started (pending)";
  } else if (!started) {
    what = j.state + " before it ran";
  } else {
    what = fmt::format("{} after {} without recording a run", j.state, duration(*j.elapsed_s));
  }
  return fmt::format("{} (SLURM state {}, job {})", what, j.slurm_state, j.job_id);
}

}  // namespace scaleprof::importers

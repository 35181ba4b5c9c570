// SLURM jobs of a launch that never ran their configuration (cancelled while pending, failed before
// the training started, still pending): `scaleprof slurm status` (and the report job, through it)
// writes them into <root>/<experiment>/jobs-not-run.txt, and the scalability report shows each as a
// configuration that did not run, beside the failed ones (docs/report.md, "Failed runs and
// configurations"). The one format of that file: its writer and its reader are here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scaleprof::importers {

inline constexpr std::string_view kJobsNotRunFile = "jobs-not-run.txt";
// Lines of the file, at most: one per job of a launch (launch::kMaxJobs is 2,000), many launches.
inline constexpr size_t kMaxJobsNotRun = 100'000;

struct JobNotRun {
  std::string job_id;       // digits
  std::string strategy;     // ddp, fsdp, deepspeed, horovod
  int64_t nodes = 0;        // 1 .. kMaxWorkers
  int64_t workers = 0;      // nodes x processes per node; 0 where the record did not say
  int64_t repetition = 0;   // 1 ..
  std::string run_prefix;   // <strategy>-n<nodes>-r<repetition>: its run would have been <run_prefix>-slurm<job id>
  std::string slurm_state;  // SLURM's word (CANCELLED, NODE_FAIL, PENDING, ...)
  std::string state;        // its class: cancelled, failed or pending
  std::optional<int64_t> elapsed_s;
};

// The file's text: a header line, then one tab-separated line per job.
std::string jobs_not_run_text(const std::vector<JobNotRun>& jobs);

// The jobs of the file's `text`; a line that is not a whole record is skipped with a warning
// "<path>:<line>: ...". At most kMaxJobsNotRun are read (a warning says so).
std::vector<JobNotRun> parse_jobs_not_run(std::string_view text, const std::string& path,
                                          std::vector<std::string>* warnings);

// Why the job did not run, for the report: "cancelled before it ran", "failed before it ran",
// "cancelled after 0:02:05 without recording a run", "has not started (pending)", then SLURM's state and
// the job id: "cancelled before it ran (SLURM state CANCELLED, job 4711)".
std::string not_run_reason(const JobNotRun& job);

}  // namespace scaleprof::importers

// Submitting a launch's scripts with sbatch and the record of what was submitted:
// <script_dir>/submitted.jsonl, one JSON object per job, appended as soon as sbatch answers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/captured_command.h"
#include "core/result.h"
#include "launch/launch_config.h"
#include "launch/slurm_script.h"

namespace scaleprof::launch {

inline constexpr std::string_view kSubmittedFile = "submitted.jsonl";

struct SubmittedJob {
  std::string kind = "job";  // "job" or "report"
  std::string job_id, job_name, script, strategy, experiment, root, run_prefix;
  int64_t nodes = 0, repetition = 0;
  int64_t processes_per_node = 0;  // ranks per node (0: not recorded): the workers of a job that never ran
  int64_t submitted_unix_ns = 0;
  bool superseded = false;  // replaced by a later `scaleprof slurm --force` of the same experiment
  // `scaleprof slurm analyze`: a job array of this many tasks (0: not an array); recorded once, shown
  // by `slurm status` one row per task (<job id>_<task>).
  int64_t array_tasks = 0;
  // The file the job writes last (its outcome once SLURM has forgotten the job: written means done,
  // the writer replaces files atomically); in an array's record "%a" stands for the task id.
  std::string output;
};

// One line of submitted.jsonl (ending in '\n'); "superseded": true is written only when it is.
std::string submitted_line(const SubmittedJob& job);

// Reads submitted.jsonl. Lines that are not whole records (a torn last line, hand edits), longer
// than kMaxSubmittedLine, or with a count past what a submission writes (nodes, repetition,
// array_tasks, submitted_unix_ns: negative or above the bounds below) are skipped with a warning
// "file:line: ..." in *warnings; a read error is an error, never a shorter list. More than
// kMaxSubmittedRows jobs and array tasks together (the rows of `slurm status`) is a one-line error
// (ErrorKind::kTooLarge), so no file makes the status grow without bound.
inline constexpr size_t kMaxSubmittedLine = 64 * 1024;
inline constexpr int64_t kMaxRecordedNodes = 100000;         // num_nodes' and scalability_nodes' most
inline constexpr int64_t kMaxRecordedRepetition = 1000000;   // --append numbers past `repetitions` (1,000)
inline constexpr int64_t kMaxRecordedArrayTasks = kMaxJobs;  // slurm analyze's shards (analysis_jobs.h)
inline constexpr size_t kMaxSubmittedRows = 200000;          // 100 submissions of kMaxJobs
Result<std::vector<SubmittedJob>> read_submitted(const std::string& path, std::vector<std::string>* warnings);

// The file SLURM writes for an --output/--error `pattern` of the job `job_name` with id `job_id`: %j,
// %J and %x filled in, %% made %, made absolute against the current folder (sbatch's working
// folder); "" when the pattern holds anything else SLURM fills in per node, task or array index.
std::string job_log_path(const std::string& pattern, const std::string& job_name, const std::string& job_id);

// The job id in `sbatch --parsable` output ("123" or "123;cluster"), or "" when there is none.
std::string parse_job_id(const std::string& sbatch_output);

// The jobs of the earlier submission(s) of this experiment (same experiment and root) that are not
// superseded yet: what --force replaces.
std::vector<SubmittedJob> earlier_submission(const std::vector<SubmittedJob>& recorded, const LaunchConfig& config);

// The highest repetition number the recorded jobs of this experiment used, 0 when none: --append
// numbers its repetitions after it.
int64_t last_repetition(const std::vector<SubmittedJob>& recorded, const LaunchConfig& config);

// Supersedes `earlier` (from earlier_submission): their job ids are appended to
// <root>/<experiment>/superseded-jobs.txt (collect::kSupersededJobsFile), which the report reads;
// submitted.jsonl is rewritten atomically with "superseded": true on them; and their scripts that
// the new set does not replace (`kept`: the new set's paths) are removed, so script_dir holds only the
// new submission. The earlier jobs are not cancelled. Lines of *notes say what was done.
Status supersede(const LaunchConfig& config, const std::vector<SubmittedJob>& earlier,
                 const std::vector<std::string>& kept, std::vector<std::string>* notes);

// Appends `line` to `path` with one write() (O_APPEND): a crash loses at most this line.
Status append_line(const std::string& path, const std::string& line);

// Submits one script with `sbatch --parsable ARGS PATH`, or the script `text` on standard input when
// `path` is "", through run_captured within `limits`; `what` names it in errors. *job_id: the id
// sbatch answered. An error when sbatch fails, answers no id, or is stopped (then the job may be
// queued all the same, which the message says).
Status submit_script(const std::vector<std::string>& args, const std::string& path, const std::string& text,
                     const std::string& what, const CaptureLimits& limits, std::string* job_id);

struct SubmitPlan {
  std::vector<JobPlan> jobs;
  std::vector<std::string> scripts;       // text of each job's script
  std::vector<std::string> script_paths;  // where each was saved, or "" when not saved (sent on stdin)
  std::string report_script, report_path;
};

// Submits every job with `sbatch --parsable`, appending each to <script_dir>/submitted.jsonl as soon
// as it has an id, then (when config.report) the report job with --dependency=afterany on all of
// them. Stops at the first sbatch that fails, with its stderr in the error; what was submitted
// before stays recorded and is in *submitted. `progress` is told about each submitted job.
Status submit_all(const LaunchConfig& config, const SubmitPlan& plan, std::vector<SubmittedJob>* submitted,
                  const std::function<void(const SubmittedJob&)>& progress);

}  // namespace scaleprof::launch

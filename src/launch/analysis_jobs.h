// `scaleprof slurm analyze`: the trace analysis of a big job as SLURM jobs, docs/scale.md's recipe
// made a command. A job array of shards, each running `scaleprof trace collectives|stragglers
// --ranks R --partial FILE` over its ranks, then one merge job (`--dependency=afterok` on the
// array) running `scaleprof trace merge`, whose output is byte for byte that of one run over all
// ranks. Everything goes into one output folder: the two scripts, submitted.jsonl (read by
// `scaleprof slurm status`, one row per array task and one for the merge), logs/, shards/ and the
// merged results.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "launch/job_status.h"
#include "launch/launch_config.h"
#include "launch/submission.h"

namespace scaleprof::launch {

inline constexpr std::string_view kShardScriptName = "shards.sh";
inline constexpr std::string_view kMergeScriptName = "merge.sh";
// The kinds of submitted.jsonl records: the array (one record), each of its tasks as `slurm status`
// shows it, and the merge job.
inline constexpr std::string_view kShardsKind = "analysis-shards";
inline constexpr std::string_view kShardKind = "analysis-shard";
inline constexpr std::string_view kMergeKind = "analysis-merge";
// Array tasks one analysis may plan: as many as the jobs of one launch.
inline constexpr int64_t kMaxShards = kMaxJobs;

// One rank of the input and the files only it needs (none when every shard lists one directory).
struct ShardInput {
  int64_t rank = 0;
  std::vector<std::string> files;
};

// One array task: its ranks as `--ranks` takes them ("16-31", or "1,5,9" when not consecutive) and
// its own trace files.
struct AnalysisShard {
  std::string ranks;
  std::vector<std::string> paths;
};

struct AnalysisPlan {
  std::string input;                      // the run or trace directory given, as given (for comments)
  std::string output_dir;                 // absolute
  std::vector<std::string> analyses;      // "collectives", "stragglers": the reports a shard can write
  std::string format = "table";           // of the merged results: table, csv or json
  int64_t gpus_per_node = 0;              // `--gpus-per-node` of every command when > 0
  std::vector<std::string> common_paths;  // given to every shard (a trace directory)
  std::vector<AnalysisShard> shards;
  int64_t rank_count = 0;
  int64_t ranks_per_task = 0;
};

// Consecutive runs of `per_task` ranks of `ranks` (sorted by rank), in order; per_task >= 1.
std::vector<AnalysisShard> plan_shards(const std::vector<ShardInput>& ranks, int64_t per_task);

// What a plan may not hold, as a usage error: an analysis a shard cannot write, a format, no shard or
// more than kMaxShards, or an output folder the #SBATCH lines cannot carry ('"', '\', '%', control
// characters) or that is not absolute.
Status check_analysis_plan(const AnalysisPlan& plan);

// OUT/shards/<analysis>-<task>.json; `task` is a number, or "$SLURM_ARRAY_TASK_ID" in the script.
std::string shard_file(const AnalysisPlan& plan, const std::string& analysis, const std::string& task);
// OUT/<analysis>.txt|.csv|.json: the merged output.
std::string result_file(const AnalysisPlan& plan, const std::string& analysis);

// The array's script (one task per shard) and the merge job's. Scheduling fields (account,
// partition, qos, reservation, time, mem, constraint, cpus_per_task) and the job's environment (env,
// pre_exec, python_venv) come from `config`; logs go to OUT/logs/, whatever std_out says.
std::string render_shard_script(const LaunchConfig& config, const AnalysisPlan& plan);
std::string render_merge_script(const LaunchConfig& config, const AnalysisPlan& plan);

// Readies the output folder before anything is written: refused when an earlier analysis's scripts,
// record, shards or results are there, unless `force`; with `force` the earlier shard and result
// files are removed (a stale shard must never be merged) and the earlier records are marked
// superseded (their jobs are not cancelled: *notes says so). A symbolic link, or anything but a
// regular file where one of these files goes, is refused even with `force`.
Status prepare_output_dir(const AnalysisPlan& plan, bool force, std::vector<std::string>* notes);

// Creates OUT/logs/ and OUT/shards/: SLURM does not create the folder of --output, and a job whose log
// cannot be opened fails without a word; saved scripts may be submitted by hand later.
Status make_analysis_folders(const AnalysisPlan& plan);

// Submits the array, then the merge with --dependency=afterok on it, appending each to
// OUT/submitted.jsonl as soon as sbatch answers (the folders made first). A path "" sends that
// script on standard input.
Status submit_analysis(const LaunchConfig& config, const AnalysisPlan& plan, const std::string& shard_path,
                       const std::string& shard_script, const std::string& merge_path, const std::string& merge_script,
                       std::vector<SubmittedJob>* submitted, const std::function<void(const SubmittedJob&)>& progress);

// The records as `slurm status` shows them: an array's record becomes one per task (job id
// "<id>_<task>", kind kShardKind, "%a" of its output filled in); others are unchanged.
std::vector<SubmittedJob> expand_array_tasks(const std::vector<SubmittedJob>& recorded);

// An analysis job SLURM no longer knows: completed when the file it writes last exists (the writer
// replaces files atomically, so it exists only whole). The file's name goes into `run`.
void outcome_from_output(JobStatus* status);

}  // namespace scaleprof::launch

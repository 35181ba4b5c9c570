// The fields of `scaleprof slurm` (schema with defaults and docs) and the typed, validated
// configuration the script generator works from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/captured_command.h"
#include "core/result.h"

namespace scaleprof::launch {

// Jobs one launch may plan (scripts written, jobs submitted).
inline constexpr int64_t kMaxJobs = 2000;
// The rendezvous port of a job when rdzv_port is 0: kRdzvPortBase + SLURM_JOB_ID % kRdzvPortCount,
// computed by the script at run time: 20000 to 31999, below Linux's ephemeral ports (32768 up).
inline constexpr int64_t kRdzvPortBase = 20000;
inline constexpr int64_t kRdzvPortCount = 12000;

// Every field, its default and its help text (docs/launch.md lists the same).
std::vector<config::FieldSpec> launch_fields();

struct LaunchConfig {
  std::string mode;  // single | runall | scaling-test
  std::string job_name, account, partition, qos, reservation, time, mem, constraint, std_out, std_err;
  int64_t num_nodes = 1, gpus_per_node = 0, cpus_per_task = 0, repetitions = 1;
  int64_t first_repetition = 1;   // `scaleprof slurm --append`: numbered after the recorded ones
  int64_t rdzv_port = 0;          // 0: derived from the job id at run time (kRdzvPortBase + id % kRdzvPortCount)
  int64_t slurm_timeout_s = 120;  // deadline of each sbatch call
  bool exclusive = false, profiler = false, nsys = false, report = true;
  std::string dist_strategy;
  std::string cpu_bind = "cores";  // srun --cpu-bind with cpus_per_task; "none": not passed
  std::vector<std::string> strategies;
  std::vector<int64_t> scalability_nodes;
  // Shell code, as the user wrote it (docs/launch.md, "What is shell code and what is data"): the job's
  // shell expands it. training_cmd holds job_placeholder()s, filled per job.
  std::string training_cmd;
  std::string python_venv, container, container_runtime, experiment, root, gpu_interval, script_dir;
  std::vector<std::string> pre_exec;  // one shell command line each
  config::StringMap env;              // values: the right side of NAME=value, expanded by the job's shell
  std::string scaleprof_bin, report_html;
  // itwinai's submit_job / save_script keys, where set: itwinai's rule then decides what happens
  // (docs/launch.md, "Saving and submitting").
  std::optional<bool> submit_job, save_script;
  // What the configuration did that the user should know (a multi-line pre_exec taken as a list).
  std::vector<std::string> notes;
  // Keys of the configuration that have no effect (itwinai's, mostly): printed as warnings.
  std::vector<std::string> warnings;
};

// What the configuration is for: training jobs need training_cmd; the analysis jobs of
// `scaleprof slurm analyze` take only the sbatch fields (account, partition, time, ...) and ignore it.
enum class LaunchPurpose { kTraining, kAnalysis };

// Checks what the schema cannot (time and memory formats, names, paths, environment names, the
// training command) and resolves derived defaults. `cwd` makes `root` absolute; `self_exe` is the
// default for scaleprof_bin. itwinai's keys, placeholders and interpolations are resolved first
// (launch/itwinai_keys.h). Errors name the field and where its value came from.
Result<LaunchConfig> make_launch_config(const config::Config& config, const std::string& cwd,
                                        const std::string& self_exe, LaunchPurpose purpose = LaunchPurpose::kTraining);

}  // namespace scaleprof::launch

// sbatch scripts for a launch: one job per (strategy, node count, repetition) of the mode, and the
// report job. Scripts are self-contained (no site helper files): the launch line is written in full,
// and every configured value is shell-quoted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "launch/launch_config.h"

namespace scaleprof::launch {

struct JobPlan {
  std::string strategy;
  int64_t nodes = 1;
  int64_t repetition = 1;
  std::string job_name;     // <job_name>-<strategy>-n<nodes>-r<repetition>
  std::string script_name;  // <strategy>-n<nodes>-r<repetition>.sh
  std::string run_prefix;   // the run name before the job id: <strategy>-n<nodes>-r<repetition>
};

// The jobs of the configured mode, in submission order.
std::vector<JobPlan> plan_jobs(const LaunchConfig& config);

// The sbatch script of one job.
std::string render_job_script(const LaunchConfig& config, const JobPlan& job);

// The scripts of all `jobs`, or an error stating the sizes when together they would hold more than
// kMaxScriptSetBytes: every script repeats the configuration's text, so 2,000 jobs of a 4 MiB
// configuration would be 8 GB of scripts. Checked on the first script before the others are made.
inline constexpr size_t kMaxScriptSetBytes = size_t{64} << 20;
Result<std::vector<std::string>> render_job_scripts(const LaunchConfig& config, const std::vector<JobPlan>& jobs);

// The report job's script: `scaleprof report --html` over the experiment (submitted with
// --dependency=afterany on every job, so it runs when the last one has ended).
std::string render_report_script(const LaunchConfig& config);
inline constexpr std::string_view kReportScriptName = "report.sh";

// The #SBATCH lines every script of a launch starts with (after #!/bin/bash): job name, account,
// partition, qos, reservation, time, output and error; the analysis jobs of `slurm analyze` share them.
void sbatch_header(std::string& script, const LaunchConfig& config, const std::string& job_name);

// The common part of every job after the #SBATCH lines: `set -eo pipefail`, then env, pre_exec and
// python_venv as configured.
void job_environment(std::string& script, const LaunchConfig& config);

// An #SBATCH value: unchanged, or in double quotes when it holds a blank, ' or # ('"' and '\' are
// refused when the configuration is checked).
std::string sbatch_value(const std::string& value);

// `s` as one shell word: unchanged when it has only characters no shell treats specially, otherwise
// in single quotes (a ' inside becomes '\'').
std::string shell_quote(std::string_view s);

}  // namespace scaleprof::launch

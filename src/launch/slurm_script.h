// sbatch scripts for a launch: one job per (strategy, node count, repetition) of the mode, and the
// report job. Scripts are self-contained (no site helper files): the launch line is written in full,
// and every configured value is shell-quoted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

// The report job's script: `scaleprof report --html` over the experiment (submitted with
// --dependency=afterany on every job, so it runs when the last one has ended).
std::string render_report_script(const LaunchConfig& config);
inline constexpr std::string_view kReportScriptName = "report.sh";

// `s` as one shell word: unchanged when it has only characters no shell treats specially, otherwise
// in single quotes (a ' inside becomes '\'').
std::string shell_quote(std::string_view s);

}  // namespace scaleprof::launch

// Names of experiments and runs: folder names that every rank of one launch must agree on.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "collect/environment.h"
#include "collect/run_context.h"
#include "core/result.h"

namespace scaleprof::collect {

// Experiment, run and strategy names become folder names: letters, digits, '.', '_', '-' and '+', not
// starting with '.', at most 128 characters. `what` names the argument in the message.
Status check_name(const std::string& what, const std::string& name);

// The one check of every name that becomes part of a path below the root: experiment, run, strategy
// (when given) and host (node-<host>/; SCALEPROF_HOST may set it). Whatever the environment or the
// user gives, nothing is written outside <root>: "../", "/", NUL and control characters are refused
// with an error naming the argument or variable.
Status check_context_names(const RunContext& context);

// A name every rank derives alone from the launcher's shared variables, or "" when there is none:
// "<strategy>-w<world>-slurm<job>.<step>" inside an srun step, "<strategy>-w<world>-<rdzv id>" for a
// torchrun TORCHELASTIC_RUN_ID other than "none" (plus "-r<N>" after an elastic restart).
std::string derived_run_name(const RunContext& context, const Environment& env);

// A fresh name "<strategy>-w<world>-<YYYYmmdd-HHMMSS UTC>-<4 hex>" (rank 0 makes it; the Python API
// broadcasts it to the other ranks). `random16` supplies the hex digits.
std::string generated_run_name(const std::string& strategy, int64_t world_size, int64_t unix_ns, uint32_t random16);

// `scaleprof slurm --force` supersedes the earlier submission of an experiment: the job ids of its
// jobs are appended to <root>/<experiment>/superseded-jobs.txt, one per line, and the report leaves
// their runs out (the report's --include-superseded keeps them).
inline constexpr std::string_view kSupersededJobsFile = "superseded-jobs.txt";

// `scaleprof slurm` appends "<job id> <path>" to <root>/<experiment>/job-logs.txt for each job it
// submits: where SLURM writes the job's standard error (the launch's std_err pattern filled in), so
// the report can name the log of a run that failed.
inline constexpr std::string_view kJobLogsFile = "job-logs.txt";

// The SLURM job id a run of `scaleprof slurm` carries at the end of its name
// ("ddp-n2-r1-slurm4711" -> "4711"), or "" when the name ends otherwise.
std::string slurm_job_of_run(std::string_view run_name);

}  // namespace scaleprof::collect

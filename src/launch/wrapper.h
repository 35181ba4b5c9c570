// `scaleprof run -- CMD ...`: records a whole launch from outside. Writes run.json (start, command,
// end, exit status), samples the node's GPUs into node-<host>/gpu.csv, hands the run to the command
// through SCALEPROF_* variables so the Python API inside joins the same run, forwards signals and
// returns the command's exit code. Started by srun once per node or once per task, wrapper task 0
// writes run.json and the first wrapper of each node samples that node.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "collect/environment.h"
#include "collect/run_context.h"
#include "core/result.h"

namespace scaleprof::launch {

struct WrapperOptions {
  collect::ContextOverrides overrides;  // root, experiment, strategy, run from the command line
  std::chrono::nanoseconds gpu_interval = std::chrono::seconds(1);
  bool gpu = true;
  std::vector<std::string> command;
  FILE* messages = stderr;  // where "scaleprof run: ..." notes go
};

struct WrapperResult {
  int exit_code = 0;  // what `scaleprof run` returns: the command's (127/126 when it could not start)
  std::string run_dir;
};

// Errors are for what prevents recording (bad names, unwritable root); a command that fails is a
// normal result with its exit code.
Result<WrapperResult> run_wrapped(const WrapperOptions& options, const collect::Environment& env);

// World size and node count a torchrun command line asks for (--nproc_per_node N --nnodes M), 0 when
// not a torchrun command or not given as plain numbers.
std::pair<int64_t, int64_t> torchrun_world(const std::vector<std::string>& command);

}  // namespace scaleprof::launch

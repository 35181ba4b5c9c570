// `scaleprof run` end to end, for the CLI: the options checked (the GPU interval, a command given)
// and the training command run under the wrapper (launch/wrapper.h), which records it.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "launch/wrapper.h"

namespace scaleprof::pipeline {

struct RunOptions {
  std::string root, experiment, strategy, run_name;  // empty: the run context's defaults
  std::string gpu_interval = "1s";
  bool no_gpu = false;
  std::vector<std::string> command;
};

// The wrapper's result (the command's exit code); a bad option is kUsage, and an error is what
// prevented recording.
Result<launch::WrapperResult> run_training(const RunOptions& options);

}  // namespace scaleprof::pipeline

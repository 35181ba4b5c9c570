// Running a SLURM client (sbatch, squeue, scontrol, sacct) and capturing what it prints.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace scaleprof::launch {

struct Captured {
  int exit_code = 0;  // 128+N when killed by signal N
  std::string out, err;
};

// Runs argv[0] (searched in PATH) with `input` on its standard input and waits for it. An error
// only when it cannot be started at all (e.g. "sbatch: not found: is SLURM installed?").
Result<Captured> run_captured(const std::vector<std::string>& argv, const std::string& input = {});

}  // namespace scaleprof::launch

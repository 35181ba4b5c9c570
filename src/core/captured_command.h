// The one way the launcher runs a child process (sbatch, squeue, scontrol, sacct) and captures what
// it prints. A SLURM client can hang (a controller that does not answer), leave a grandchild holding
// its output open, or print without end; none of that may hang or exhaust scaleprof. So every child:
//  - runs in a process group of its own, and is stopped (SIGTERM to the group, SIGKILL after a grace
//    period) when the deadline passes or its output passes the cap;
//  - counts as finished when the process itself has exited: what it wrote is read, and a descendant
//    still holding the pipes open is stopped with the group, never waited for;
//  - has SIGPIPE and every other signal at their defaults and its own signal mask cleared, whatever
//    this process has changed.
// Errors name the command and what happened: "squeue: no answer within 120 s; stopped it".
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "core/result.h"

namespace scaleprof {

struct Captured {
  int exit_code = 0;  // 128+N when killed by signal N
  std::string out, err;
};

struct CaptureLimits {
  // From the start until the child has exited.
  std::chrono::milliseconds deadline{std::chrono::seconds(120)};
  // Standard output and standard error together.
  size_t max_output_bytes = size_t{64} << 20;
  // After SIGTERM, before SIGKILL.
  std::chrono::milliseconds grace{std::chrono::seconds(2)};
};

// The deadline users may set (`slurm_timeout`, `slurm status --timeout`), in seconds.
inline constexpr int64_t kDefaultClientTimeoutS = 120;
inline constexpr int64_t kMaxClientTimeoutS = 3600;

// Runs argv[0] (searched in PATH) with `input` on its standard input and waits for it within
// `limits`. An error when it cannot be started ("sbatch: not found: is SLURM installed and on
// PATH?"), when the deadline passes or when the output passes the cap; a non-zero exit status is a
// result (its stderr usually says why).
Result<Captured> run_captured(const std::vector<std::string>& argv, const std::string& input = {},
                              const CaptureLimits& limits = {});

}  // namespace scaleprof

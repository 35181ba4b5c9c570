// Who this process is in the training job: rank, local rank, world size, node, job, launcher; and
// where its records go (root, experiment, run, strategy).
//
// Every field is resolved on its own, in this order: explicit overrides; SCALEPROF_* variables; the
// launcher variables of torchrun / DeepSpeed, Horovod, Open MPI, MPICH-style PMI, then SLURM (most
// specific first: torchrun or mpirun inside an srun step set both, and their values are the per-process
// ones). A value that is set but not a number is an error, never silently 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collect/environment.h"
#include "core/result.h"

namespace scaleprof::collect {

// Variables `scaleprof run` hands to the command, and that users may set themselves.
inline constexpr const char* kEnvRoot = "SCALEPROF_ROOT";
inline constexpr const char* kEnvExperiment = "SCALEPROF_EXPERIMENT";
inline constexpr const char* kEnvRun = "SCALEPROF_RUN";
inline constexpr const char* kEnvStrategy = "SCALEPROF_STRATEGY";
inline constexpr const char* kEnvGpuMonitor = "SCALEPROF_GPU_MONITOR";    // rank | node | off
inline constexpr const char* kEnvGpuInterval = "SCALEPROF_GPU_INTERVAL";  // e.g. 1s, 100ms
inline constexpr const char* kEnvWrapperPid = "SCALEPROF_WRAPPER_PID";    // set: the wrapper owns run.json
inline constexpr const char* kEnvAttempt = "SCALEPROF_ATTEMPT";           // else SLURM_RESTART_COUNT (requeues)

struct ContextOverrides {
  std::optional<int64_t> rank, local_rank, world_size, node_rank, nodes;
  std::string job_id, launcher, host, root, experiment, run, strategy, gpu_monitor;
};

struct RunContext {
  int64_t rank = 0;
  int64_t local_rank = 0;
  int64_t world_size = 1;
  int64_t local_world_size = 1;  // processes on this node, when the launcher says
  int64_t node_rank = 0;
  int64_t nodes = 1;
  std::string launcher = "single";  // torchrun, deepspeed, horovod, openmpi, pmi, slurm, env, single
  std::string job_id;
  std::string host;
  std::string root;
  std::string experiment;
  std::string run;  // empty until agreed (see run_names.h)
  std::string strategy;
  std::string gpu_monitor = "rank";
  int64_t attempt = 0;                       // SLURM requeue count: records go to <run>/attempt-N/
  std::optional<int64_t> wrapper_pid;        // the `scaleprof run` this process runs under, if any
  std::vector<std::string> visible_devices;  // CUDA_/ROCR_/HIP_VISIBLE_DEVICES; empty: not restricted
  bool devices_restricted = false;           // a *_VISIBLE_DEVICES variable was set
};

// A text argument a front-end was given explicitly (the Python API's Run(root="")), where "not
// given" and "" differ: "" is an error naming `argument`, never silently the default, and so is a NUL
// byte (a path would end there). Front-ends where "" means "not given" (CLI options) do not call it.
Status check_given_text(std::string_view argument, std::string_view value);

Result<RunContext> detect_run_context(const Environment& env, const ContextOverrides& overrides = {});

// The machine's host name (short form as gethostname gives it).
std::string local_host_name();

}  // namespace scaleprof::collect

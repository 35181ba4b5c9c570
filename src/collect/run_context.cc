#include "collect/run_context.h"

#include <fmt/format.h>
#include <unistd.h>

#include "collect/run_records.h"
#include "core/number_text.h"

namespace scaleprof::collect {

namespace {

// One launcher's variable names for each field ("" where it has none).
struct LauncherVars {
  const char* launcher;
  const char* detect;  // present means this launcher started the process
  const char* rank;
  const char* local_rank;
  const char* world_size;
  const char* local_world_size;
  const char* node_rank;
  const char* nodes;
};

// Most specific first: a launcher started inside another (torchrun inside srun, mpirun inside sbatch)
// sets its own per-process values while the outer one's describe the outer task.
constexpr LauncherVars kLaunchers[] = {
    {"scaleprof", "SCALEPROF_RANK", "SCALEPROF_RANK", "SCALEPROF_LOCAL_RANK", "SCALEPROF_WORLD_SIZE",
     "SCALEPROF_LOCAL_WORLD_SIZE", "SCALEPROF_NODE_RANK", "SCALEPROF_NODES"},
    {"torchrun", "TORCHELASTIC_RUN_ID", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
     "GROUP_WORLD_SIZE"},
    // DeepSpeed's own launcher sets RANK/LOCAL_RANK/WORLD_SIZE plus CROSS_RANK/CROSS_SIZE (node rank/count).
    {"deepspeed", "CROSS_RANK", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_SIZE", "CROSS_RANK", "CROSS_SIZE"},
    {"horovod", "HOROVOD_RANK", "HOROVOD_RANK", "HOROVOD_LOCAL_RANK", "HOROVOD_SIZE", "HOROVOD_LOCAL_SIZE",
     "HOROVOD_CROSS_RANK", "HOROVOD_CROSS_SIZE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_SIZE", "", ""},
    {"pmi", "PMI_RANK", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS", "", ""},
    {"slurm", "SLURM_PROCID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NTASKS_PER_NODE", "SLURM_NODEID",
     "SLURM_NNODES"},
    // torch.distributed's env:// convention without torchrun (e.g. the old torch.distributed.launch).
    {"env", "RANK", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", ""},
};

Result<std::optional<int64_t>> read_count(const Environment& env, const char* name) {
  if (name[0] == '\0') return std::optional<int64_t>();
  auto text = env.non_empty(name);
  if (!text) return std::optional<int64_t>();
  // SLURM_NTASKS_PER_NODE may read "4(x2)"; the leading number is what this node runs.
  const std::optional<NumberPrefix<int64_t>> number = parse_int64_prefix(*text);
  const bool slurm_repeat =
      number && !number->rest.empty() && number->rest.front() == '(' && std::string_view(name).rfind("SLURM_", 0) == 0;
  if (!number || (!number->rest.empty() && !slurm_repeat) || number->value < 0) {
    return Error{fmt::format("{}='{}' is not a non-negative integer", name, *text)};
  }
  return std::optional<int64_t>(number->value);
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

std::string local_host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

Status check_given_text(std::string_view argument, std::string_view value) {
  if (value.empty())
    return Error{fmt::format("{} is empty: give a value or leave it out (None) for the default", argument)};
  if (value.find('\0') != std::string_view::npos) return Error{fmt::format("{} contains a NUL byte", argument)};
  return Ok{};
}

Result<RunContext> detect_run_context(const Environment& env, const ContextOverrides& overrides) {
  RunContext ctx;
  for (auto [what, value] : {std::pair<const char*, std::optional<int64_t>>{"rank", overrides.rank},
                             {"local rank", overrides.local_rank},
                             {"world size", overrides.world_size},
                             {"node rank", overrides.node_rank},
                             {"nodes", overrides.nodes}}) {
    if (value && *value < 0) return Error{fmt::format("{} {} is negative", what, *value)};
  }
  // Field by field: the first launcher (in kLaunchers order) that is present and sets the field wins.
  std::optional<int64_t> rank = overrides.rank, local_rank = overrides.local_rank, world = overrides.world_size,
                         local_world, node_rank = overrides.node_rank, nodes = overrides.nodes;
  std::string launcher;
  for (const LauncherVars& l : kLaunchers) {
    if (!env.get(l.detect)) continue;
    struct Field {
      std::optional<int64_t>* value;
      const char* var;
    };
    for (Field f : {Field{&rank, l.rank}, Field{&local_rank, l.local_rank}, Field{&world, l.world_size},
                    Field{&local_world, l.local_world_size}, Field{&node_rank, l.node_rank}, Field{&nodes, l.nodes}}) {
      if (f.value->has_value()) continue;
      auto v = read_count(env, f.var);
      if (!v) return v.error();
      *f.value = v.value();
    }
    if (launcher.empty() && std::string_view(l.launcher) != "scaleprof") launcher = l.launcher;
  }
  if (!overrides.launcher.empty()) launcher = overrides.launcher;
  ctx.launcher = launcher.empty() ? "single" : launcher;
  ctx.rank = rank.value_or(0);
  ctx.world_size = world.value_or(1);
  ctx.local_rank = local_rank.value_or(ctx.world_size == 1 ? 0 : ctx.rank);
  ctx.local_world_size = local_world.value_or(ctx.world_size);
  ctx.nodes = nodes.value_or(1);
  ctx.node_rank = node_rank.value_or(0);
  if (ctx.world_size < 1) return Error{fmt::format("world size {} is not positive", ctx.world_size)};
  if (ctx.rank >= ctx.world_size) {
    return Error{fmt::format("rank {} is not below the world size {}", ctx.rank, ctx.world_size)};
  }
  if (ctx.nodes < 1 || ctx.node_rank >= ctx.nodes) {
    return Error{fmt::format("node rank {} of {} nodes is not possible", ctx.node_rank, ctx.nodes)};
  }

  auto pick = [&](const std::string& override_value, std::initializer_list<const char*> vars,
                  const std::string& fallback) {
    if (!override_value.empty()) return override_value;
    for (const char* v : vars) {
      if (auto value = env.non_empty(v)) return *value;
    }
    return fallback;
  };
  ctx.job_id = pick(overrides.job_id, {"SCALEPROF_JOB_ID", "SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID"}, "");
  ctx.host = pick(overrides.host, {"SCALEPROF_HOST"}, local_host_name());
  ctx.root = pick(overrides.root, {kEnvRoot}, kDefaultRoot);
  // The folder would end at the NUL byte: records would land somewhere else than asked.
  if (Status s = check_given_text("root", ctx.root); !s) return s.error();
  ctx.experiment = pick(overrides.experiment, {kEnvExperiment}, "default");
  ctx.run = pick(overrides.run, {kEnvRun}, "");
  ctx.strategy = pick(overrides.strategy, {kEnvStrategy}, "");
  ctx.gpu_monitor = pick(overrides.gpu_monitor, {kEnvGpuMonitor}, "rank");
  if (ctx.gpu_monitor != "rank" && ctx.gpu_monitor != "node" && ctx.gpu_monitor != "off") {
    return Error{fmt::format("GPU monitor mode '{}' is not rank, node or off", ctx.gpu_monitor)};
  }
  // A requeued SLURM job keeps its id (so its run name); SLURM_RESTART_COUNT tells the attempts apart.
  for (const char* var : {kEnvAttempt, "SLURM_RESTART_COUNT"}) {
    auto attempt = read_count(env, var);
    if (!attempt) return attempt.error();
    if (attempt.value()) {
      ctx.attempt = *attempt.value();
      break;
    }
  }
  auto wrapper = read_count(env, kEnvWrapperPid);
  if (!wrapper) return wrapper.error();
  ctx.wrapper_pid = wrapper.value();
  for (const char* var : {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"}) {
    if (auto v = env.get(var)) {
      ctx.visible_devices = split_list(*v);
      ctx.devices_restricted = true;
      break;
    }
  }
  return ctx;
}

}  // namespace scaleprof::collect

#include "launch/wrapper.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <random>
#include <set>

#include "collect/child_process.h"
#include "collect/gpu_monitor.h"
#include "collect/run_names.h"
#include "collect/run_records.h"
#include "collect/timers.h"
#include "core/file_io.h"
#include "core/number_text.h"
#include "core/terminal_text.h"
#include "importers/run_reader.h"

namespace scaleprof::launch {

namespace fs = std::filesystem;

namespace {

std::optional<int64_t> plain_number(const std::string& s) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return parse_int64(s);
}

// After the command ends: what the ranks reported fills what the wrapper could not know.
void complete_from_ranks(const std::string& run_dir, collect::RunInfo* info) {
  importers::ReadOptions options;
  options.read_steps = false;
  options.read_gpu = false;
  auto run = importers::read_run(run_dir, options);
  if (!run) return;
  std::set<std::string> hosts(info->hosts.begin(), info->hosts.end());
  int64_t world = 0;
  for (const importers::RankData& r : run.value().ranks) {
    if (!r.info) continue;
    if (!r.info->host.empty()) hosts.insert(r.info->host);
    if (r.info->world_size) world = std::max(world, *r.info->world_size);
    if (info->torch_version.empty()) info->torch_version = r.info->torch_version;
    if (info->launcher.empty() || info->launcher == "single") info->launcher = r.info->launcher;
    if (info->job_id.empty()) info->job_id = r.info->job_id;
  }
  if (world > 0) info->world_size = world;
  if (!run.value().ranks.empty()) info->nodes = static_cast<int64_t>(hosts.size());
  info->hosts.assign(hosts.begin(), hosts.end());
}

}  // namespace

std::pair<int64_t, int64_t> torchrun_world(const std::vector<std::string>& command) {
  bool is_torchrun = false;
  int64_t per_node = 0, nodes = 1;
  for (size_t i = 0; i < command.size(); ++i) {
    const std::string& a = command[i];
    const std::string base = fs::path(a).filename().string();
    if (base == "torchrun" || a == "torch.distributed.run" || a == "torch.distributed.launch") is_torchrun = true;
    if (!is_torchrun) continue;
    std::string key = a, value;
    if (size_t eq = a.find('='); eq != std::string::npos) {
      key = a.substr(0, eq);
      value = a.substr(eq + 1);
    } else if (i + 1 < command.size()) {
      value = command[i + 1];
    }
    if (key == "--nproc_per_node" || key == "--nproc-per-node") per_node = plain_number(value).value_or(0);
    if (key == "--nnodes") nodes = plain_number(value).value_or(0);
    // The training script and its own arguments follow the first non-option after torchrun's options.
    if (a.size() > 3 && a.compare(a.size() - 3, 3, ".py") == 0) break;
  }
  if (!is_torchrun || per_node == 0) return {0, 0};
  return {per_node * nodes, nodes};
}

Result<WrapperResult> run_wrapped(const WrapperOptions& options, const collect::Environment& env) {
  if (options.command.empty())
    return Error{"no command given: scaleprof run [options] -- CMD ARGS...", ErrorKind::kUsage};
  // Under a file-size limit (`ulimit -f`) a write past it raises SIGXFSZ, whose default action would
  // end the wrapper and with it the command (PR_SET_PDEATHSIG). Ignored here, for every write of this
  // process (gpu.csv, run.json, its messages), so such a write fails with EFBIG and is counted; the
  // command gets the disposition the process had before, as it would without `scaleprof run`.
  const collect::IgnoredSignal ignored_sigxfsz(SIGXFSZ);
  auto detected = collect::detect_run_context(env, options.overrides);
  if (!detected) return detected.error();
  collect::RunContext ctx = detected.value();
  auto [world, nodes] = torchrun_world(options.command);
  if (world == 0) world = ctx.world_size, nodes = ctx.nodes;

  if (ctx.run.empty()) {
    // One wrapper per node inside an srun step: every node derives the same name from the step.
    collect::RunContext named = ctx;
    named.world_size = world;
    ctx.run = collect::derived_run_name(named, env);
  }
  if (ctx.run.empty()) {
    std::random_device rd;
    ctx.run = collect::generated_run_name(ctx.strategy, world, collect::unix_now_ns(), rd() & 0xffffu);
  }
  if (Status s = collect::check_context_names(ctx); !s) return s.error();
  std::error_code ec;
  const fs::path root = fs::absolute(ctx.root, ec);  // the command may change directory
  const fs::path run_dir = collect::run_dir_path(root.string(), ctx.experiment, ctx.run, ctx.attempt);
  const fs::path node_dir = run_dir / collect::node_dir_name(ctx.host);
  // Under srun there may be one wrapper per node or one per task: task 0 writes run.json, the first
  // task of each node samples the node's GPUs; the others only run their command.
  const bool owns_run_json = ctx.rank == 0;
  const bool samples_node = ctx.local_rank == 0;
  if (Status s = make_directories(run_dir.string()); !s) return s.error();
  const std::string run_json = (run_dir / collect::kRunJson).string();

  collect::RunInfo info;
  info.experiment = ctx.experiment;
  info.run = ctx.run;
  info.strategy = ctx.strategy;
  if (world > 0) info.world_size = world;
  if (nodes > 0) info.nodes = nodes;
  info.launcher = ctx.launcher;
  info.job_id = ctx.job_id;
  info.command = options.command;
  info.hosts = {ctx.host};
  info.start_unix_ns = collect::unix_now_ns();
  info.scaleprof_version = SCALEPROF_VERSION;
  info.writer = "wrapper";
  info.writer_host = ctx.host;
  info.writer_pid = static_cast<int64_t>(::getpid());
  info.attempt = ctx.attempt;
  if (owns_run_json) {
    // The claim: an exclusive create, so a reused name is refused without touching the earlier run.
    auto claimed = create_new_file(run_json, collect::to_json(info));
    if (!claimed) return claimed.error();
    if (!claimed.value()) {
      return Error{fmt::format(
          "{} exists already: run '{}' was recorded before; give this launch its own run name (nothing was changed)",
          run_json, ctx.run)};
    }
  }
  // After the claim, so a refused launch leaves no folder in the earlier run either.
  if (samples_node) {
    if (Status s = make_directories(node_dir.string()); !s) return s.error();
  }

  collect::Environment child_env = env;
  child_env.set(collect::kEnvRoot, root.string());
  child_env.set(collect::kEnvExperiment, ctx.experiment);
  child_env.set(collect::kEnvRun, ctx.run);
  if (!ctx.strategy.empty()) child_env.set(collect::kEnvStrategy, ctx.strategy);
  child_env.set(collect::kEnvGpuMonitor, options.gpu ? "node" : "off");
  child_env.set(collect::kEnvWrapperPid, std::to_string(::getpid()));
  child_env.set(collect::kEnvAttempt, std::to_string(ctx.attempt));

  std::unique_ptr<collect::GpuMonitor> monitor;
  std::optional<int64_t> gpu_count;
  std::string gpu_note;
  auto start_monitor = [&](pid_t) {
    if (!options.gpu || !samples_node) return;
    auto library = collect::load_gpu_library(env);
    if (!library) {
      gpu_note = library.error().message + "; recording without GPU samples";
      return;
    }
    gpu_count = library.value()->device_count();
    collect::GpuMonitorOptions gpu_options;
    gpu_options.interval = options.gpu_interval;
    gpu_options.csv_path = (node_dir / collect::kGpuCsv).string();
    gpu_options.messages = options.messages;
    auto started = collect::GpuMonitor::start(std::move(library.value()), gpu_options);
    if (!started) {
      gpu_note = started.error().message;
      return;
    }
    monitor = std::move(started.value());
  };
  int exec_errno = 0;
  const int64_t start_mono = collect::monotonic_now_ns();
  auto child =
      collect::run_child(options.command, child_env, start_monitor, &exec_errno, {ignored_sigxfsz.for_child()});
  const int64_t elapsed = collect::monotonic_now_ns() - start_mono;
  if (!gpu_note.empty()) print_message(options.messages, "scaleprof run", gpu_note);
  Status gpu_status = monitor ? monitor->stop() : Status(Ok{});
  if (!gpu_status) print_message(options.messages, "scaleprof run", gpu_status.error().message);

  WrapperResult result;
  result.run_dir = run_dir.string();
  if (child) {
    result.exit_code = child.value().exit_code;
  } else {
    print_message(options.messages, "scaleprof run", child.error().message);
    result.exit_code = exec_errno == ENOENT ? 127 : 126;
  }
  if (owns_run_json) {
    info.end_unix_ns = *info.start_unix_ns + elapsed;
    info.exit_status = result.exit_code;
    info.status = result.exit_code == 0 ? collect::kStatusCompleted : collect::kStatusFailed;
    if (gpu_count) info.gpus_per_node = *gpu_count;
    if (monitor) {
      info.gpu_interval_ns = static_cast<int64_t>(options.gpu_interval.count());
      info.write_errors = monitor->write_errors();
      info.last_write_error = monitor->last_write_error();
    }
    complete_from_ranks(run_dir.string(), &info);
    if (Status s = replace_file(run_json, collect::to_json(info)); !s) {
      print_message(options.messages, "scaleprof run", s.error().message);
    }
  }
  return result;
}

}  // namespace scaleprof::launch

#include "cli/run_command.h"

#include <fmt/format.h>

#include <memory>
#include <string_view>

#include "cli/exit_codes.h"
#include "cli/output.h"
#include "pipeline/run_pipeline.h"

namespace scaleprof::cli {

namespace {

using pipeline::RunOptions;

int run_run(const RunOptions& opt) {
  auto result = pipeline::run_training(opt);
  if (!result) return fail_with(result.error());
  return result.value().exit_code;
}

}  // namespace

int split_run_command(int argc, char** argv, std::vector<std::string>* command_tail) {
  if (argc < 2 || std::string_view(argv[1]) != "run") return argc;
  for (int i = 2; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      command_tail->assign(argv + i + 1, argv + argc);
      return i;
    }
  }
  return argc;
}

void setup_run_command(CLI::App& app, int* exit_code, const std::vector<std::string>* command_tail) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* cmd =
      app.add_subcommand("run", "Run a training command and record it: run.json, the node's GPU samples, exit status");
  cmd->add_option("--root", opt->root, "Where runs are stored (default: $SCALEPROF_ROOT or ./scalability-metrics)");
  cmd->add_option("--experiment", opt->experiment, "Experiment name (default: $SCALEPROF_EXPERIMENT or default)");
  cmd->add_option("--strategy", opt->strategy, "Strategy label, e.g. ddp, fsdp, deepspeed");
  cmd->add_option("--run-name", opt->run_name, "Run name (default: derived from the job, else generated)");
  cmd->add_option("--gpu-interval", opt->gpu_interval, "GPU sampling interval, e.g. 1s, 100ms (minimum 10ms)")
      ->capture_default_str();
  cmd->add_flag("--no-gpu", opt->no_gpu, "Do not sample GPUs");
  // Everything from `--` or the first word that is not one of our options is the command, kept
  // verbatim and in order: `scaleprof run torchrun --nproc_per_node 2 train.py` works without `--`.
  // A first word starting with '-' is a mistyped option, refused in the callback.
  cmd->prefix_command();
  cmd->footer("Usage: scaleprof run [options] -- CMD ARGS...");
  cmd->callback([opt, exit_code, cmd, command_tail] {
    // Words before the cut that are not our options start the command; a `--` inside the command
    // (scaleprof run sh -c 'x' -- a) was the cut, so it is put back between the two parts.
    opt->command = cmd->remaining();
    if (!opt->command.empty() && opt->command.front().starts_with("-")) {
      // CLI11 stops at the first word it does not know: an option typed wrong would otherwise run as
      // the command (`scaleprof run --experimnt x -- cmd` ran "--experimnt").
      print_message(stderr, "error",
                    fmt::format("run: unknown option '{}' (options come before the command: scaleprof run "
                                "[options] -- CMD ARGS...)",
                                opt->command.front()));
      *exit_code = kExitUsage;
      return;
    }
    if (!opt->command.empty() && !command_tail->empty()) opt->command.emplace_back("--");
    opt->command.insert(opt->command.end(), command_tail->begin(), command_tail->end());
    *exit_code = run_run(*opt);
  });
}

}  // namespace scaleprof::cli

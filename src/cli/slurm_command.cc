#include "cli/slurm_command.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <new>
#include <string_view>

#include "cli/exit_codes.h"
#include "cli/output.h"
#include "pipeline/slurm_pipeline.h"

namespace scaleprof::cli {

namespace {

using pipeline::SlurmAnalyzeOptions;
using pipeline::SlurmOptions;

struct StatusOptions {
  pipeline::SlurmStatusOptions status;
  std::string output;
};

std::string self_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("scaleprof") : path.string();
}

// Runs a command with the CLI's streams; when memory runs out, one line says what it was doing
// (which file it was reading) instead of a bare "std::bad_alloc".
int with_memory_guard(const std::function<int(const pipeline::SlurmIo&)>& command) {
  std::string doing = "starting";
  pipeline::SlurmIo io;
  // Flushed at once: a "submitted job" line is out before the next sbatch starts.
  io.print = [](std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  };
  io.message = [](std::string_view label, std::string_view text) { print_message(stderr, label, text); };
  io.doing = &doing;
  try {
    return command(io);
  } catch (const std::bad_alloc&) {
    print_message(stderr, "error", fmt::format("out of memory while {}", doing));
    return kExitError;
  }
}

int exit_code_of(const pipeline::SlurmStop& stop) {
  return stop ? exit_code_for(*stop) : kExitOk;
}

int run_status(const StatusOptions& opt, const pipeline::SlurmIo& io) {
  auto table = pipeline::slurm_status(opt.status, io);
  if (!table) return fail_with(table.error());
  report::RenderOptions render;
  render.format = table.value().format;
  return write_table(table.value().table, render, opt.output);
}

}  // namespace

void setup_slurm_command(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<SlurmOptions>();
  CLI::App* cmd = app.add_subcommand(
      "slurm", "Scaling tests on SLURM: sbatch scripts from YAML configs for every strategy x node count, submitted");
  cmd->add_option("-c,--config", opt->config_files, "YAML file; repeat to merge several, left to right");
  cmd->add_flag("--no-submit-job", opt->script.no_submit, "Save the scripts, submit nothing");
  cmd->add_flag("--no-save-script", opt->script.no_save,
                "Submit without keeping the scripts (with --no-submit-job: print them)");
  cmd->add_flag("-j,--submit-job", opt->script.submit,
                "itwinai's flag: submit; with -j or -s only what is asked for happens (itwinai's rule)");
  cmd->add_flag("-s,--save-script", opt->script.save, "itwinai's flag: save the scripts (see -j)");
  cmd->add_flag("--preview", opt->script.preview, "Print the scripts, save and submit nothing");
  cmd->add_flag("--force", opt->force,
                "Replace the earlier submission of this experiment: its scripts overwritten or removed, its jobs "
                "recorded as superseded (the report leaves their runs out)");
  cmd->add_flag("--append", opt->append,
                "Add repetitions to the earlier submission of this experiment (numbered after the recorded ones)");
  cmd->add_flag("--print-config", opt->print_config,
                "Print the effective configuration and where each value came from");
  cmd->allow_extras();
  cmd->footer(
      "Any field may be set as --FIELD VALUE after the files (e.g. --mode scaling-test --num_nodes 2 "
      "--scalability_nodes 1,2,4 --env NAME=VALUE). Fields and defaults: --print-config, docs/launch.md.\n"
      "Defaults differ from itwinai's: without flags scaleprof saves AND submits, where itwinai generate-slurm only "
      "prints. With -j or -s (or itwinai's submit_job / save_script keys) itwinai's rule applies: only what is "
      "asked for happens, and neither means a preview. itwinai's configuration keys are mapped or refused with what "
      "to write instead (docs/launch.md, \"From itwinai\").");
  cmd->require_subcommand(0, 1);

  auto status_opt = std::make_shared<StatusOptions>();
  CLI::App* status = cmd->add_subcommand("status", "State of the submitted jobs: pending, running, completed, failed");
  status->footer(
      "Reads DIR/submitted.jsonl and asks squeue, scontrol show job, sacct (where accounting exists) and the run "
      "directories the jobs wrote.");
  status->add_option("--script-dir", status_opt->status.script_dir, "Folder with submitted.jsonl")
      ->capture_default_str();
  status->add_option("--format", status_opt->status.format, "Output format: table, csv or json")->capture_default_str();
  status->add_option("-o,--output", status_opt->output, "Write to FILE instead of standard output");
  status
      ->add_option("--timeout", status_opt->status.timeout_s,
                   "Seconds each squeue, scontrol or sacct call may take before it is stopped")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, kMaxClientTimeoutS));
  status->callback([status_opt, exit_code] {
    *exit_code = with_memory_guard([&](const pipeline::SlurmIo& io) { return run_status(*status_opt, io); });
  });

  auto analyze_opt = std::make_shared<SlurmAnalyzeOptions>();
  CLI::App* analyze = cmd->add_subcommand(
      "analyze", "Analyse a big job's traces as SLURM jobs: an array of shards, then one merge job");
  analyze->add_option("input", analyze_opt->input, "A scaleprof run directory or a directory of trace files")
      ->required();
  analyze
      ->add_option("--ranks-per-task", analyze_opt->ranks_per_task,
                   "Ranks each array task analyses (the array has ranks / N tasks, rounded up)")
      ->required()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  analyze
      ->add_option("--analysis", analyze_opt->analysis,
                   "collectives, stragglers or both (comma-separated): the reports a shard can write")
      ->capture_default_str();
  analyze->add_option("--output", analyze_opt->output,
                      "Folder of the scripts, submitted.jsonl, logs/, shards/ and the results (default: "
                      "INPUT/slurm-analysis)");
  analyze->add_option("--format", analyze_opt->format, "Format of the merged results: table, csv or json")
      ->capture_default_str();
  analyze
      ->add_option("--gpus-per-node", analyze_opt->gpus_per_node,
                   "Ranks per node when the traces have no host name (as trace collectives takes it)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  analyze->add_option("-c,--config", analyze_opt->flags.config_files,
                      "YAML file of scaleprof slurm (account, partition, time, cpus_per_task, mem, env, ...); repeat "
                      "to merge several");
  analyze->add_flag("--no-submit-job", analyze_opt->flags.script.no_submit, "Save the scripts, submit nothing");
  analyze->add_flag("--no-save-script", analyze_opt->flags.script.no_save, "Submit without keeping the scripts");
  analyze->add_flag("-j,--submit-job", analyze_opt->flags.script.submit, "itwinai's flag, as in scaleprof slurm");
  analyze->add_flag("-s,--save-script", analyze_opt->flags.script.save, "itwinai's flag, as in scaleprof slurm");
  analyze->add_flag("--preview", analyze_opt->flags.script.preview, "Print the two scripts, save and submit nothing");
  analyze->add_flag("--force", analyze_opt->flags.force,
                    "Replace an earlier analysis in the output folder: its shards and results removed, its jobs "
                    "recorded as superseded");
  analyze->allow_extras();
  analyze->footer(
      "Every array task runs `scaleprof trace ANALYSIS --ranks R --partial FILE` on its ranks; the merge job, "
      "submitted with --dependency=afterok on the array, runs `scaleprof trace merge` into "
      "OUTPUT/<analysis>.txt|csv|json: the output of one `scaleprof trace ANALYSIS` over all ranks. Follow with "
      "`scaleprof slurm status --script-dir OUTPUT` (one row per task, and the merge).\n"
      "Scheduling fields come from -c files and --FIELD VALUE after the input (--partition debug --time 00:10:00 "
      "--cpus_per_task 4 ...); cpus_per_task is each task's --threads. Without flags the scripts are saved and "
      "submitted; -j/-s follow itwinai's rule as in scaleprof slurm. Exit codes: 0 done, 1 a write or sbatch "
      "failed or an earlier analysis is in the folder (see --force), 2 a bad command line or configuration. "
      "docs/scale.md.");
  analyze->callback([analyze_opt, analyze, exit_code] {
    analyze_opt->flags.overrides = analyze->remaining();
    analyze_opt->flags.executable = self_executable();
    *exit_code = with_memory_guard(
        [&](const pipeline::SlurmIo& io) { return exit_code_of(pipeline::run_slurm_analyze(*analyze_opt, io)); });
  });

  cmd->callback([opt, exit_code, cmd, status, analyze] {
    if (status->parsed() || analyze->parsed()) return;
    opt->overrides = cmd->remaining();
    opt->executable = self_executable();
    *exit_code =
        with_memory_guard([&](const pipeline::SlurmIo& io) { return exit_code_of(pipeline::run_slurm(*opt, io)); });
  });
}

}  // namespace scaleprof::cli

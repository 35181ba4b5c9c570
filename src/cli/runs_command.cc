#include "cli/runs_command.h"

#include <memory>
#include <string_view>

#include "cli/exit_codes.h"
#include "cli/output.h"
#include "pipeline/runs_pipeline.h"

namespace scaleprof::cli {

namespace {

struct RunsCommandOptions {
  pipeline::RunsOptions runs;
  std::string output;
};

int run_runs(const RunsCommandOptions& opt) {
  auto listed = pipeline::list_runs(
      opt.runs, [](std::string_view label, std::string_view text) { print_message(stderr, label, text); });
  if (!listed) return fail_with(listed.error());
  report::RenderOptions render;
  render.format = listed.value().format;
  return write_table(listed.value().table, render, opt.output);
}

}  // namespace

void setup_runs_command(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<RunsCommandOptions>();
  CLI::App* cmd = app.add_subcommand("runs", "List the recorded runs: experiment, strategy, workers, epochs, status");
  cmd->add_option("--root", opt->runs.root,
                  "Where runs are stored (default: $SCALEPROF_ROOT or ./scalability-metrics)");
  cmd->add_option("--experiment", opt->runs.experiment, "Only this experiment");
  cmd->add_option("--format", opt->runs.format, "Output format: table, csv or json")->capture_default_str();
  cmd->add_option("-o,--output", opt->output, "Write to FILE instead of standard output");
  cmd->add_flag("-q,--quiet", opt->runs.quiet, "Print no warnings (torn lines, unreadable files)");
  cmd->callback([opt, exit_code] { *exit_code = run_runs(*opt); });
}

}  // namespace scaleprof::cli

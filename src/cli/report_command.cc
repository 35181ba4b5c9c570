#include "cli/report_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <memory>
#include <string_view>

#include "cli/exit_codes.h"
#include "cli/output.h"
#include "pipeline/report_outputs.h"

namespace scaleprof::cli {

namespace {

using pipeline::ReportOptions;

// The options as parsed: the run names are one comma-separated text on the command line.
struct ParsedReport {
  ReportOptions opt;
  std::string run_names;
};

// The front-end's part: the terminal's facts, the messages on standard error, the outcome as an exit
// code (docs/cli.md).
int run_report(ReportOptions opt, const std::string& run_names) {
  opt.run_names = pipeline::split_names(run_names);
  opt.terminal_color = color_allowed(STDOUT_FILENO);
  opt.max_width = terminal_columns(opt.output.empty() ? STDOUT_FILENO : -1);
  auto outcome = pipeline::write_report(
      opt, [](std::string_view label, std::string_view text) { print_message(stderr, label, text); });
  if (!outcome) return fail_with(outcome.error());
  if (outcome.value().input_errors > 0) {
    print_message(stderr, "warning",
                  fmt::format("report is partial: {} input problem(s) (exit code {})", outcome.value().input_errors,
                              kExitPartial));
    return kExitPartial;
  }
  if (outcome.value().plots_failed) {
    print_message(stderr, "warning",
                  fmt::format("the tables are complete but plots could not be drawn (exit code {})", kExitPlotsFailed));
    return kExitPlotsFailed;
  }
  return kExitOk;
}

// Options both spellings of the command share, under the same names.
void add_plot_options(CLI::App* cmd, ReportOptions& opt) {
  cmd->add_option("--plot-dir", opt.plot_dir, "Folder for the plots")->capture_default_str();
  cmd->add_option("--plot-file-suffix", opt.plot_suffix, "Plot format: .png, .svg or .pdf")->capture_default_str();
}

void add_output_options(CLI::App* cmd, ReportOptions& opt) {
  cmd->add_option("--html", opt.html,
                  "Also write one self-contained HTML report to FILE, and beside it (FILE without .html, then "
                  "-traces/) the `trace summary --html` page of every run with profiler traces, linked from it");
  cmd->add_flag("--no-trace-pages", opt.no_trace_pages, "With --html: write no trace pages (and no links to them)");
  cmd->add_option("--skip-epochs", opt.skip_epochs, "Warm-up epochs dropped from the start of every run")
      ->capture_default_str();
  cmd->add_option("--what-if", opt.what_ifs,
                  "Re-time every rank's profiled steps under a change and print the predicted epoch and step time "
                  "at each scale (repeatable): 'rank N at median', 'stragglers at median', 'communication free', "
                  "'communication 2x faster', 'all-to-all balanced' (each all-to-all's bytes spread evenly over its "
                  "pairs of ranks), computation, data loading, optimizer, host overhead, idle followed by "
                  "'2x faster', 'free' or 'at base' (shrunk with the workers since the smallest scale), or the name "
                  "of an operator, annotation or kernel (any containing it) followed by '2x faster' or 'free'")
      ->allow_extra_args(false);
  cmd->add_option("--gpus-per-node", opt.gpus_per_node,
                  "itwinai epoch-time files count nodes: workers = nodes x this (default: what the run's GPU files "
                  "say, else 4)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--format", opt.format, "Output format: table, csv or json")->capture_default_str();
  cmd->add_flag("--wide", opt.wide,
                "Text tables keep every column on one line (default: they fit the terminal, $COLUMNS or 120 when "
                "not a terminal: headers wrap, names are shortened, the least needed columns are left out with a "
                "note, the rest folded; CSV and JSON always have every column)");
}

}  // namespace

void setup_report_command(CLI::App& app, int* exit_code) {
  {
    auto parsed = std::make_shared<ParsedReport>();
    ReportOptions* opt = &parsed->opt;
    CLI::App* cmd = app.add_subcommand(
        "report", "Scalability report: epoch time, speedup, efficiency, Amdahl, GPU energy, where scaling is lost");
    cmd->add_option("--root", opt->root,
                    "Data folder: scaleprof run directories and/or itwinai CSVs (default: $SCALEPROF_ROOT or "
                    "./scalability-metrics)");
    cmd->add_option("--experiment", opt->experiment, "Only this experiment (default: all)");
    cmd->add_option("--run-names", parsed->run_names, "Only these runs, comma separated (default: all)");
    cmd->add_option("--tracking-uri", opt->tracking_uri,
                    "Read MLflow runs instead: http(s)://server, sqlite:///file.db, or a file store folder "
                    "(itwinai: mllogs/mlflow; default: $MLFLOW_TRACKING_URI unless --root is given)");
    cmd->add_option("--experiment-name", opt->mlflow_experiment,
                    "MLflow experiment to read with --tracking-uri (default: unnamed-experiment)");
    add_plot_options(cmd, *opt);
    cmd->add_flag("--no-plots", opt->no_plots, "Draw no plot files");
    add_output_options(cmd, *opt);
    cmd->add_option("-o,--output", opt->output, "Write to FILE instead of standard output");
    cmd->add_flag("--no-warnings", opt->no_warnings, "Print no warnings (errors are still printed)");
    cmd->add_flag("--include-superseded", opt->include_superseded,
                  "Keep the runs of SLURM jobs that a later 'scaleprof slurm --force' superseded");
    cmd->add_option("--threads", opt->threads, "Trace files read in parallel (default: one per core)");
    cmd->callback([parsed, exit_code] { *exit_code = run_report(parsed->opt, parsed->run_names); });
  }
  {
    // itwinai's option names, so its users can switch without relearning.
    auto parsed = std::make_shared<ParsedReport>();
    ReportOptions* opt = &parsed->opt;
    CLI::App* cmd = app.add_subcommand("generate-scalability-report",
                                       "The scalability report under itwinai's command and option names");
    cmd->add_option("--root,--log-dir", opt->root,
                    "Data folder (itwinai's --log-dir; default: $SCALEPROF_ROOT or ./scalability-metrics)");
    cmd->add_option("--tracking-uri", opt->tracking_uri,
                    "MLflow store to read: http(s)://server, sqlite:///file.db or a file store folder (default: "
                    "$MLFLOW_TRACKING_URI unless --log-dir is given, else mllogs/mlflow when it exists and "
                    "./scalability-metrics does not)");
    cmd->add_option("--experiment-name", opt->experiment,
                    "MLflow experiment (default: unnamed-experiment); with --log-dir only this experiment");
    cmd->add_option("--run-names,--run-ids", parsed->run_names, "Only these runs, comma separated");
    add_plot_options(cmd, *opt);
    cmd->add_flag("--no-warnings,!--no-no-warnings", opt->no_warnings, "Print no warnings and no disclaimer");
    cmd->add_flag("--include-communication,!--no-include-communication", opt->include_communication,
                  "Also itwinai's deprecated computation-vs-communication report and plot (NCCL names)");
    cmd->add_flag("--do-backup,!--no-do-backup", opt->do_backup,
                  "Also save the report's tables as CSV under --backup-root-dir");
    cmd->add_option("--backup-root-dir", opt->backup_root_dir, "Folder for --do-backup")->capture_default_str();
    opt->itwinai = true;
    opt->skip_epochs = 0;  // itwinai keeps every epoch
    add_output_options(cmd, *opt);
    cmd->callback([parsed, exit_code] { *exit_code = run_report(parsed->opt, parsed->run_names); });
  }
}

}  // namespace scaleprof::cli

#include "cli/mlflow_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <memory>
#include <string_view>

#include "cli/exit_codes.h"
#include "cli/output.h"
#include "pipeline/mlflow_sync_pipeline.h"
#include "pipeline/report_outputs.h"

namespace scaleprof::cli {

namespace {

struct SyncCommandOptions {
  pipeline::MlflowSyncOptions pipeline;
  std::string run_names;
  std::string output;
  bool no_artifacts = false;
};

int run_sync(SyncCommandOptions opt) {
  opt.pipeline.sync.run_names = pipeline::split_names(opt.run_names);
  opt.pipeline.sync.artifacts = !opt.no_artifacts;
  auto synced = pipeline::sync_to_mlflow(
      opt.pipeline, [](std::string_view label, std::string_view text) { print_message(stderr, label, text); });
  if (!synced) return fail_with(synced.error());
  const pipeline::MlflowSyncOutcome& out = synced.value();
  if (!out.busy.empty()) {
    print_message(stderr, "error",
                  fmt::format("another sync of {} to {} is running ({}; lock {}): nothing done. Run again when it "
                              "has ended, or add --wait (exit code {})",
                              out.root, out.shown_uri, out.busy, out.lock_path, kExitBusy));
    return kExitBusy;
  }
  report::RenderOptions render;
  render.format = out.format;
  render.max_width = terminal_columns(STDOUT_FILENO);
  return write_table(out.table, render, opt.output);
}

}  // namespace

void setup_mlflow_command(CLI::App& app, int* exit_code) {
  CLI::App* mlflow = app.add_subcommand("mlflow", "Work with an MLflow tracking server");
  mlflow->require_subcommand(1);
  auto opt = std::make_shared<SyncCommandOptions>();
  CLI::App* sync = mlflow->add_subcommand(
      "sync",
      "Push recorded runs to an MLflow server: one run per scaleprof run, one child run per rank "
      "(worker_<rank>, as itwinai names them), params, metrics, tags and artifacts. Idempotent and "
      "resumable: run it again after a failure or a kill; nothing is sent twice. See docs/mlflow.md");
  sync->add_option("--tracking-uri", opt->pipeline.sync.tracking_uri,
                   "MLflow server, http://HOST:PORT or https://... (default: $MLFLOW_TRACKING_URI)");
  sync->add_option("--root", opt->pipeline.sync.root,
                   "Where runs are stored (default: $SCALEPROF_ROOT or ./scalability-metrics)");
  sync->add_option("--experiment", opt->pipeline.sync.experiment, "Only runs of this scaleprof experiment");
  sync->add_option("--run-names", opt->run_names, "Only these runs (comma-separated)");
  sync->add_option("--experiment-name", opt->pipeline.sync.experiment_name,
                   "MLflow experiment to put the runs in (default: each run's scaleprof experiment)");
  sync->add_option("--progress-file", opt->pipeline.sync.progress_path,
                   "Where the sync records its progress (default: ROOT/.scaleprof-sync/HOST_PORT.json)");
  sync->add_option("--batch-size", opt->pipeline.sync.batch_metrics, "Metric points per runs/log-batch request")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sync->add_flag("--no-artifacts", opt->no_artifacts, "Do not upload the run's files and profiler traces");
  sync->add_flag("--wait", opt->pipeline.sync.wait_for_lock,
                 "When another sync of this root and server is running, wait for it to end (default: stop at once "
                 "with exit code 5)");
  sync->add_flag("--verify", opt->pipeline.sync.verify,
                 "Also check runs the server holds complete: read their metric histories and artifact lists and "
                 "send what is missing");
  sync->add_option("--format", opt->pipeline.format, "Summary format: table, csv or json")->capture_default_str();
  sync->add_option("-o,--output", opt->output, "Write the summary to FILE instead of standard output");
  sync->add_flag("-q,--quiet", opt->pipeline.quiet, "No progress lines or warnings on standard error");
  sync->callback([opt, exit_code] { *exit_code = run_sync(*opt); });
}

}  // namespace scaleprof::cli

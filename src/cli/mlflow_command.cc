#include "cli/mlflow_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "cli/exit_codes.h"
#include "cli/output.h"
#include "collect/run_context.h"
#include "collect/run_records.h"
#include "core/number_text.h"
#include "core/credential_redaction.h"
#include "mlflow_sync/mlflow_sync.h"
#include "pipeline/tracking_uri.h"
#include "report/table.h"

namespace scaleprof::cli {

namespace {

struct SyncCommandOptions {
  mlflow_sync::SyncOptions sync;
  std::string run_names;
  std::string format = "table";
  std::string output;
  bool no_artifacts = false;
  bool quiet = false;
};

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const size_t end = comma == std::string::npos ? text.size() : comma;
    if (end > start) out.push_back(text.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// The server to sync to: --tracking-uri, else MLflow's own MLFLOW_TRACKING_URI (the flag wins); only
// an http(s) server takes writes, anything else is a bad command line (exit 2).
bool resolve_tracking_uri(std::string* uri) {
  if (uri->empty()) *uri = pipeline::tracking_uri_from_environment();
  if (uri->empty()) {
    print_message(stderr, "error", "no MLflow server: give --tracking-uri http://HOST:PORT or set MLFLOW_TRACKING_URI");
    return false;
  }
  auto checked = pipeline::checked_tracking_uri(*uri, true);
  if (!checked) {
    print_message(stderr, "error", checked.error().message);
    return false;
  }
  *uri = checked.value();
  return true;
}

int run_sync(SyncCommandOptions opt) {
  report::RenderOptions render;
  if (!report::parse_format(opt.format, &render.format)) {
    print_message(stderr, "error", fmt::format("--format must be table, csv or json (got '{}')", opt.format));
    return kExitUsage;
  }
  if (!resolve_tracking_uri(&opt.sync.tracking_uri)) return kExitUsage;
  if (opt.sync.root.empty()) {
    auto ctx = collect::detect_run_context(collect::Environment::from_process(), {});
    opt.sync.root = ctx ? ctx.value().root : collect::kDefaultRoot;
  }
  opt.sync.run_names = split_names(opt.run_names);
  opt.sync.artifacts = !opt.no_artifacts;
  // The resume tests stop a sync at an exact request, as a crash or `kill -9` would.
  if (const char* kill = std::getenv("SCALEPROF_TEST_SYNC_KILL_AFTER"); kill != nullptr) {
    if (const std::optional<int64_t> n = parse_int64(kill)) opt.sync.kill_after_requests = *n;
  }
  auto progress = [&opt](std::string_view line) {
    if (!opt.quiet) print_message(stderr, "sync", line);
  };
  if (opt.sync.wait_for_lock && !opt.quiet) {
    // Said before waiting, so a sync that waits is not taken for a hung one.
    print_message(stderr, "sync", "--wait: waiting for any other sync of this root and server to end");
  }
  auto summary = mlflow_sync::sync_runs(opt.sync, progress);
  if (!summary) {
    return fail_with(summary.error());
  }
  if (!summary.value().busy.empty()) {
    print_message(stderr, "error",
                  fmt::format("another sync of {} to {} is running ({}; lock {}): nothing done. Run again when it "
                              "has ended, or add --wait (exit code {})",
                              opt.sync.root, redact_url(opt.sync.tracking_uri), summary.value().busy,
                              summary.value().lock_path, kExitBusy));
    return kExitBusy;
  }
  if (!opt.quiet) {
    for (const std::string& w : summary.value().warnings) print_message(stderr, "warning", w);
  }
  report::Table table;
  table.title = fmt::format("Synced to {}", redact_url(opt.sync.tracking_uri));
  table.columns = {{"experiment", "Experiment"},
                   {"run", "Run"},
                   {"action", "Action"},
                   {"workers", "Workers"},
                   {"metric_points", "Points sent"},
                   {"artifacts", "Artifacts sent"},
                   {"run_id", "MLflow run"},
                   {"detail", "Detail"}};
  for (const mlflow_sync::RunOutcome& r : summary.value().runs) {
    table.add_row({r.experiment, r.run, r.action, r.workers, r.metric_points, r.artifacts,
                   r.run_id.empty() ? report::Cell::null() : report::Cell(r.run_id),
                   r.detail.empty() ? report::Cell::null() : report::Cell(r.detail)});
  }
  render.max_width = terminal_columns(STDOUT_FILENO);
  return write_table(table, render, opt.output);
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
  sync->add_option("--tracking-uri", opt->sync.tracking_uri,
                   "MLflow server, http://HOST:PORT or https://... (default: $MLFLOW_TRACKING_URI)");
  sync->add_option("--root", opt->sync.root,
                   "Where runs are stored (default: $SCALEPROF_ROOT or ./scalability-metrics)");
  sync->add_option("--experiment", opt->sync.experiment, "Only runs of this scaleprof experiment");
  sync->add_option("--run-names", opt->run_names, "Only these runs (comma-separated)");
  sync->add_option("--experiment-name", opt->sync.experiment_name,
                   "MLflow experiment to put the runs in (default: each run's scaleprof experiment)");
  sync->add_option("--progress-file", opt->sync.progress_path,
                   "Where the sync records its progress (default: ROOT/.scaleprof-sync/HOST_PORT.json)");
  sync->add_option("--batch-size", opt->sync.batch_metrics, "Metric points per runs/log-batch request")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sync->add_flag("--no-artifacts", opt->no_artifacts, "Do not upload the run's files and profiler traces");
  sync->add_flag("--wait", opt->sync.wait_for_lock,
                 "When another sync of this root and server is running, wait for it to end (default: stop at once "
                 "with exit code 5)");
  sync->add_flag("--verify", opt->sync.verify,
                 "Also check runs the server holds complete: read their metric histories and artifact lists and "
                 "send what is missing");
  sync->add_option("--format", opt->format, "Summary format: table, csv or json")->capture_default_str();
  sync->add_option("-o,--output", opt->output, "Write the summary to FILE instead of standard output");
  sync->add_flag("-q,--quiet", opt->quiet, "No progress lines or warnings on standard error");
  sync->callback([opt, exit_code] { *exit_code = run_sync(*opt); });
}

}  // namespace scaleprof::cli

#include "pipeline/mlflow_sync_pipeline.h"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>

#include "collect/run_context.h"
#include "collect/run_records.h"
#include "core/credential_redaction.h"
#include "core/number_text.h"
#include "pipeline/tracking_uri.h"

namespace scaleprof::pipeline {

namespace {

// The server to sync to: the option, else MLflow's own MLFLOW_TRACKING_URI (the option wins); only
// an http(s) server takes writes, anything else is a bad command line.
Result<std::string> resolve_tracking_uri(std::string uri) {
  if (uri.empty()) uri = tracking_uri_from_environment();
  if (uri.empty()) {
    return Error{"no MLflow server: give --tracking-uri http://HOST:PORT or set MLFLOW_TRACKING_URI",
                 ErrorKind::kUsage};
  }
  auto checked = checked_tracking_uri(uri, true);
  if (!checked) return Error{checked.error().message, ErrorKind::kUsage};
  return checked;
}

}  // namespace

Result<MlflowSyncOutcome> sync_to_mlflow(MlflowSyncOptions opt, const MessageSink& message) {
  MlflowSyncOutcome out;
  if (!report::parse_format(opt.format, &out.format)) {
    return Error{fmt::format("--format must be table, csv or json (got '{}')", opt.format), ErrorKind::kUsage};
  }
  Result<std::string> uri = resolve_tracking_uri(opt.sync.tracking_uri);
  if (!uri) return uri.error();
  opt.sync.tracking_uri = uri.value();
  if (opt.sync.root.empty()) {
    auto ctx = collect::detect_run_context(collect::Environment::from_process(), {});
    opt.sync.root = ctx ? ctx.value().root : collect::kDefaultRoot;
  }
  // The resume tests stop a sync at an exact request, as a crash or `kill -9` would.
  if (const char* kill = std::getenv("SCALEPROF_TEST_SYNC_KILL_AFTER"); kill != nullptr) {
    if (const std::optional<int64_t> n = parse_int64(kill)) opt.sync.kill_after_requests = *n;
  }
  auto progress = [&](std::string_view line) {
    if (!opt.quiet) message("sync", line);
  };
  if (opt.sync.wait_for_lock && !opt.quiet) {
    // Said before waiting, so a sync that waits is not taken for a hung one.
    message("sync", "--wait: waiting for any other sync of this root and server to end");
  }
  auto summary = mlflow_sync::sync_runs(opt.sync, progress);
  if (!summary) return summary.error();
  out.root = opt.sync.root;
  out.shown_uri = redact_url(opt.sync.tracking_uri);
  if (!summary.value().busy.empty()) {
    out.busy = summary.value().busy;
    out.lock_path = summary.value().lock_path;
    return out;
  }
  if (!opt.quiet) {
    for (const std::string& w : summary.value().warnings) message("warning", w);
  }
  report::Table& table = out.table;
  table.title = fmt::format("Synced to {}", out.shown_uri);
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
  return out;
}

}  // namespace scaleprof::pipeline

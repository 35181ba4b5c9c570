#include "pipeline/runs_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <optional>
#include <set>

#include "collect/run_context.h"
#include "importers/run_data_reader.h"
#include "importers/run_reader.h"

namespace scaleprof::pipeline {

namespace {

std::string utc(std::optional<int64_t> unix_ns) {
  if (!unix_ns) return {};
  std::time_t seconds = static_cast<std::time_t>(*unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

report::Cell count_or_null(int64_t v) {
  return v > 0 ? report::Cell(v) : report::Cell::null();
}

}  // namespace

Result<RunsTable> list_runs(const RunsOptions& opt, const MessageSink& message) {
  RunsTable out;
  if (!report::parse_format(opt.format, &out.format)) {
    return Error{fmt::format("--format must be table, csv or json (got '{}')", opt.format), ErrorKind::kUsage};
  }
  auto ctx = collect::detect_run_context(collect::Environment::from_process(), {});
  std::string root = !opt.root.empty() ? opt.root : ctx ? ctx.value().root : collect::kDefaultRoot;
  importers::ReadOptions read;
  read.read_steps = false;
  read.read_gpu = false;
  std::vector<std::string> problems;  // unreadable entries (a symbolic link loop): one line each
  auto runs = importers::read_runs(root, opt.experiment, read, &problems);
  if (!runs) return runs.error();
  for (const std::string& p : problems) message("warning", p);
  report::Table& table = out.table;
  table.title = fmt::format("Runs in {}", root);
  table.columns = {{"experiment", "Experiment"}, {"run", "Run"},           {"strategy", "Strategy"},
                   {"workers", "Workers"},       {"nodes", "Nodes"},       {"epochs", "Epochs"},
                   {"status", "Status"},         {"start", "Start (UTC)"}, {"exit_status", "Exit"},
                   {"layout", "Layout"}};
  for (const importers::RunData& r : runs.value()) {
    std::optional<int64_t> start = r.info ? r.info->start_unix_ns : std::nullopt;
    if (!start) {
      for (const importers::RankData& rank : r.ranks) {
        if (rank.info && rank.info->start_unix_ns)
          start = std::min(start.value_or(*rank.info->start_unix_ns), *rank.info->start_unix_ns);
      }
    }
    std::string strategy = r.strategy();
    table.add_row({r.experiment, r.run, strategy.empty() ? report::Cell::null() : report::Cell(strategy),
                   count_or_null(r.world_size()), count_or_null(r.node_count()), r.epochs_completed(), r.status,
                   start ? report::Cell(utc(start)) : report::Cell::null(),
                   r.info && r.info->exit_status ? report::Cell(*r.info->exit_status) : report::Cell::null(),
                   "scaleprof"});
    if (!opt.quiet) {
      for (const Diagnostic& w : r.warnings) message("warning", w.text());
      if (!r.status_reason.empty()) {
        message("warning", fmt::format("{}: {}: {}", r.dir, r.status, r.status_reason));
      }
      for (const importers::RankData& rank : r.ranks) {
        if (rank.info && rank.info->write_errors > 0) {
          message("warning", fmt::format("{}: {} metrics write(s) failed and were retried (last: {})", rank.dir,
                                         rank.info->write_errors, rank.info->last_write_error));
        }
      }
    }
  }
  // Runs in itwinai's CSV layout (no experiment names: listed only without --experiment), one row per
  // run-id folder, strategy and worker count, as the report groups them.
  if (opt.experiment.empty()) {
    importers::ScalabilityReadOptions itwinai;
    itwinai.root = root;
    itwinai.scaleprof_runs = false;
    auto found = importers::read_scalability_data(itwinai);
    if (found) {
      for (const tables::RunData& r : found.value().runs) {
        std::set<int64_t> epochs;
        for (const auto& e : r.epochs) epochs.insert(e.epoch);
        table.add_row({report::Cell::null(), r.name, r.strategy, count_or_null(r.workers), count_or_null(r.nodes),
                       static_cast<int64_t>(epochs.size()), report::Cell::null(), report::Cell::null(),
                       report::Cell::null(), r.layout});
      }
      if (!opt.quiet) {
        for (const Diagnostic& e : found.value().errors) message("warning", e.text());
      }
    }
  }
  return out;
}

}  // namespace scaleprof::pipeline

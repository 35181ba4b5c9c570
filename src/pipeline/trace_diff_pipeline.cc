#include "pipeline/trace_diff_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "analysis/distribution.h"
#include "analysis/ops_diff.h"
#include "core/diagnostic.h"
#include "engine/diff_stream.h"
#include "importers/run_reader.h"
#include "pipeline/shard_inputs.h"

namespace scaleprof::pipeline {

namespace {

// What a side's input names: its trace files, and from a run directory its samples per step and
// strategy (the tables are filled once its traces are streamed).
Result<std::vector<std::string>> resolve_side(const std::string& input, std::optional<double> samples_override,
                                              DiffSideRead* out) {
  std::vector<std::string> paths = {input};
  if (is_run_directory(input)) {
    importers::ReadOptions read;
    read.read_gpu = false;
    auto run = importers::read_run(input, read);
    if (!run) return Error{fmt::format("side {}: {}", out->info.label, run.error().message), run.error().kind};
    const importers::RunData& data = run.value();
    for (const Diagnostic& d : data.warnings) out->run_warnings.push_back(d.text());
    out->info.strategy = data.strategy();
    paths.clear();
    std::vector<int64_t> samples;
    for (const importers::RankData& r : data.ranks) {
      paths.insert(paths.end(), r.trace_files.begin(), r.trace_files.end());
      for (const collect::StepRecord& s : r.steps) {
        if (s.samples && *s.samples > 0) samples.push_back(*s.samples);
      }
    }
    if (paths.empty()) {
      return Error{fmt::format("side {}: {}: the run directory has no traces (rank-*/traces/*.json[.gz])",
                               out->info.label, input),
                   ErrorKind::kNotFound};
    }
    if (!samples.empty()) {
      std::sort(samples.begin(), samples.end());
      out->info.samples_per_step = analysis::quantile_sorted(samples, 0.5);
      out->info.samples_source = "steps.csv";
    }
  }
  if (samples_override) {
    out->info.samples_per_step = *samples_override;
    out->info.samples_source = "--samples";
  }
  return paths;
}

// The streamed side into its DiffSideRead, or the error naming the side.
Status take_side(Result<engine::StreamedDiffSide>&& streamed, DiffSideRead* out) {
  if (!streamed)
    return Error{fmt::format("side {}: {}", out->info.label, streamed.error().message), streamed.error().kind};
  engine::StreamedDiffSide& side = streamed.value();
  out->set = std::move(side.set);
  out->repair_notes = std::move(side.repair_notes);
  out->side.ranks = std::move(side.ranks);
  out->side.samples_per_step = out->info.samples_per_step;
  return Ok{};
}

}  // namespace

Result<DiffReport> diff_report(const std::string& a, const std::string& b, const trace::LoadOptions& load,
                               const DiffOptions& options) {
  DiffReport out;
  out.a.info.label = "A";
  out.a.info.input = a;
  out.b.info.label = "B";
  out.b.info.input = b;
  auto paths_a = resolve_side(a, options.samples_a, &out.a);
  if (!paths_a) return paths_a.error();
  auto paths_b = resolve_side(b, options.samples_b, &out.b);
  if (!paths_b) return paths_b.error();
  engine::StreamedDiffSides streamed =
      engine::stream_diff_sides(paths_a.value(), paths_b.value(), load, options.summary);
  if (Status s = take_side(std::move(streamed.a), &out.a); !s) return s.error();
  if (Status s = take_side(std::move(streamed.b), &out.b); !s) return s.error();
  for (const DiffSideRead* s : {&out.a, &out.b}) {
    if (s->side.ranks.empty()) {
      out.problems.push_back(
          {Severity::kError, "", fmt::format("{}: no trace of {} could be read", s->info.label, s->info.input)});
    }
  }
  if (!out.a.info.strategy.empty() && !out.b.info.strategy.empty() && out.a.info.strategy != out.b.info.strategy) {
    out.problems.push_back(
        {Severity::kWarning, "",
         fmt::format("the sides ran different strategies: A {}, B {}", out.a.info.strategy, out.b.info.strategy)});
  }
  const bool samples_a = out.a.info.samples_per_step > 0;
  const bool samples_b = out.b.info.samples_per_step > 0;
  if (samples_a != samples_b) {
    out.problems.push_back({Severity::kWarning, "",
                            fmt::format("{}: samples per step unknown (no samples in steps.csv, no --samples), so "
                                        "times are compared per step, not per sample",
                                        samples_a ? "B" : "A")});
  }
  out.complete = !out.a.side.ranks.empty() && !out.b.side.ranks.empty();
  if (!out.complete) return out;
  const analysis::TraceDiff diff = analysis::diff_traces(out.a.side, out.b.side);
  out.problems.insert(out.problems.end(), diff.problems.begin(), diff.problems.end());
  out.report = report::diff_tables(diff, out.a.side, out.b.side, out.a.info, out.b.info);
  out.report.add("ops_diff", report::ops_diff_table(analysis::ops_diff(out.a.side, out.b.side)));
  return out;
}

}  // namespace scaleprof::pipeline

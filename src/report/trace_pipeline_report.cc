// `scaleprof trace pipeline` (issue 33 item 3): the pipelines found from the ranks' P2P calls, each
// stage's bubble beside the ideal (p-1)/(m+p-1), per step, and notes on what could not be used
// (analysis/pipeline_bubbles.h). Every table is always present, so the JSON is one object whatever
// the input.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "analysis/pipeline_bubbles.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

Cell pipeline_rank_cell(int64_t rank) {
  return rank >= 0 ? Cell(rank) : Cell::null();
}

std::string pipeline_stage_order(const std::vector<int64_t>& ranks) {
  std::string out;
  for (int64_t r : ranks) out += (out.empty() ? "" : " -> ") + std::to_string(r);
  return out;
}

analysis::PipelineAnalysis analyse(const engine::RankStore& ranks) {
  // A rank's pipeline results are a few hundred bytes (steps and peers), so all are gathered: the
  // stage order needs every rank's peers at once.
  std::vector<analysis::RankPipeline> per_rank;
  ranks->for_each([&](const engine::RankResults& r) {
    if (r.pipeline) per_rank.push_back(*r.pipeline);
  });
  return analysis::analyse_pipeline(per_rank);
}

Table pipelines_table(const analysis::PipelineAnalysis& a) {
  Table pipelines;
  pipelines.title =
      "Pipelines found from the ranks' send/recv (stage order: activations flow left to right); "
      "ideal bubble (p-1)/(m+p-1) of GPipe and 1F1B with equal stages";
  pipelines.columns = {{"pipeline", "Pipeline"},
                       {"stages", "Stages (p)"},
                       {"micro_batches", "Micro-batches (m)"},
                       {"stage_ranks", "Ranks by stage"},
                       {"ideal_bubble_pct", "Ideal bubble (%)"},
                       {"median_bubble_pct", "Median stage bubble (%)"},
                       {"busy_ratio", "Slowest / fastest busy"},
                       {"slowest_rank", "Slowest stage (rank)"}};
  pipelines.set_importance(Importance::kKey, {"pipeline", "stages", "micro_batches"});
  for (const analysis::Pipeline& p : a.pipelines) {
    std::vector<double> fractions;
    for (const analysis::PipelineStage& s : a.stages) {
      if (s.pipeline == p.index && std::isfinite(s.bubble_fraction)) fractions.push_back(s.bubble_fraction);
    }
    std::sort(fractions.begin(), fractions.end());
    double median = std::numeric_limits<double>::quiet_NaN();
    if (!fractions.empty()) {
      const size_t mid = fractions.size() / 2;
      median = fractions.size() % 2 == 1 ? fractions[mid] : (fractions[mid - 1] + fractions[mid]) / 2.0;
    }
    pipelines.add_row(
        {p.index, static_cast<int64_t>(p.ranks.size()), p.micro_batches >= 0 ? Cell(p.micro_batches) : Cell::null(),
         pipeline_stage_order(p.ranks), pct_cell(100.0 * p.ideal_fraction), pct_cell(100.0 * median),
         std::isfinite(p.busy_ratio) ? Cell(p.busy_ratio, 3) : Cell::null(), pipeline_rank_cell(p.slowest_rank)});
  }

  return pipelines;
}

}  // namespace

TraceReport pipeline_summary_tables(const engine::RankStore& ranks) {
  const analysis::PipelineAnalysis a = analyse(ranks);
  TraceReport report;
  if (!a.pipelines.empty()) report.add("pipelines", pipelines_table(a));
  return report;
}

TraceReport pipeline_tables(const engine::RankStore& ranks) {
  const analysis::PipelineAnalysis a = analyse(ranks);
  Table pipelines = pipelines_table(a);

  Table stages;
  stages.title = fmt::format(
      "Per stage, medians over its steps: busy = step - bubble (basis device: the step's time without computation "
      "on the device; host: waiting in send/recv for a neighbour); slowest: "
      "the largest busy time, named when it exceeds the smallest by more than {:.0f} %",
      100.0 * (analysis::kUnbalancedRatio - 1.0));
  stages.columns = {{"pipeline", "Pipeline"},
                    {"stage", "Stage"},
                    {"rank", "Rank"},
                    {"prev_rank", "From rank"},
                    {"next_rank", "To rank"},
                    {"steps", "Steps"},
                    {"step_us", "Step (us)"},
                    {"busy_us", "Busy (us)"},
                    {"bubble_us", "Bubble (us)"},
                    {"bubble_pct", "Bubble (%)"},
                    {"ideal_pct", "Ideal (%)"},
                    {"slowest", "Slowest"},
                    {"basis", "Basis"}};
  stages.set_importance(Importance::kKey, {"pipeline", "stage", "rank"});
  stages.set_importance(Importance::kUseful, {"prev_rank", "next_rank", "steps"});
  for (const analysis::PipelineStage& s : a.stages) {
    stages.add_row({s.pipeline, s.stage, s.rank, pipeline_rank_cell(s.prev_rank), pipeline_rank_cell(s.next_rank),
                    s.steps, us_stat_cell(s.step_ns), us_stat_cell(s.busy_ns), us_stat_cell(s.bubble_ns),
                    pct_cell(100.0 * s.bubble_fraction), pct_cell(100.0 * s.ideal_fraction), s.slowest ? "yes" : "",
                    analysis::pipeline_basis_name(s.basis)});
  }

  Table steps;
  steps.title =
      "Per stage and ProfilerStep: the bubble beside the ideal; m: the first stage's sends to the second "
      "in the step";
  steps.columns = {
      {"pipeline", "Pipeline"},     {"stage", "Stage"},         {"rank", "Rank"},         {"step", "Step"},
      {"micro_batches", "m"},       {"step_us", "Step (us)"},   {"busy_us", "Busy (us)"}, {"bubble_us", "Bubble (us)"},
      {"bubble_pct", "Bubble (%)"}, {"ideal_pct", "Ideal (%)"}, {"basis", "Basis"}};
  steps.set_importance(Importance::kKey, {"pipeline", "stage", "step"});
  steps.set_importance(Importance::kUseful, {"rank", "micro_batches"});
  for (const analysis::PipelineStageStep& r : a.rows) {
    const int64_t p = static_cast<int64_t>(a.pipelines[static_cast<size_t>(r.pipeline)].ranks.size());
    const double ideal = r.micro_batches > 0 ? static_cast<double>(p - 1) / static_cast<double>(r.micro_batches + p - 1)
                                             : std::numeric_limits<double>::quiet_NaN();
    steps.add_row({r.pipeline, r.stage, r.rank, r.step, r.micro_batches >= 0 ? Cell(r.micro_batches) : Cell::null(),
                   us_cell(r.step_ns), us_cell(r.busy_ns), us_cell(r.bubble_ns), pct_cell(100.0 * r.bubble_fraction),
                   pct_cell(100.0 * ideal), analysis::pipeline_basis_name(r.basis)});
  }

  Table notes;
  notes.title = a.notes.empty() ? "Notes: none" : "Notes: what could not be used";
  notes.columns = {{"note", "Note"}};
  for (const std::string& n : a.notes) notes.add_row({n});

  TraceReport report;
  report.add("pipelines", std::move(pipelines));
  report.add("stages", std::move(stages));
  report.add("steps", std::move(steps));
  report.add("notes", std::move(notes));
  return report;
}

}  // namespace scaleprof::report

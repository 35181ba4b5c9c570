#include "report/what_if_report.h"

#include <cmath>

namespace scaleprof::report {

namespace {

Cell ms(double v) {
  return std::isfinite(v) ? Cell(v, 3) : Cell::null();
}

}  // namespace

TraceReport what_if_tables(const std::vector<TraceWhatIfRow>& rows) {
  Table t;
  t.title =
      "What if: every rank's profiled steps re-timed under each change across the collectives matched between "
      "ranks (the mean step over ranks and steps)";
  t.columns = {{"what_if", "What if"},
               {"ranks", "Ranks"},
               {"steps", "Steps"},
               {"step_ms", "Step (ms)"},
               {"predicted_step_ms", "Predicted step (ms)"},
               {"gain_pct", "Gain (%)"},
               {"predicted_step_ms_min", "Fastest step (ms)"},
               {"predicted_step_ms_max", "Slowest step (ms)"}};
  t.set_importance(Importance::kKey, {"what_if"});
  t.set_importance(Importance::kDetail, {"predicted_step_ms_min", "predicted_step_ms_max", "ranks", "steps"});
  for (const TraceWhatIfRow& r : rows) {
    const analysis::WhatIfOutcome& o = r.outcome;
    const double gain = o.step_ms > 0 ? 100.0 * (o.step_ms - o.predicted_step_ms) / o.step_ms : std::nan("");
    t.add_row({r.what_if, r.ranks, r.steps, ms(o.step_ms), ms(o.predicted_step_ms),
               std::isfinite(gain) ? Cell(gain, 2) : Cell::null(), ms(o.predicted_step_ms_min),
               ms(o.predicted_step_ms_max)});
  }
  // Per step: where a mean gain hides one step that kept its cost (a straggler's sleep the model did
  // not remove in one step, say), this shows it.
  Table steps;
  steps.title = "Per step: the mean over ranks of each profiled step, measured and re-timed";
  steps.columns = {{"what_if", "What if"},
                   {"step", "Step"},
                   {"ranks", "Ranks"},
                   {"step_ms", "Step (ms)"},
                   {"predicted_step_ms", "Predicted step (ms)"},
                   {"gain_pct", "Gain (%)"}};
  steps.set_importance(Importance::kKey, {"what_if", "step"});
  for (const TraceWhatIfRow& r : rows) {
    for (const analysis::StepReplay& s : r.outcome.steps) {
      const double gain = s.measured_ns > 0 ? 100.0 * (s.measured_ns - s.predicted_ns) / s.measured_ns : std::nan("");
      steps.add_row({r.what_if, s.step, s.ranks, ms(s.measured_ns / 1e6), ms(s.predicted_ns / 1e6),
                     std::isfinite(gain) ? Cell(gain, 2) : Cell::null()});
    }
  }
  TraceReport out;
  out.add("what_if", std::move(t));
  out.add("what_if_steps", std::move(steps));
  return out;
}

}  // namespace scaleprof::report

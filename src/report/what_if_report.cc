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
  TraceReport out;
  out.add("what_if", std::move(t));
  return out;
}

}  // namespace scaleprof::report

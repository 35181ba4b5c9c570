// The "Straggler Causes" section (report/straggler_causes_report.h).
#include "report/straggler_causes_report.h"

#include <algorithm>
#include <cmath>

#include "core/clock_event_reasons.h"

namespace scaleprof::report {

namespace {

Cell straggler_cell(double v, int digits) {
  return std::isfinite(v) ? Cell(v, digits) : Cell::null();
}

}  // namespace

std::optional<ReportSection> straggler_causes_section(const ScalabilityAnalysis& a) {
  // The section sets slow steps beside GPU samples: ranks that sampled no GPU (CPU runs, --no-gpu)
  // have nothing to say there, and step-time noise alone would fill it.
  const bool any_gpu = std::any_of(a.straggler_causes.begin(), a.straggler_causes.end(),
                                   [](const analysis::StragglerCauseRow& r) { return !r.gpu_source.empty(); });
  if (!any_gpu) return std::nullopt;
  ReportSection s;
  s.key = "straggler_causes";
  s.title = "Straggler Causes";
  s.notes.push_back(
      "A rank's step is slow when it lasted more than 1.1x the median of the other ranks' durations of the same "
      "step (same epoch and step number in steps.csv) and more than 10 ms longer. Its GPU's samples (gpu.csv) "
      "taken during its slow steps are set beside those taken during its other steps and the other ranks' samples "
      "in the same steps, on the rank's own wall clock. A verdict is given when the slow steps' median SM clock "
      "is at most 0.9x the other ranks' (else its own other steps'); no verdict means the clock does not explain "
      "the slowness (or the driver gave no clock).");
  s.notes.push_back(
      "Under synchronous data parallelism every rank's step lasts as long (the all-reduce waits for the slowest), "
      "so the profiler traces name the straggler: a step of a rank is also slow (waited for) when, in the profiled "
      "step it falls in, the others waited more than 10 ms for it at the matched collectives (the rank that "
      "arrived last, the others' waits summed).");
  Table t;
  t.title = "Slow steps per rank and the GPU clock in them";
  t.columns = {{"strategy", "Strategy"},
               {"workers", "Workers"},
               {"run", "Run"},
               {"rank", "Rank"},
               {"slow_steps", "Slow steps"},
               {"steps", "Which"},
               {"step_s", "Step (s)"},
               {"others_step_s", "Others' step (s)"},
               {"sm_clock_mhz", "SM clock (MHz)"},
               {"normal_sm_clock_mhz", "Own other steps (MHz)"},
               {"others_sm_clock_mhz", "Others (MHz)"},
               {"power_w", "Power (W)"},
               {"normal_power_w", "Own other steps (W)"},
               {"throttle_reasons", "Throttle reasons"},
               {"gpu", "GPU samples"},
               {"waited_for_s", "Others waited (s)"},
               {"verdict", "Verdict"}};
  t.set_importance(Importance::kKey, {"rank", "verdict"});
  t.set_importance(Importance::kUseful, {"strategy", "workers", "steps", "sm_clock_mhz", "others_sm_clock_mhz"});
  t.set_importance(Importance::kDetail,
                   {"run", "normal_sm_clock_mhz", "power_w", "normal_power_w", "gpu", "waited_for_s"});
  for (const analysis::StragglerCauseRow& r : a.straggler_causes) {
    if (r.gpu_source.empty()) continue;
    const analysis::StragglerCause& c = r.cause;
    t.add_row({r.series, r.workers, r.run, c.rank, c.slow_steps, c.steps, straggler_cell(c.slow_step_s, 4),
               straggler_cell(c.others_step_s, 4), straggler_cell(c.slow_clock_mhz, 0),
               straggler_cell(c.normal_clock_mhz, 0), straggler_cell(c.others_clock_mhz, 0),
               straggler_cell(c.slow_power_w, 1), straggler_cell(c.normal_power_w, 1),
               c.slow_samples > 0 ? Cell(clock_event_reasons_text(c.slow_reasons)) : Cell::null(),
               r.gpu_source.empty() ? Cell::null() : Cell(r.gpu_source), straggler_cell(c.waited_s, 4),
               c.verdict.empty() ? Cell::null() : Cell(c.verdict)});
  }
  s.table_keys = {"straggler_causes"};
  s.tables = {std::move(t)};
  return s;
}

}  // namespace scaleprof::report

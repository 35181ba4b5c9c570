// libFuzzer target for the analyses that came after summary's (issue 30): a trace from the input
// through the reader, then the ProfilerStep windows, the critical path, memory, counters, FLOPs,
// phases, the step decomposition, pipeline bubbles and exposed collectives (issue 33), and their reports rendered as
// JSON. Besides a crash, a sanitizer report (signed overflow: every sum of the file's figures is checked) or a hang
// (the per-window loops and the nesting walk are linear), it traps on a figure that is wrapped: FLOPs and byte sums are
// never negative unless unknown (core/checked_sum.h), and the windows the analyses share are disjoint
// and in order; the critical path's edges of any window add up to it, and the overlay trace drawn on
// the input is valid JSON or refused. The whole input is the file (written to /tmp for the reports,
// which read files as users' traces are read).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/counters.h"
#include "analysis/critical_path.h"
#include "analysis/flops.h"
#include "analysis/memory_timeline.h"
#include "analysis/path_overlay.h"
#include "analysis/phases.h"
#include "analysis/profiler_steps.h"
#include "analysis/step_decomposition.h"
#include "core/checked_sum.h"
#include "pipeline/trace_pipeline.h"
#include "report/table.h"
#include "report/trace_report.h"
#include "trace/byte_stream.h"
#include "trace/kineto_reader.h"
#include "trace/trace_overlay.h"
#include "trace/trace_set.h"
#include "trace_fuzz_file.h"

namespace {

using namespace scaleprof;

// A sum of the file's non-negative figures: exact and non-negative, or unknown.
void check_figure(int64_t v) {
  if (v < 0 && !is_unknown_figure(v)) __builtin_trap();
}

void check_analyses(const trace::RankTrace& t) {
  const analysis::ProfilerSteps steps = analysis::find_profiler_steps(t);
  for (size_t i = 0; i < steps.steps.size(); ++i) {
    const analysis::ProfilerStepWindow& w = steps.steps[i];
    if (w.end_ns < w.start_ns) __builtin_trap();
    if (i > 0 && w.start_ns < steps.steps[i - 1].end_ns) __builtin_trap();  // disjoint, by start
  }

  const analysis::RankFlops f = analysis::compute_flops(t);
  check_figure(f.flops);
  check_figure(f.flop_counter_flops);
  for (int64_t v : f.compute_flops) check_figure(v);
  for (const analysis::FlopOperator& o : f.operators) check_figure(o.flops);
  for (const analysis::FlopKernel& k : f.kernels) check_figure(k.flops);
  for (const analysis::FlopStep& s : f.steps) {
    check_figure(s.flops);
    for (int64_t v : s.compute_flops) check_figure(v);
  }

  const analysis::RankMemory m = analysis::memory_timeline(t, steps, {});
  for (const analysis::DeviceMemory& d : m.devices) {
    check_figure(d.allocated_bytes);
    if (d.allocations + d.frees > d.events) __builtin_trap();
  }

  std::vector<uint32_t> rows(t.events.size());
  for (uint32_t i = 0; i < rows.size(); ++i) rows[i] = i;
  const analysis::RankCounters c =
      analysis::compute_counters(t, std::span<const uint32_t>(rows), analysis::kDefaultMaxQueueLength);
  for (const analysis::DirectionBandwidth& b : c.bandwidth) check_figure(b.bytes);

  (void)analysis::critical_path(t, analysis::step_path_windows(t), 10);
  // Other windows (issue 31): the whole trace and every instance of a name, their edges kept; each
  // window's edges follow one another and add up to it.
  for (const char* annotation : {"", "a"}) {
    analysis::PathWindowSpec spec;
    spec.annotation = annotation;
    const std::vector<analysis::PathWindow> windows = analysis::path_windows(t, spec);
    const analysis::RankCriticalPath p = analysis::critical_path(t, windows, 10, /*events=*/true);
    for (const analysis::StepCriticalPath& s : p.steps) {
      int64_t at = s.start_ns;
      for (const analysis::PathEvent& e : s.events) {
        if (e.start_ns != at || e.end_ns < e.start_ns) __builtin_trap();
        at = e.end_ns;
      }
      if (!s.events.empty() && at != s.end_ns) __builtin_trap();
    }
  }
  (void)analysis::compute_phases(t);
  const analysis::RankDecomposition d = analysis::decompose_steps(t);
  if (d.steps.size() > steps.steps.size()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  trace::ParseOptions options;
  options.window_bytes = 4096;
  auto stream = trace::memory_stream("fuzz", bytes);
  auto parsed = trace::parse_kineto_stream("fuzz", *stream, options);
  if (!parsed.ok()) return 0;
  check_analyses(parsed.value());

  // The overlay trace drawn on the input: refused, or valid JSON.
  {
    analysis::PathWindowSpec spec;
    spec.annotation = "";
    const analysis::RankCriticalPath p =
        analysis::critical_path(parsed.value(), analysis::path_windows(parsed.value(), spec), 10, true);
    const simdjson::padded_string text(bytes);
    auto drawn = trace::draw_trace_overlay("fuzz", text, analysis::critical_path_overlay_spec(p));
    if (drawn.ok()) {
      simdjson::dom::parser parser;
      simdjson::dom::element doc;
      if (parser.parse(drawn.value()).get(doc)) __builtin_trap();
    }
  }

  // The reports of the input as users' traces are read and reported (pipeline::stream_report).
  const fuzzing::TraceFile file(bytes);
  if (!file.ok()) return 0;
  trace::LoadOptions load;
  load.threads = 1;
  load.parse.window_bytes = options.window_bytes;
  report::RenderOptions json;
  json.format = report::Format::kJson;
  for (const char* name : {"critical-path", "memory", "counters", "flops", "decompose", "phases", "pipeline", "fsdp"}) {
    auto streamed = pipeline::stream_report(name, {file.path()}, load, {});
    if (!streamed.ok() || !streamed.value().any_selected) continue;
    const report::TraceReport& r = streamed.value().report;
    for (const report::Table& t : r.tables) {
      const std::string text = report::render(t, json);
      if (text.empty()) __builtin_trap();
    }
  }
  return 0;
}

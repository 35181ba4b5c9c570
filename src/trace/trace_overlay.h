// The overlay trace (`scaleprof trace critical-path --overlay DIR`, HTA's
// overlay_critical_path_analysis): a copy of a Kineto trace with its critical path drawn on it, for
// Perfetto (ui.perfetto.dev, trace_processor) and chrome://tracing:
//  - every event on the path keeps its place and text and gets `"critical": 1` in its args, as HTA
//    marks it (an event without args gets them);
//  - each launch and sync edge of the path is a flow between its two events ("s" then "f" with
//    "bp": "e", cat and name "critical_path", args type and weight), as HTA draws them;
//  - a track of its own (a process named by `track_name`) holds one slice per edge of the path in
//    order, named by its event or its kind of gap, with its category, bound_by and HTA weight, so the
//    path reads as one row whose slices add up to each window.
// The rest of the file is copied as it is: every other event, and every top-level member. The copy
// is made from the file as written; a file the reader had to repair (lenient mode) is refused with
// a one-line error, since positions in it may not be the reader's.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace scaleprof::trace {

// A flow between two events of the file (positions in traceEvents), at the given times.
struct OverlayFlow {
  int64_t from_index = -1;
  int64_t to_index = -1;
  int64_t from_ns = 0;  // on the reader's clock (the file's microseconds in ns, plus baseTimeNanoseconds)
  int64_t to_ns = 0;
  std::string type;  // HTA's edge type, e.g. "critical_path_kernel_launch_delay"
  int64_t weight_ns = 0;
};

struct OverlaySlice {
  int64_t start_ns = 0;  // reader's clock
  int64_t end_ns = 0;
  std::string name;
  // Shown in args, as strings and numbers: category, bound_by, type, HTA weight (us), window.
  std::string category;
  std::string bound_by;
  std::string type;
  int64_t hta_weight_ns = 0;
  int64_t window = -1;
};

struct OverlaySpec {
  std::vector<int64_t> critical;  // positions in traceEvents of the events on the path
  std::vector<OverlayFlow> flows;
  std::vector<OverlaySlice> slices;
  int64_t base_time_ns = 0;  // baseTimeNanoseconds, which the reader added to every time
  std::string track_name = "critical path";
};

// The process id of the path's track: one a profiler does not write (Kineto's are real pids and
// device numbers).
inline constexpr int64_t kOverlayPid = 2147480000;

// Writes `input` with `spec` drawn on it to `output` (through the one output-file writer). Errors:
// `input` unreadable (kIo, kNotFound), not a JSON object with a traceEvents array or not valid
// JSON as written (kBadInput, naming the file and byte), `output` not writable (kIo).
Status write_trace_overlay(const std::string& input, const std::string& output, const OverlaySpec& spec);

// The same drawing on the text of a trace (`input` names it in errors): the overlay's text.
Result<std::string> draw_trace_overlay(std::string_view input, const simdjson::padded_string& json,
                                       const OverlaySpec& spec);

}  // namespace scaleprof::trace

// The forward FLOPs of one rank's trace, per nn.Module: the side of `scaleprof trace flops
// --deepspeed-profile` that comes from the trace (deepspeed_compare.h pairs it with DeepSpeed's flops
// profiler; docs/flops.md, "DeepSpeed's flops profiler").
//
// FLOPs are the calls compute_flops counts (flops.h: counted_flop_calls), so no FLOP is counted twice
// and the formulas are those of `trace flops`. The window is the trace's ProfilerSteps (a call counts
// when it starts inside one, as `trace flops` assigns calls to steps), or the whole trace without
// steps.
//
// Modules. A trace recorded with `with_stack=True` has a python_function event per module call,
// "nn.Module: Linear_1" (the class and the instance's number among that class, in the order first
// called). Those calls nest by time on their thread into a tree; a node is one module instance under
// one parent (a module called from two places is two nodes). A node's FLOPs are those of the counted
// calls nested in any of its calls, its submodules' included (what DeepSpeed shows per module).
//
// Forward. Without module events, the forward FLOPs are the counted calls outside backward,
// optimizer and data-loading regions (phases.h: host_role), which also takes in a loss computed
// outside the model; both are kept.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event_table.h"

namespace scaleprof::analysis {

struct TraceModule {
  std::string name;     // "Linear_1": the event's name without "nn.Module: "
  std::string cls;      // "Linear": the name without its "_N"
  int64_t parent = -1;  // index in ModuleFlops::modules, -1 for a module no other module encloses
  int32_t depth = 0;
  int64_t calls = 0;
  int64_t flops = 0;    // counted FLOPs inside its calls, submodules' included; unknown past int64
  int64_t host_ns = 0;  // its calls' summed durations
};

struct ModuleFlops {
  std::vector<TraceModule> modules;   // every parent before its children, in first-call order
  int64_t steps = 0;                  // ProfilerSteps of the window; 0: the whole trace
  int64_t forward_flops = 0;          // counted calls outside backward, optimizer and data loading
  int64_t forward_compute_flops = 0;  // of which matmul, convolution and attention
  int64_t all_flops = 0;              // every counted call in the window (backward and optimizer too)
};

ModuleFlops module_flops(const trace::RankTrace& trace);

// Class of a profiler module name: "Linear_12" -> "Linear", "Foo_bar_0" -> "Foo_bar"; a name without
// a numeric suffix is its own class.
std::string module_class(std::string_view name);

}  // namespace scaleprof::analysis

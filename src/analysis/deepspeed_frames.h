// DeepSpeed's own functions as the Python frames torch.profiler records with with_stack=True
// (docs/fsdp.md, "DeepSpeed ZeRO: what its traces show"): DeepSpeed marks its work with NVTX ranges,
// which Kineto does not record, so these frames are all a trace says of it. One place for the names
// DeepSpeed 0.19.8 uses, read by `trace fsdp` (exposed_collectives.h: a call's span, phase and layer)
// and by the step decomposition (step_decomposition.h: its communication on CPU traces).
#pragma once

#include <string_view>

namespace scaleprof::analysis {

// A Python frame of DeepSpeed: "deepspeed/runtime/zero/stage3.py(1911): __avg_scatter_grads" gives file
// "deepspeed/runtime/zero/stage3.py" and function "__avg_scatter_grads"; both empty for other frames.
// The path is relative to site-packages in a pip install, absolute in a source checkout: matched by its
// tail.
struct DeepSpeedFrame {
  std::string_view file;
  std::string_view function;
};
DeepSpeedFrame deepspeed_frame(std::string_view name);

// DeepSpeed's functions that wrap one collective with its copy-in or copy-out (0.19's ZeRO-3 parameter
// all-gather and gradient reduce-scatter, ZeRO-1/2's gradient all-reduce and post-step parameter
// all-gather): a call's span starts there, as FSDP's label starts it.
bool deepspeed_wraps_collective(std::string_view function);

// The phase the DeepSpeedEngine's own entry points mean: engine(x), engine.backward(loss), engine.step()
// (a StepPhase, phases.h), -1 for any other frame.
int deepspeed_engine_phase(const DeepSpeedFrame& frame);

// A frame in which DeepSpeed's thread is in its own collective: one of the wrappers above, or the wait
// on a ZeRO-3 all-gather's handle (partition_parameters.py's `wait`, which also copies the gathered
// partitions out: operators). The step decomposition counts the time in one with no operator running as
// communication, as `trace fsdp` counts it exposed; the handles that gather nothing (one rank) have the
// same `wait`: a few microseconds of Python.
bool deepspeed_collective_frame(std::string_view name);

}  // namespace scaleprof::analysis

// Exposed collectives of one rank per process group, phase and layer (`scaleprof trace fsdp`, issue 33):
// which all-gather, reduce-scatter or all-reduce the training thread (CPU) or the device (GPU) waited
// for, in forward, backward or the optimizer, and for which FSDP-wrapped module or DeepSpeed ZeRO-3 module.
//
// Each collective call of an analysed step (phases.h's steps) has a span and an exposed part:
// * CPU (gloo; no communication kernels in the trace): the call is the `c10d::*` op on the thread that
//   issues it (the outermost one: c10d ops nest record_param_comms and the like). Its span runs from
//   the start of the FSDP annotation enclosing it on that thread (`FSDP::all_gather (layers.3)`,
//   `FSDP::post_backward_reduce (layers.3)`: FSDP's own all-gather or reduce, copy-in included), else
//   from the op's start, to the end of its work on gloo's worker thread (the `gloo:*` span, matched to
//   the c10d ops in issue order: gloo runs its queue first in, first out), else to the op's end. The
//   exposed part is the time in the span when the issuing thread runs no operator of its own: its
//   innermost host event at that instant is not a cpu_op, or is a communication op or a wait (Python
//   between ops, sleeping, `work.wait()`, `c10d::wait`...). A collective the thread overlaps with
//   operators it runs meanwhile is hidden for that time.
// * GPU (communication kernels present): the call is the communication kernel; its span is the
//   kernel's, and its exposed part the time no computation kernel runs on any stream of the rank (as
//   comm_comp_overlap.h counts overlap per rank). The phase, layer and label come from its launch.
// Each instant belongs to one call at most: where spans overlap it goes to the earliest-started one
// (the call the rank is still waiting for), so exposed times add up over calls, layers and phases to
// the exposed time of the rank, never past its wall time.
//
// A call's step is the analysed step holding its issue instant (the c10d op's start, the kernel's
// launch), its phase the phase of that instant (phases.h). Its label is the innermost user annotation
// enclosing the issue on its thread that names FSDP's work (`FSDP::…`), else the innermost other one
// (ProfilerStep#N excepted); its layer the module FSDP names in it: `(fqn)` at the end or `for fqn`
// (`(root)` for FSDP's label without one), "" without an FSDP label.
// DeepSpeed ZeRO (its Python frames, which only with_stack=True records; docs/fsdp.md; the names:
// deepspeed_frames.h): a CPU call's
// span starts at the DeepSpeed function wrapping the collective (`all_gather_coalesced`,
// `reduce_scatter_coalesced`, `allreduce_bucket`, `all_gather_dp_groups`) when one encloses it; its
// phase is that of the innermost DeepSpeedEngine `forward`/`backward`/`step` frame enclosing the issue
// (ZeRO reduces gradients at the end of engine.backward, after the autograd engine's last op, and
// all-reduces norms and gathers parameters in engine.step outside the torch optimizer's step), else
// phases.h's; its layer the `nn.Module: <Class>_<n>` frame enclosing ZeRO-3's `fetch_sub_module` (""
// for a fetch outside any module call: ZeRO-3's backward fetches, counted in a note).
// Type and process group come from
// the collective's metadata (collective_calls.h: record_param_comms / kernel args, else the trace's
// only process group); the type of a CPU call from its c10d op (gloo runs reduce_scatter as an
// all_reduce). Durations are the collective's own (the gloo span or kernel), else the c10d op's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/phases.h"
#include "trace/event_table.h"

namespace scaleprof::analysis {

// Calls of one (group, phase, type, layer): over every analysed step.
struct ExposedRow {
  std::string group;        // process group name, "" unknown
  std::string group_ranks;  // its ranks (format_rank_list), "" unknown
  StepPhase phase = StepPhase::kOther;
  std::string type;   // canonical collective type (allgather, reduce_scatter, allreduce, ...)
  std::string layer;  // from the FSDP label; "" in totals and for calls without one
  int64_t calls = 0;
  int64_t duration_ns = 0;  // summed collective durations (kUnknownFigure past int64)
  int64_t span_ns = 0;      // summed spans (CPU: FSDP's call to the work's end)
  int64_t exposed_ns = 0;   // summed exposed parts
  int64_t bytes = 0;        // summed message sizes of the calls whose size is known
};

// One call of an analysed step: the end of the collective's own work (gloo's span or the kernel, on the
// rank's clock: where collective_rows.h's call ends), its exposed time, and its row in `layers`. The
// scalability report's trace stage takes a matched call's wait (collective_match.h) out of its part.
struct ExposedCallEnd {
  int64_t end_ns = 0;
  int64_t exposed_ns = 0;
  size_t layer = 0;
};

struct RankExposedCollectives {
  std::string path;                       // the trace file, for messages
  int64_t steps = 0;                      // analysed steps
  int64_t step_ns = 0;                    // their summed wall time
  bool gpu = false;                       // calls are communication kernels
  int64_t calls = 0;                      // calls in the analysed steps
  int64_t labelled = 0;                   // of those, calls under an FSDP label
  int64_t exposed_ns = 0;                 // over every call
  std::vector<ExposedRow> totals;         // per group × phase × type (layer ""), by group, phase, type
  std::vector<ExposedRow> layers;         // per group × phase × type × layer, most exposed first (top only)
  std::vector<std::string> notes;         // what could not be done, in words (no steps, unmatched gloo work)
  std::vector<ExposedCallEnd> call_ends;  // `keep_calls` only: the calls whose layer row is kept, by end
};

struct ExposedOptions {
  bool keep_calls = false;  // fill RankExposedCollectives::call_ends
  // CPU: an operator on any thread of the rank hides a call (the step decomposition's rule, which the
  // scalability report's parts of communication follow), not only one on the thread that issued it.
  bool any_thread_hides = false;
};

// `top`: layer rows kept (most exposed first); 0 keeps every one.
RankExposedCollectives exposed_collectives(const trace::RankTrace& trace, bool include_last_step, int top,
                                           const ExposedOptions& options = {});

// FSDP's labels around its own collective calls (`FSDP::all_gather (…)`, `FSDP::post_backward_reduce (…)`),
// not the hooks that enclose them (`FSDP::pre_forward (…)`), nor the copy-out and the waits after them.
// The step decomposition counts their time with no operator running as communication
// (step_decomposition.h), as the exposed time here does.
bool fsdp_collective_label(std::string_view label);

// The module FQN an FSDP record_function label names: "layers.3" for "FSDP::all_gather (layers.3)" and
// "FSDP::backward_prefetch for layers.3", "(root)" for "FSDP::all_gather"; "" for other names.
std::string fsdp_layer(std::string_view label);

}  // namespace scaleprof::analysis

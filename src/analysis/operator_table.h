// Operator table: torch.profiler's `key_averages().table()`, rebuilt from one rank's trace alone.
//
// The numbers follow PyTorch's own post-processing (torch/autograd/profiler.py
// `_parse_kineto_results`, profiler_util.py `EventList`), so a row here equals the row torch prints:
//
// * Events: host events (cpu_op, user_annotation, cuda_runtime/driver, python_function of a
//   with_stack=True profile, which torch's key_averages() lists and nests like the others, and
//   category-less events of legacy files) and device events (kernel, gpu_memcpy, gpu_memset,
//   cuda_sync, gpu_user_annotation, ...). Skipped like torch: the Trace span, overhead, instants, and the names
//   [memory], [OutOfMemory], profiler::_record_function_{enter,enter_new,exit}, aten::is_leaf,
//   aten::output_nr, aten::_version. `ProfilerStep#N` is renamed `ProfilerStep*`.
// * Nesting: per thread (track), host events that are not async sorted by (start, -end); a stack walk
//   pops the top while `child.start >= top.end || child.end > top.end`, then the top is the parent.
//   Partial overlaps give no relation. Then the dup-node rule: a node whose parent has the same name
//   and no other child is removed; the parent adopts its children and *replaces* its own kernels by
//   the removed node's (torch's `_remove_dup_nodes`). Removed nodes are not counted as calls.
// * Kernel attribution: a device event with an `External id` is a kernel of every non-async host op
//   (cpu_op / user_annotation) with that External id. A device event without one (MTIA device
//   events carry only `correlation`) takes the External id of the runtime/driver call with its
//   correlation id, i.e. of the call that launched it (torch links them the same way inside the
//   profiler, before the trace is written). gpu_user_annotation events are not attributed
//   (they are spans over kernels already attributed; attributing them would count kernel time twice).
//   They are rows of their own (torch lists them since 2.x; pytorch#130730 removed them from the
//   Self CUDA total). Whether torch also hangs them under the CPU annotation could not be checked
//   here: only CPU builds of torch are installable, so device-side rules are verified by reading.
// * Host calls still running when the profiler stopped (Kineto writes them as ending when the trace
//   was written, "Record Window End") end at the stop time, the end of the `Trace` span, as in torch.
// * Per call: CPU total = dur (host events); Self CPU = dur - sum of children's dur; device total =
//   own kernels + children's device totals; Self device = own kernels. Device events: device total =
//   Self device = dur, no CPU time. Async calls: CPU total = dur, everything else 0, not nested.
// * Memory (`[memory]` events, profile_memory=True): a host call's memory = sum of Bytes of the
//   records whose ts lies in [start, end] (both ends, any thread, torch's `MemRecordsAcc`), split
//   into CPU (device types CPU, MKLDNN, IDEEP) and device (CUDA, HIP, XPU, PrivateUse1); self =
//   own - children's. Records inside no host call become a row named `[memory]`, one call each.
// * Rows group calls by (name, host/device, user annotation), as torch keys them.
// * Percentages: Self CPU % = self_cpu / sum_self_cpu and CPU total % = cpu_total / sum_self_cpu
//   (torch's definition, so totals of nested ops exceed 100%; 0 for async rows), where sum_self_cpu
//   sums all rows; Self device % = self_device / sum_self_device, summed over device rows except
//   device user annotations. A zero denominator gives NaN (torch prints "NaN").
//
// Async ops: torch marks RecordFunctions async (c10d `Work` profiling titles `gloo:all_reduce`,
// `nccl:all_reduce`, ...) or when they end on another thread; neither is written to the trace.
// Treated as async here: user annotations whose name starts with a process-group backend prefix
// (gloo:, nccl:, mpi:, ucc:, xccl:, mccl:). With PyTorch 2.13 gloo this reproduces torch's Self CPU
// totals; other async RecordFunctions (rare: futures ending on another thread) cannot be recognised.
//
// Times are int64 nanoseconds (the trace's ns resolution; torch prints the same values in us).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event_table.h"

namespace scaleprof::analysis {

// The side of the trace a row describes; torch keys rows on it (a kernel and an op never merge).
enum class OpSide : uint8_t { kHost, kDevice };

struct OperatorRow {
  std::string name;  // as torch shows it ("ProfilerStep*" for every ProfilerStep#N)
  OpSide side = OpSide::kHost;
  bool user_annotation = false;  // record_function / gpu_user_annotation: separate rows in torch
  bool async = false;            // every call was async: no self time, CPU total % is 0
  int64_t calls = 0;
  int64_t self_cpu_ns = 0;
  int64_t cpu_total_ns = 0;
  int64_t self_device_ns = 0;
  int64_t device_total_ns = 0;
  int64_t cpu_memory_bytes = 0;  // signed: allocations minus frees inside the calls
  int64_t self_cpu_memory_bytes = 0;
  int64_t device_memory_bytes = 0;
  int64_t self_device_memory_bytes = 0;
  // Filled by compute_operator_table from the table totals (see the header comment).
  double self_cpu_pct = std::numeric_limits<double>::quiet_NaN();
  double cpu_total_pct = std::numeric_limits<double>::quiet_NaN();
  double self_device_pct = std::numeric_limits<double>::quiet_NaN();
};

struct OperatorTable {
  std::vector<OperatorRow> rows;    // every row, in the order of each row's first call in the trace
  int64_t sum_self_cpu_ns = 0;      // over all rows: denominator of Self CPU % and CPU total %
  int64_t sum_self_device_ns = 0;   // over device rows except device user annotations
  bool has_device_time = false;     // some row has Self device > 0 (torch then prints device columns)
  bool has_memory = false;          // the trace has [memory] events (profile_memory=True)
  bool has_device_memory = false;   // some row has Self device memory > 0
  int64_t async_calls = 0;          // host calls treated as async
  int64_t dup_nodes_removed = 0;    // calls folded into a same-named parent
  int64_t calls_ended_at_stop = 0;  // host calls cut at the profiler's stop (see the header)
  // Device events whose (launch's) External id matched a host op, or whose launch (by correlation id)
  // is nested in one on its thread.
  int64_t attributed_device_events = 0;
  int64_t unattributed_device_events = 0;  // the other device events (still rows of their own)
};

struct OperatorTableOptions {
  // Treat gloo:/nccl:/... user annotations as async (torch does; see the header comment). Off gives
  // the plain interval rebuild, whose Self CPU then also subtracts ops nested in those spans.
  bool backend_collectives_async = true;
  // On: host calls and host times only, for callers that need no more (`trace diff`): device events
  // are not attributed to the ops that launched them (host rows keep Self device and device total
  // 0) and [memory] records are not read (no memory columns, no [memory] rows). The attribution's
  // sort and map and the memory lookups were half the table's time on df_index_resolver.
  bool host_times_only = false;
};

// One host call of the table, as nested (after the dup-node rule): what `scaleprof trace diff` needs
// to split self times by ProfilerStep, which the rows (sums over the whole trace) cannot.
// (The two 4-byte fields first: 24 bytes a call rather than 32 with padding.)
struct OperatorCall {
  uint32_t event = 0;   // row in the EventTable
  uint32_t row = 0;     // index into OperatorTable::rows
  int64_t parent = -1;  // EventTable row of the enclosing call, -1 for a top-level call
  int64_t self_ns = 0;  // its own host time less its children's (0 for an async call), as in Self CPU
};

// `calls` (optional): every counted host call, in event order; their self_ns add up to the rows'
// self_cpu_ns, so a call's share of a step and the table agree.
OperatorTable compute_operator_table(const trace::RankTrace& trace, const OperatorTableOptions& options = {},
                                     std::vector<OperatorCall>* calls = nullptr);

// True for names torch's async collective records carry: "gloo:all_reduce", "nccl:broadcast", ...
bool is_backend_collective_name(std::string_view name);

// "ProfilerStep#12" -> "ProfilerStep*"; other names unchanged (torch's `_rewrite_name`).
std::string_view operator_display_name(std::string_view name);

enum class OperatorSortKey { kSelfCpu, kCpuTotal, kSelfDevice, kDeviceTotal, kCalls };

// Accepts self_cpu, cpu_total, self_device, device_total, calls and torch's attribute names
// (self_cpu_time_total, cpu_time_total, self_cuda_time_total, device_time_total, count, ...).
std::optional<OperatorSortKey> parse_operator_sort_key(std::string_view text);

// The rows sorted by `key`, largest first (ties keep trace order), at most `top` (all if top <= 0).
std::vector<OperatorRow> top_operators(const OperatorTable& table, OperatorSortKey key, int top);

}  // namespace scaleprof::analysis

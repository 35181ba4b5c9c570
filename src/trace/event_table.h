// Columnar tables holding one rank's trace: events, tracks and sparse argument tables.
//
// Layout follows Perfetto's trace processor: the importer fills typed struct-of-arrays tables once;
// analyses only read them. All times are int64 nanoseconds on the trace's own clock (absolute when
// the trace gives `baseTimeNanoseconds` or absolute microseconds). Strings are ids into the rank's
// StringPool. Events keep file order; analyses build the orderings they need.
//
// Memory per event: 42 bytes in the dense columns below (durations and ids in 4 bytes, see
// narrow_column.h), plus sparse rows for the events that carry device, collective, memory, shape or
// CUPTI counter arguments (see RankTrace::memory_bytes()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "trace/category.h"
#include "trace/narrow_column.h"
#include "trace/string_pool.h"

namespace scaleprof::trace {

inline constexpr int64_t kNone = -1;  // "absent" for ids and arguments that are never negative

enum class Phase : uint8_t { kComplete, kInstant };

// One (pid, tid) pair. Kineto writes OS pid/tid on the host and device/stream on the GPU; 2021 files
// write strings such as "stream 7". A numeric string is stored as its number; other strings keep
// their text in *_label and the number is kNone.
struct TrackTable {
  std::vector<int64_t> pid;
  std::vector<int64_t> tid;
  std::vector<StringId> pid_label;  // 0 when the pid was numeric
  std::vector<StringId> tid_label;

  size_t size() const { return pid.size(); }
};

// Dense columns, one row per kept event ('X' complete events and 'i' instant events).
struct EventTable {
  std::vector<int64_t> ts;  // ns
  NarrowInt64Column dur;    // ns; 0 for instants
  std::vector<StringId> name;
  std::vector<StringId> cat_name;  // the raw `cat` text (kept for unknown categories)
  std::vector<Category> cat;
  std::vector<Phase> phase;
  std::vector<uint32_t> track;       // row in TrackTable
  NarrowInt64Column correlation;     // args.correlation, kNone if absent
  NarrowInt64Column external_id;     // args["External id"] (or "external id"), kNone if absent
  NarrowInt64Column stream;          // args.stream, kNone if absent (Context Sync keeps 4294967295)
  std::vector<uint32_t> file_index;  // position in traceEvents, for messages and stable ordering

  size_t size() const { return ts.size(); }
  int64_t end(size_t i) const { return ts[i] + dur[i]; }
};

// Arguments of device events (kernel, memcpy, memset), one row per event that carries at least one
// of them: a device event without any (MTIA-like traces) costs no row.
struct DeviceArgsTable {
  std::vector<uint32_t> event;                  // row in EventTable
  std::vector<int32_t> device;                  // args.device, -1 if absent
  std::vector<int64_t> bytes;                   // memcpy/memset bytes, -1 if absent
  std::vector<double> bandwidth_gbps;           // args["memory bandwidth (GB/s)"], NaN if absent or "N/A"
  std::vector<int32_t> grid_x, grid_y, grid_z;  // -1 if absent
  std::vector<int32_t> block_x, block_y, block_z;
  std::vector<int32_t> registers_per_thread;  // -1 if absent
  std::vector<int64_t> shared_memory;         // -1 if absent
  std::vector<float> blocks_per_sm;           // NaN if absent
  std::vector<float> warps_per_sm;
  std::vector<float> occupancy_pct;  // args["est. achieved occupancy %"]

  size_t size() const { return event.size(); }
};

// Collective metadata of record_param_comms ops and of the NCCL kernels Kineto copies it onto.
struct CollectiveTable {
  std::vector<uint32_t> event;
  std::vector<StringId> collective_name;  // "allreduce", ...
  std::vector<StringId> dtype;            // "Float", ...
  std::vector<int64_t> in_msg_nelems;     // also "In msg size" (PyTorch 2.2); -1 if absent
  std::vector<int64_t> out_msg_nelems;
  std::vector<int64_t> group_size;  // -1 if absent
  std::vector<StringId> process_group_name;
  std::vector<StringId> process_group_desc;
  std::vector<StringId> process_group_ranks;  // raw text, e.g. "[0, 1]"
  std::vector<int64_t> seq;                   // `Seq`: the call's number in its process group; -1 if absent
  // send / recv: `Dst Rank` / `Src Rank`, the peer's rank within the call's process group; -1 if absent
  std::vector<int64_t> peer_rank;
  // all-to-all(v) `In split size` / `Out split size`: raw text, e.g. "[2, 6]" (dim-0 rows per peer;
  // "[]" for equal splits; PyTorch writes at most 30 and then "...")
  std::vector<StringId> in_split_sizes;
  std::vector<StringId> out_split_sizes;

  size_t size() const { return event.size(); }
};

// cuda_sync records of waits on a CUDA event (Event Sync for cudaEventSynchronize, Stream Wait Event
// for cudaStreamWaitEvent): the cudaEventRecord call that recorded the event, by its correlation id,
// and the stream it was recorded on (Kineto's args wait_on_cuda_event_record_corr_id and
// wait_on_stream). One row per such record.
struct SyncWaitTable {
  std::vector<uint32_t> event;              // the cuda_sync record's row
  std::vector<int64_t> record_correlation;  // wait_on_cuda_event_record_corr_id
  std::vector<int64_t> wait_on_stream;      // kNone if absent

  size_t size() const { return event.size(); }
};

// [memory] / [OutOfMemory] instant events.
struct MemoryTable {
  std::vector<uint32_t> event;
  std::vector<int64_t> bytes;            // signed: >0 allocation, <0 free
  std::vector<int64_t> total_allocated;  // -1 if absent
  std::vector<int64_t> total_reserved;
  std::vector<int32_t> device_type;  // c10::DeviceType: 0 CPU, 1 CUDA, 6 HIP, ...
  std::vector<int32_t> device_id;
  // args.Addr: the block's address, which pairs a free with its allocation (the memory report's
  // holders at the peak); kNone if absent (torch <= 1.9, [OutOfMemory]).
  std::vector<int64_t> addr;

  size_t size() const { return event.size(); }
};

// Input shapes and types of ops recorded with record_shapes, as their JSON text.
struct ShapesTable {
  std::vector<uint32_t> event;
  std::vector<StringId> input_dims;   // e.g. "[[64, 64], [64, 64]]"
  std::vector<StringId> input_types;  // e.g. "[\"float\", \"float\"]"
  // `Concrete Inputs` (PyTorch >= 2.4 with record_shapes): the call's scalar arguments as strings,
  // e.g. "[\"\", \"\", \"\", \"[2, 2]\", \"[1, 1]\", \"[1, 1]\", \"1\"]"; "" when absent. The FLOP
  // formulas of convolutions need them (stride, padding, dilation, groups).
  std::vector<StringId> concrete_inputs;

  size_t size() const { return event.size(); }
};

// The performance counters of CUPTI range-profiler events (cat `cuda_profiler_range`, written by
// PyTorch's profiler in CUPTI profiler mode, one event per kernel): every numeric argument of such an
// event, one row per counter, in the event's argument order. Only events whose `cat` precedes their
// `args` (as every Kineto writer puts them) are read so.
struct CounterArgsTable {
  std::vector<uint32_t> event;  // row in EventTable
  std::vector<StringId> name;   // the argument's key as written, e.g. "sm__cycles_elapsed.avg"
  std::vector<double> value;    // integers exact up to 2^53

  size_t size() const { return event.size(); }
};

struct DeviceProperties {
  int64_t id = -1;
  std::string name;
  int64_t total_global_mem = -1;
  int64_t compute_major = -1;
  int64_t compute_minor = -1;
  int64_t num_sms = -1;
  int64_t max_threads_per_multiprocessor = -1;
};

struct ProcessGroupConfig {
  std::string name;
  std::string desc;
  int64_t size = -1;
  std::vector<int64_t> ranks;
};

struct DistributedInfo {
  std::string backend;
  std::optional<int64_t> rank;
  std::optional<int64_t> world_size;
  std::vector<ProcessGroupConfig> pg_config;
  std::string nccl_version;
};

// Trace-level keys other than traceEvents.
struct TraceMetadata {
  std::optional<int64_t> schema_version;
  std::optional<int64_t> base_time_ns;  // baseTimeNanoseconds, already added to every ts
  std::string display_time_unit;
  std::vector<DeviceProperties> devices;
  std::optional<DistributedInfo> distributed;
  // Every other top-level key with its raw JSON value (record_shapes, cupti_version, trace_id, ...).
  std::vector<std::pair<std::string, std::string>> other;
  bool legacy_array = false;  // the file was a bare event array (PyTorch's legacy exporter)
};

// Counters of what the reader saw, kept so users know what was skipped or repaired.
struct ReadStats {
  uint64_t events_total = 0;     // entries in traceEvents
  uint64_t events_kept = 0;      // rows in EventTable
  uint64_t metadata_events = 0;  // ph M
  uint64_t flow_events = 0;      // ph s/f/t
  uint64_t counter_events = 0;   // ph C
  uint64_t other_events = 0;     // other phases (B/E, ...), not analysed
  uint64_t rejected_events = 0;  // events dropped because a field was invalid (see warnings)
  uint64_t repairs = 0;          // lenient-mode fixes applied to the file text
  uint64_t compressed_bytes = 0;
  uint64_t json_bytes = 0;
  // True when any ts had a fractional microsecond part (ns-resolution trace).
  bool fractional_timestamps = false;
};

// One rank's trace: everything the analyses need, nothing tied to the file any more.
struct RankTrace {
  int64_t rank = 0;
  std::string path;
  StringPool strings;
  EventTable events;
  TrackTable tracks;
  DeviceArgsTable device_args;
  CollectiveTable collectives;
  MemoryTable memory;
  ShapesTable shapes;
  SyncWaitTable sync_waits;
  CounterArgsTable counter_args;
  TraceMetadata metadata;
  ReadStats stats;
  std::vector<Diagnostic> warnings;  // what was skipped or noticed while reading, each with its place

  std::string_view name(size_t event) const { return strings.view(events.name[event]); }
  size_t memory_bytes() const;
};

}  // namespace scaleprof::trace

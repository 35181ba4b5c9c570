// Memory of one rank from its `[memory]` events (torch.profiler's profile_memory=True), per device.
//
// Each `[memory]` instant is one allocation (Bytes > 0) or free (Bytes < 0) of the caching allocator
// (CUDA, HIP, ...) or of the CPU allocator, with the device's running totals after it: `Total
// Allocated` (bytes in live tensors' blocks) and `Total Reserved` (bytes the caching allocator holds
// from the driver; 0 on CPU). Per device (Device Type, Device Id), in time order (file order among
// equal times, which is the order torch recorded them):
//
// * the step function of allocated and reserved bytes: the value after each event, thinned to at
//   most 3 points per bucket of `points` equal buckets over the events' span (the bucket's lowest
//   and highest allocated and highest reserved) plus the first and last event, so a plot of any
//   trace is bounded while the exact peak, the lowest value and the peak of reserved stay in it;
// * the peak of allocated (the first event reaching it) and of reserved, and their times;
// * allocated before profiling began: the first event's Total Allocated less its own Bytes. The
//   trace's running total includes it; the events themselves never show those blocks being made.
//   Unknown on CPU: the CPU allocator's total counts only what it allocated while the profiler
//   recorded memory, so parameters and optimizer state made before are in no figure of the trace;
// * per ProfilerStep window [start, end): the peak of the step function inside it (the value carried
//   into the step counts, at the step's start), its time, and allocated at the start and the end;
// * what held the bytes at the peak: every allocation made before the peak and not freed by then
//   (a free is paired with its allocation by `Addr`), by the CPU operator it was made in: the
//   innermost cpu_op on the allocating thread whose [start, end] holds it (a record_function
//   annotation where no cpu_op does). Factory ops that only allocate (aten::empty, empty_strided,
//   resize_) are named with the op around them, `parent (aten::empty)`, as TensorBoard's profiler
//   plugin did. The blocks allocated before profiling and still live at the peak are one row of
//   their own; the rows sum to the peak exactly. Kineto traces carry no torch memory category
//   (parameter, gradient, activation, ...): that lives only in torch's memory profiler
//   (export_memory_timeline), so no category is reported.
//
// Pure function of the trace; no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/profiler_steps.h"
#include "trace/event_table.h"

namespace scaleprof::analysis {

struct MemoryPoint {
  int64_t ts_ns = 0;
  int64_t allocated = 0;  // bytes after the event
  int64_t reserved = 0;   // -1 where the trace has no Total Reserved
};

struct MemoryStepPeak {
  int64_t step = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t start_allocated = 0;  // carried into the step
  int64_t end_allocated = 0;    // after the step's last event
  int64_t peak_allocated = 0;
  int64_t peak_ts_ns = 0;  // the step's start when the carried value is the peak
  int64_t peak_reserved = 0;
  int64_t events = 0;
};

// One holder of the bytes live at the peak.
struct MemoryHolder {
  std::string name;  // operator; "(allocated before profiling)" or "(no operator)" for those rows
  int64_t bytes = 0;
  int64_t allocations = 0;  // live blocks (0 for the before-profiling row: the trace has no count)
};

struct DeviceMemory {
  int32_t device_type = -1;  // c10::DeviceType: 0 CPU, 1 CUDA, 6 HIP, ...
  int32_t device_id = -1;
  int64_t events = 0;
  int64_t allocations = 0;
  int64_t frees = 0;
  int64_t allocated_bytes = 0;  // sum of the allocations' Bytes
  int64_t first_ts_ns = 0;
  int64_t last_ts_ns = 0;
  // First event's Total Allocated - its Bytes; -1 unknown: a CPU trace (its allocator counts only
  // what it allocated while profiling) or no Total Allocated.
  int64_t before_profiling = -1;
  int64_t peak_allocated = 0;
  int64_t peak_allocated_ts_ns = 0;
  int64_t peak_reserved = -1;  // -1: no Total Reserved in the trace
  int64_t peak_reserved_ts_ns = 0;
  int64_t min_allocated = 0;
  int64_t final_allocated = 0;  // after the last event
  // Holders at the peak, largest first; empty when the events carry no Addr (frees cannot be paired).
  std::vector<MemoryHolder> holders;
  bool holders_known = false;
  std::vector<MemoryPoint> timeline;  // thinned step function, in time order
  std::vector<MemoryStepPeak> steps;
};

struct RankMemory {
  std::vector<DeviceMemory> devices;  // by (device type, device id)
  int64_t out_of_memory_events = 0;   // [OutOfMemory] instants
};

struct MemoryOptions {
  int points = 50;      // timeline buckets (<= 3 points each); 0: no timeline
  int top = 10;         // holders kept per device, the rest in one "(others)" row; 0: all
  bool holders = true;  // false: no holders (the peak alone: the scalability report's)
};

// "CPU", "CUDA 0", "HIP 1", "type 7 id 0".
std::string memory_device_name(int32_t device_type, int32_t device_id);

RankMemory memory_timeline(const trace::RankTrace& trace, const ProfilerSteps& steps, const MemoryOptions& options);

}  // namespace scaleprof::analysis

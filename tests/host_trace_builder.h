// Builds small RankTraces with the fields operator-level analyses read: External ids, correlation
// ids, host threads and [memory] records (times in nanoseconds).
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "trace/event_table.h"

namespace scaleprof::testing {

class HostTraceBuilder {
 public:
  static constexpr int64_t kPid = 100;

  // A host event on thread `tid` (cpu_op by default).
  uint32_t op(std::string_view name, int64_t ts, int64_t dur, int64_t tid = 1, int64_t external_id = trace::kNone,
              trace::Category cat = trace::Category::kCpuOp) {
    return add(name, cat, trace::Phase::kComplete, ts, dur, kPid, tid, trace::kNone, external_id);
  }
  uint32_t annotation(std::string_view name, int64_t ts, int64_t dur, int64_t tid = 1,
                      int64_t external_id = trace::kNone) {
    return op(name, ts, dur, tid, external_id, trace::Category::kUserAnnotation);
  }
  uint32_t runtime(std::string_view name, int64_t ts, int64_t dur, int64_t correlation,
                   int64_t external_id = trace::kNone, int64_t tid = 1) {
    return add(name, trace::Category::kCudaRuntime, trace::Phase::kComplete, ts, dur, kPid, tid, correlation,
               external_id);
  }
  // Device work on device 0, stream 7 (Kineto: pid = device, tid = stream).
  uint32_t kernel(std::string_view name, int64_t ts, int64_t dur, int64_t external_id = trace::kNone,
                  int64_t correlation = trace::kNone, trace::Category cat = trace::Category::kKernel) {
    return add(name, cat, trace::Phase::kComplete, ts, dur, 0, 7, correlation, external_id);
  }
  // A [memory] instant: `device_type` 0 is CPU, 1 CUDA.
  uint32_t memory(int64_t ts, int64_t bytes, int32_t device_type = 0, int64_t tid = 1,
                  std::string_view name = "[memory]") {
    const uint32_t row = add(name, trace::Category::kCpuInstantEvent, trace::Phase::kInstant, ts, 0, kPid, tid,
                             trace::kNone, trace::kNone);
    trace::MemoryTable& m = t_.memory;
    m.event.push_back(row);
    m.bytes.push_back(bytes);
    m.total_allocated.push_back(-1);
    m.total_reserved.push_back(-1);
    m.device_type.push_back(device_type);
    m.device_id.push_back(device_type == 0 ? -1 : 0);
    m.addr.push_back(trace::kNone);
    return row;
  }

  trace::RankTrace take() { return std::move(t_); }
  // The memory rows so far, for tests that set the arguments memory() leaves absent (totals, Addr).
  trace::MemoryTable& memory_table() { return t_.memory; }

 private:
  uint32_t add(std::string_view name, trace::Category cat, trace::Phase phase, int64_t ts, int64_t dur, int64_t pid,
               int64_t tid, int64_t correlation, int64_t external_id) {
    trace::EventTable& e = t_.events;
    const auto row = static_cast<uint32_t>(e.size());
    e.ts.push_back(ts);
    e.dur.push_back(dur);
    e.name.push_back(t_.strings.intern(name));
    e.cat_name.push_back(t_.strings.intern(trace::category_name(cat)));
    e.cat.push_back(cat);
    e.phase.push_back(phase);
    e.track.push_back(track(pid, tid));
    e.correlation.push_back(correlation);
    e.external_id.push_back(external_id);
    e.stream.push_back(pid == kPid ? trace::kNone : tid);
    e.file_index.push_back(row);
    return row;
  }
  uint32_t track(int64_t pid, int64_t tid) {
    trace::TrackTable& k = t_.tracks;
    for (size_t i = 0; i < k.size(); ++i) {
      if (k.pid[i] == pid && k.tid[i] == tid) return static_cast<uint32_t>(i);
    }
    k.pid.push_back(pid);
    k.tid.push_back(tid);
    k.pid_label.push_back(0);
    k.tid_label.push_back(0);
    return static_cast<uint32_t>(k.size() - 1);
  }

  trace::RankTrace t_;
};

}  // namespace scaleprof::testing

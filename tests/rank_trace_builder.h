// Builds small RankTraces row by row for analysis unit tests (times in nanoseconds).
#pragma once

#include <cstdint>
#include <numeric>
#include <string_view>
#include <utility>
#include <vector>

#include "trace/event_table.h"

namespace scaleprof::testing {

class RankTraceBuilder {
 public:
  // Any complete event. `pid`/`tid` pick the track (device/stream for device work).
  uint32_t add(std::string_view name, trace::Category cat, int64_t ts, int64_t dur, int64_t stream = trace::kNone,
               int64_t correlation = trace::kNone, int64_t pid = 100, int64_t tid = 1) {
    trace::EventTable& e = t_.events;
    const auto row = static_cast<uint32_t>(e.size());
    e.ts.push_back(ts);
    e.dur.push_back(dur);
    e.name.push_back(t_.strings.intern(name));
    e.cat_name.push_back(t_.strings.intern(trace::category_name(cat)));
    e.cat.push_back(cat);
    e.phase.push_back(trace::Phase::kComplete);
    e.track.push_back(track(pid, tid));
    e.correlation.push_back(correlation);
    e.external_id.push_back(trace::kNone);
    e.stream.push_back(stream);
    e.file_index.push_back(row);
    return row;
  }
  // A kernel on `stream` of device 0 (Kineto: pid = device, tid = stream).
  uint32_t kernel(std::string_view name, int64_t ts, int64_t dur, int64_t stream = 7,
                  int64_t correlation = trace::kNone, trace::Category cat = trace::Category::kKernel,
                  int64_t device = 0) {
    return add(name, cat, ts, dur, stream, correlation, device, stream);
  }
  // A host launch (cuda_runtime) with its correlation id.
  uint32_t runtime(std::string_view name, int64_t ts, int64_t dur, int64_t correlation) {
    return add(name, trace::Category::kCudaRuntime, ts, dur, trace::kNone, correlation);
  }
  uint32_t cpu_op(std::string_view name, int64_t ts, int64_t dur) {
    return add(name, trace::Category::kCpuOp, ts, dur);
  }
  // A kernel and the cudaLaunchKernel that launched it.
  uint32_t launched_kernel(std::string_view name, int64_t launch_ts, int64_t launch_dur, int64_t ts, int64_t dur,
                           int64_t correlation, int64_t stream = 7) {
    runtime("cudaLaunchKernel", launch_ts, launch_dur, correlation);
    return kernel(name, ts, dur, stream, correlation);
  }

  const trace::RankTrace& trace() const { return t_; }
  trace::RankTrace take() { return std::move(t_); }
  std::vector<uint32_t> all_rows() const {
    std::vector<uint32_t> rows(t_.events.size());
    std::iota(rows.begin(), rows.end(), 0u);
    return rows;
  }

 private:
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

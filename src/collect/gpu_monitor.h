// A background thread that samples GPUs at a fixed interval (1 s by default, down to 10 ms) and
// appends one gpu.csv line per device per sample, with real timestamps, so energy is integrated over
// the times the samples were actually taken.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collect/gpu_energy.h"
#include "collect/gpu_library.h"
#include "collect/run_context.h"
#include "core/file_io.h"
#include "core/result.h"
#include "core/task_group.h"

namespace scaleprof::collect {

inline constexpr std::chrono::milliseconds kMinGpuInterval{10};

struct GpuMonitorOptions {
  std::chrono::nanoseconds interval = std::chrono::seconds(1);
  std::vector<int64_t> devices;  // driver indices; empty: every device of the library
  std::string csv_path;          // gpu.csv to append to; empty: keep only the summary
  FILE* messages = stderr;       // where a failing gpu.csv is reported (once; see MetricsFile)
};

class GpuMonitor {
 public:
  // Takes the first sample at once, then one per interval on a background thread.
  static Result<std::unique_ptr<GpuMonitor>> start(std::unique_ptr<GpuLibrary> library, GpuMonitorOptions options);

  GpuMonitor(const GpuMonitor&) = delete;
  GpuMonitor& operator=(const GpuMonitor&) = delete;
  ~GpuMonitor();  // stops

  // Takes a last sample (so energy covers the time up to now), stops the thread. Returns an error
  // when writes of gpu.csv failed (already reported, and retried at each sample); sampling itself
  // never fails.
  Status stop();

  // Failed writes of gpu.csv and the last one's message; read them after stop().
  int64_t write_errors() const { return csv_.failed_writes(); }
  const std::string& last_write_error() const { return csv_.last_error(); }

  std::vector<GpuDeviceSummary> summary() const;
  int64_t samples_taken() const;  // sampling rounds, each covering every device
  const std::vector<int64_t>& devices() const { return options_.devices; }
  std::string library_name() const { return library_->name(); }

 private:
  GpuMonitor(std::unique_ptr<GpuLibrary> library, GpuMonitorOptions options);
  void run();
  void sample_once();
  Status write_status() const;  // after the thread joined

  std::unique_ptr<GpuLibrary> library_;
  GpuMonitorOptions options_;
  MetricsFile csv_;                                     // only touched by the sampling thread, or after it joined
  std::vector<std::optional<double>> first_counter_j_;  // per device slot, for counter-relative energy

  mutable std::mutex mutex_;  // guards the fields below
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<GpuAccumulator> accumulators_;
  int64_t rounds_ = 0;
  std::string line_buffer_;               // reused so steady-state sampling does not allocate
  std::vector<GpuSample> sample_buffer_;  // likewise

  TaskGroup thread_;      // the sampling thread (core/task_group.h: its exception comes back from stop())
  bool running_ = false;  // thread_ holds a started thread not yet joined
};

// Which devices a monitor covers. "node": every device of the machine once. "rank": the devices
// visible to the process (CUDA_/ROCR_/HIP_VISIBLE_DEVICES); when several are visible to each of
// several processes on the node, the one at the local rank, as torch's cuda:LOCAL_RANK convention
// does, so four ranks sharing a node do not count each GPU four times. An entry the library does not
// know (a typo, "99999999999999999999") is a warning in *warnings and is not sampled: monitoring
// never stops a training over it.
std::vector<int64_t> choose_devices(const GpuLibrary& library, const RunContext& context, const std::string& mode,
                                    std::vector<std::string>* warnings);

// "1s", "250ms", "10ms", "0.5" (seconds): at least 10 ms.
Result<std::chrono::nanoseconds> parse_interval(const std::string& text);

}  // namespace scaleprof::collect

#include "collect/gpu_monitor.h"

#include <fmt/format.h>

#include "collect/run_records.h"
#include "collect/timers.h"
#include "core/number_text.h"

namespace scaleprof::collect {

Result<std::unique_ptr<GpuMonitor>> GpuMonitor::start(std::unique_ptr<GpuLibrary> library, GpuMonitorOptions options) {
  if (options.interval < kMinGpuInterval) {
    return Error{
        fmt::format("GPU sampling interval {} ms is below the minimum of {} ms",
                    std::chrono::duration<double, std::milli>(options.interval).count(), kMinGpuInterval.count()),
        ErrorKind::kUsage};
  }
  if (options.devices.empty()) {
    for (int64_t i = 0; i < library->device_count(); ++i) options.devices.push_back(i);
  }
  std::unique_ptr<GpuMonitor> monitor(new GpuMonitor(std::move(library), std::move(options)));
  monitor->sample_once();
  if (!monitor->thread_.try_spawn([m = monitor.get()] { m->run(); })) {
    return Error{"cannot start the GPU monitor's thread (the process's thread or memory limit)", ErrorKind::kInternal};
  }
  monitor->running_ = true;
  return monitor;
}

GpuMonitor::GpuMonitor(std::unique_ptr<GpuLibrary> library, GpuMonitorOptions options)
    : library_(std::move(library)), options_(std::move(options)) {
  if (!options_.csv_path.empty()) csv_ = MetricsFile(options_.csv_path, kGpuHeader, options_.messages);
  first_counter_j_.resize(options_.devices.size());
  accumulators_.resize(options_.devices.size());
}

GpuMonitor::~GpuMonitor() {
  (void)stop();
}

Status GpuMonitor::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ && !running_) return write_status();
    stopping_ = true;
  }
  wake_.notify_all();
  if (running_) {
    running_ = false;
    Status sampled = thread_.join("sampling the GPUs");
    if (!sampled) return sampled;
    sample_once();
  }
  return write_status();
}

Status GpuMonitor::write_status() const {
  if (csv_.failed_writes() == 0 || csv_.pending_bytes() == 0) return Ok{};
  return Error{fmt::format("{} ({} failed write(s))", csv_.last_error(), csv_.failed_writes()), ErrorKind::kIo};
}

void GpuMonitor::run() {
  // Deadlines on the monotonic clock, start + k * interval: no drift from the time sampling takes.
  // After a stall (suspended process, overloaded node) missed ticks are skipped, not bunched.
  using Clock = std::chrono::steady_clock;
  auto next = Clock::now() + options_.interval;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (wake_.wait_until(lock, next, [this] { return stopping_; })) break;
    lock.unlock();
    sample_once();
    lock.lock();
    next += options_.interval;
    const auto now = Clock::now();
    if (next <= now) next = now + options_.interval;
  }
}

void GpuMonitor::sample_once() {
  // Runs on one thread at a time (start, then the thread, then stop after join): the library, the
  // CSV file and first_counter_j_ need no lock; the accumulators do (summary() reads them).
  const int64_t now = unix_now_ns();
  std::vector<GpuSample>& samples = sample_buffer_;
  samples.clear();
  for (size_t slot = 0; slot < options_.devices.size(); ++slot) {
    GpuReading r = library_->read(options_.devices[slot]);
    GpuSample s;
    s.time_unix_ns = now;
    s.device = options_.devices[slot];
    s.utilization_pct = r.utilization_pct;
    s.power_w = r.power_w;
    s.memory_used_bytes = r.memory_used_bytes;
    s.sm_clock_mhz = r.sm_clock_mhz;
    s.throttle_reasons = r.throttle_reasons;
    if (r.energy_counter_j) {
      if (!first_counter_j_[slot]) first_counter_j_[slot] = r.energy_counter_j;
      s.energy_j = *r.energy_counter_j - *first_counter_j_[slot];
    }
    samples.push_back(s);
  }
  std::string& lines = line_buffer_;
  lines.clear();
  for (const GpuSample& s : samples) append_csv_line(&lines, s);
  if (!options_.csv_path.empty()) (void)csv_.append(lines);
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t slot = 0; slot < samples.size(); ++slot) accumulators_[slot].add(samples[slot]);
  ++rounds_;
}

std::vector<GpuDeviceSummary> GpuMonitor::summary() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<GpuDeviceSummary> out;
  out.reserve(accumulators_.size());
  for (const GpuAccumulator& a : accumulators_) out.push_back(a.summary());
  return out;
}

int64_t GpuMonitor::samples_taken() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rounds_;
}

std::vector<int64_t> choose_devices(const GpuLibrary& library, const RunContext& context, const std::string& mode,
                                    std::vector<std::string>* warnings) {
  std::vector<int64_t> all;
  for (int64_t i = 0; i < library.device_count(); ++i) all.push_back(i);
  if (mode == "node") return all;
  if (mode == "off") return std::vector<int64_t>{};
  std::vector<int64_t> visible;
  if (context.devices_restricted) {
    for (const std::string& id : context.visible_devices) {
      auto index = library.device_index(id);
      if (!index) {
        warnings->push_back(index.error().message + "; not sampled");
        continue;
      }
      visible.push_back(index.value());
    }
  } else {
    visible = all;
  }
  if (visible.size() > 1 && context.local_world_size > 1) {
    return std::vector<int64_t>{visible[static_cast<size_t>(context.local_rank) % visible.size()]};
  }
  return visible;
}

Result<std::chrono::nanoseconds> parse_interval(const std::string& text) {
  const std::optional<NumberPrefix<double>> number = parse_double_prefix(text);
  const double value = number ? number->value : 0;
  const std::string_view unit = number ? number->rest : std::string_view();
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1e9;
  } else if (unit == "ms") {
    scale = 1e6;
  } else if (unit == "us") {
    scale = 1e3;
  } else if (unit == "m" || unit == "min") {
    scale = 60e9;
  }
  if (!number || scale == 0 || !(value > 0) || value * scale > 86400e9) {
    return Error{fmt::format("'{}' is not an interval like 1s, 500ms or 0.1", text), ErrorKind::kUsage};
  }
  auto interval = std::chrono::nanoseconds(static_cast<int64_t>(value * scale));
  if (interval < kMinGpuInterval)
    return Error{fmt::format("interval '{}' is below the minimum of 10ms", text), ErrorKind::kUsage};
  return interval;
}

}  // namespace scaleprof::collect

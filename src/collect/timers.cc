#include "collect/timers.h"

#include <time.h>

namespace scaleprof::collect {

namespace {

int64_t read_clock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

int64_t unix_now_ns() {
  return read_clock(CLOCK_REALTIME);
}

int64_t monotonic_now_ns() {
  return read_clock(CLOCK_MONOTONIC);
}

void IntervalTimer::start() {
  running_ = true;
  start_unix_ns_ = unix_now_ns();
  start_mono_ns_ = monotonic_now_ns();
}

Interval IntervalTimer::stop() {
  const int64_t elapsed = monotonic_now_ns() - start_mono_ns_;
  running_ = false;
  // The end stamp is start + the monotonic duration, so end - start == duration even when the wall
  // clock was stepped meanwhile.
  return Interval{start_unix_ns_, start_unix_ns_ + elapsed, static_cast<double>(elapsed) * 1e-9};
}

}  // namespace scaleprof::collect

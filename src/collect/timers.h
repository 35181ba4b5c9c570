// Epoch and step timing: durations from the monotonic clock (immune to NTP steps and to the wall clock
// being changed mid-run), wall-clock stamps only to line ranks and nodes up against each other.
#pragma once

#include <cstdint>

namespace scaleprof::collect {

int64_t unix_now_ns();       // CLOCK_REALTIME
int64_t monotonic_now_ns();  // CLOCK_MONOTONIC

struct Interval {
  int64_t start_unix_ns = 0;
  int64_t end_unix_ns = 0;
  double duration_s = 0;
};

// One interval at a time; start() while running restarts it.
class IntervalTimer {
 public:
  void start();
  bool running() const { return running_; }
  // The interval since start(); the timer is stopped afterwards.
  Interval stop();

 private:
  bool running_ = false;
  int64_t start_unix_ns_ = 0;
  int64_t start_mono_ns_ = 0;
};

}  // namespace scaleprof::collect

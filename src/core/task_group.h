// TaskGroup: the one way scaleprof runs work on threads (issue 30). An exception escaping a
// std::thread calls std::terminate: `std::bad_alloc` in a worker killed the CLI with SIGABRT (exit
// 134, a core dump) and a Python interpreter with it, where the same input on one thread gave
// "error: out of memory", exit 1, or a MemoryError. A TaskGroup runs callables on threads, catches
// every exception in each, keeps the first, and hands it back to the thread that joins: as a value
// (join(), an Error whose kind and wording follow error_from_exception) at a library boundary, or
// thrown again on the joining thread (join_or_rethrow()) inside a group that another group runs, so
// that the outermost one turns it into a value. Every pool in src/ uses it (docs/development.md,
// "Threads").
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "core/result.h"

namespace scaleprof {

// The error a caught exception stands for: std::bad_alloc is "out of memory" (ErrorKind::kInternal,
// as the CLI's last-resort handler says it on one thread), any other exception its what(), kind
// kInternal. `doing` ("reading the traces") is added to the message when not empty.
Error error_from_exception(const std::exception_ptr& e, std::string_view doing = {});

class TaskGroup {
 public:
  TaskGroup() = default;
  // Joins what is still running; an error nobody asked for is dropped (join() reports it).
  ~TaskGroup();
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;

  // Runs `fn` on a new thread. Where no thread can be started (the address space or the process
  // limit exhausted), `fn` runs at once on the calling thread instead: the work is done either way.
  void spawn(const std::function<void()>& fn);
  // Runs `fn` on a new thread; false, running nothing, where no thread can be started (for a
  // worker that waits on a queue, which must not run on the calling thread).
  bool try_spawn(std::function<void()> fn);
  // Runs `fn` on the calling thread, its exception kept like a spawned one's.
  void run_here(const std::function<void()>& fn);
  // Runs `worker` on `threads` threads in all, the calling thread among them (`threads` 0 or 1: on
  // the calling thread alone). Workers that take items off a shared counter should stop taking
  // them once failed() is true.
  void run_on(unsigned threads, const std::function<void()>& worker);

  // True once any callable of the group has thrown: the others may stop early.
  bool failed() const { return failed_.load(std::memory_order_relaxed); }

  // Waits for every thread and returns the first exception as an error value
  // (error_from_exception(e, doing)); Ok when none threw.
  Status join(std::string_view doing = {});
  // Waits for every thread and throws the first exception again on the calling thread.
  void join_or_rethrow();

 private:
  void keep(std::exception_ptr e);
  void wait_all();

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::exception_ptr first_;
  std::atomic<bool> failed_{false};
};

}  // namespace scaleprof

#include "core/task_group.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <new>
#include <string>
#include <system_error>
#include <utility>

namespace scaleprof {

Error error_from_exception(const std::exception_ptr& e, std::string_view doing) {
  std::string what = "unexpected internal failure";
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    what = "out of memory";
  } catch (const std::exception& ex) {
    what = ex.what();
  } catch (...) {
  }
  if (!doing.empty()) {
    what += " while ";
    what += doing;
  }
  return Error{std::move(what), ErrorKind::kInternal};
}

TaskGroup::~TaskGroup() {
  wait_all();
}

void TaskGroup::keep(std::exception_ptr e) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!first_) first_ = std::move(e);
  failed_.store(true, std::memory_order_relaxed);
}

void TaskGroup::run_here(const std::function<void()>& fn) {
  try {
    fn();
  } catch (...) {
    keep(std::current_exception());
  }
}

namespace {

// Whether the address-space limit (RLIMIT_AS: `prlimit --as`, `ulimit -v`, resource.setrlimit) leaves
// room for one more thread: its stack and a malloc arena of its own (64 MiB of address space on a
// 64-bit glibc), with 1 MiB to spare. A thread started without that room ends the whole process
// (below); run on the calling thread instead, the work fails, if it must, as an error value.
bool room_for_a_thread() {
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY) return true;
  rlimit stack{};
  uint64_t stack_bytes = 8ULL << 20;  // glibc's default when the stack limit says nothing usable
  if (getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY && stack.rlim_cur > 0) {
    stack_bytes = std::min<uint64_t>(stack.rlim_cur, 1ULL << 30);
  }
  const uint64_t needed = stack_bytes + (64ULL << 20) + (1ULL << 20);
  // The address space in use: the first field of /proc/self/statm, in pages.
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return true;  // cannot tell: as before the check
  unsigned long long pages = 0;
  const bool read = std::fscanf(f, "%llu", &pages) == 1;
  std::fclose(f);
  if (!read) return true;
  const long page = sysconf(_SC_PAGESIZE);
  const uint64_t used = pages * static_cast<uint64_t>(page > 0 ? page : 4096);
  return as.rlim_cur > used && as.rlim_cur - used >= needed;
}

}  // namespace

bool TaskGroup::try_spawn(std::function<void()> fn) {
  // glibc gives a thread of a dlopen()ed library (the Python module's libstdc++) its thread-local
  // storage on first use and ends the process when it cannot ("cannot allocate memory for
  // thread-local data: ABORT", exit 127): seen under RLIMIT_AS with 4 threads, where the thread's
  // stack still fit but nothing after it. Such a thread is not started.
  if (!room_for_a_thread()) return false;
  try {
    threads_.reserve(threads_.size() + 1);
    // The next thread's room is checked only once this one holds its own: started back to back, the
    // threads of one run_on all passed the check before any had taken its malloc arena, and the last
    // one then found no room for its thread-local data (exit 127 under RLIMIT_AS with 4 threads, seen
    // once in a loaded fresh-clone CI run).
    std::promise<void> settled;
    std::future<void> started = settled.get_future();
    threads_.emplace_back([this, fn = std::move(fn), settled = std::move(settled)]() mutable {
      // The C++ runtime's per-thread exception state is such thread-local storage (above). Its first
      // use was the throw of std::bad_alloc itself, exactly when memory had run out: touched here, on
      // the thread's first instruction, it is allocated while the room checked for is still there;
      // and a first allocation gives the thread its arena.
      (void)std::uncaught_exceptions();
      std::free(std::malloc(1));
      settled.set_value();
      run_here(fn);
    });
    started.wait();
    return true;
  } catch (const std::system_error&) {
    return false;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

void TaskGroup::spawn(const std::function<void()>& fn) {
  // `fn` is kept (copied) for the thread only once the thread is sure to start, so it is still here.
  if (!try_spawn(fn)) run_here(fn);  // no thread to be had: the work is still done, here
}

void TaskGroup::run_on(unsigned threads, const std::function<void()>& worker) {
  for (unsigned t = 1; t < threads; ++t) spawn(worker);
  run_here(worker);
}

void TaskGroup::wait_all() {
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

Status TaskGroup::join(std::string_view doing) {
  wait_all();
  if (first_) return error_from_exception(first_, doing);
  return Ok{};
}

void TaskGroup::join_or_rethrow() {
  wait_all();
  if (first_) std::rethrow_exception(first_);
}

}  // namespace scaleprof

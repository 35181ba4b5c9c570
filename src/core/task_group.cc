#include "core/task_group.h"

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

bool TaskGroup::try_spawn(std::function<void()> fn) {
  try {
    threads_.reserve(threads_.size() + 1);
    threads_.emplace_back([this, fn = std::move(fn)] { run_here(fn); });
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

#include "trace/window_workers.h"

#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <utility>

namespace scaleprof::trace {

void reserve_parser(od::parser& parser, size_t size) {
  if (parser.capacity() >= size) return;
  // A failure here is met again, and reported, by iterate().
  const simdjson::error_code ignored = parser.allocate(std::bit_ceil(size));
  (void)ignored;
}

ParsedWindow parse_window(std::string_view path, od::parser& parser, WindowText window) {
  ParsedWindow out;
  out.part = std::move(window.part);
  out.rank_ids = std::move(window.rank_ids);
  const char* start = window.text.data() + window.begin;
  reserve_parser(parser, window.size);
  // The part's columns sized for the window (a reused part's usually are), not regrown from empty.
  reserve_event_rows(window.size, &out.part);
  EventImporter importer(path, &out.part);
  importer.set_window(start, window.size, window.offset);
  od::document doc;
  if (!parser.iterate(start, window.size, window.text.size() - window.begin).get(doc)) {
    size_t array_end = 0;
    auto resume = importer.import_window(doc, window.size - 1, &array_end);
    out.ok = resume.ok() && resume.value() == window.size && array_end == window.size;
  }
  out.dropped_warnings = importer.warnings_dropped();
  out.summed = importer.summed();
  out.bytes = window.size;
  out.text = std::move(window.text);
  return out;
}

namespace {

// Maps the pages of `ranges` without writing them (see WindowWorkers::prefault).
void map_pages(const std::vector<std::span<char>>& ranges) {
#if defined(MADV_POPULATE_WRITE)
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (const std::span<char> range : ranges) {
    if (range.empty()) continue;
    // Page-aligned, as madvise wants: the first page may hold rows already written, which mapping
    // leaves as they are.
    char* begin = range.data() - (reinterpret_cast<uintptr_t>(range.data()) & (page - 1));
    const auto length = static_cast<size_t>(range.data() + range.size() - begin);
    // A failure (an older kernel, memory freed meanwhile) only leaves the faults to the merge.
    (void)madvise(begin, length, MADV_POPULATE_WRITE);
  }
#else
  (void)ranges;
#endif
}

}  // namespace

WindowWorkers::WindowWorkers(std::string_view path, unsigned threads) : path_(path) {
  // A thread that cannot be started leaves its windows to the others and the calling thread.
  for (unsigned i = 0; i < threads; ++i) workers_ += threads_.try_spawn([this] { run(); }) ? 1 : 0;
}

WindowWorkers::~WindowWorkers() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  // Each window's exception went to its future (run()); nothing else is left to report.
  (void)threads_.join();
}

std::future<ParsedWindow> WindowWorkers::parse(WindowText window) {
  std::promise<ParsedWindow> result;
  std::future<ParsedWindow> future = result.get_future();
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (workers_ == 0 || jobs_.size() >= backlog()) {
      lock.unlock();
      result.set_value(parse_window(path_, own_parser_, std::move(window)));
      return future;
    }
    jobs_.push_back(Job{std::move(window), std::move(result)});
  }
  cv_.notify_one();
  return future;
}

void WindowWorkers::prefault(std::vector<std::span<char>> ranges) {
  if (workers_ == 0) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    prefault_.insert(prefault_.end(), ranges.begin(), ranges.end());
  }
  cv_.notify_one();
}

bool WindowWorkers::help() {
  Job job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (jobs_.empty()) return false;
    job = std::move(jobs_.front());
    jobs_.pop_front();
  }
  job.result.set_value(parse_window(path_, own_parser_, std::move(job.window)));
  return true;
}

void WindowWorkers::run() {
  od::parser parser;  // one per thread, reused across windows
  while (true) {
    Job job;
    std::vector<std::span<char>> ranges;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !jobs_.empty() || !prefault_.empty(); });
      if (jobs_.empty() && stop_) return;
      if (!prefault_.empty()) {
        ranges.swap(prefault_);
      } else {
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
    }
    if (!ranges.empty()) {
      map_pages(ranges);
      continue;
    }
    // An exception (out of memory) goes to the window's future, thrown again on the thread that
    // merges it, inside the reading pool's TaskGroup: this worker goes on with the next window.
    try {
      job.result.set_value(parse_window(path_, parser, std::move(job.window)));
    } catch (...) {
      job.result.set_exception(std::current_exception());
    }
  }
}

}  // namespace scaleprof::trace

// The parallel reader's workers: threads that parse windows of whole events, cut by the streaming
// parser, into tables of their own (RankTrace parts) that the calling thread appends in file order.
#pragma once

#include <simdjson.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <future>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "core/task_group.h"
#include "trace/event_importer.h"
#include "trace/event_table.h"

namespace scaleprof::trace {

// Makes `parser` hold windows of `size` bytes, growing its buffers to a power of two: simdjson
// otherwise reallocates them for every window a few bytes longer than the last, and freeing those
// multi-MB blocks raises glibc's mmap threshold, so later window buffers stay on the heap after
// use (issue 12: peak memory). Only the pages a window uses are touched.
void reserve_parser(od::parser& parser, size_t size);

// One window of whole events for a parsing thread: `text[begin, begin + size)` is `[e1,...,en]`,
// followed inside `text` by simdjson's padding, zeroed as a padded string's (On-Demand reads its
// first byte). The buffer is the one the window was inflated into, handed over rather than copied.
struct WindowText {
  std::vector<char> text;
  size_t begin = 0;
  size_t size = 0;
  uint64_t offset = 0;  // file offset of text[begin]
  // The part to fill: one handed back after merging, emptied by clear_for_reuse (its columns keep
  // their capacity), or a new one.
  RankTrace part;
  std::vector<StringId> rank_ids;  // see EventImporter::append_part
};

// What a thread made of one window.
struct ParsedWindow {
  RankTrace part;                  // WindowText::part, filled
  std::vector<StringId> rank_ids;  // WindowText::rank_ids
  // The window's buffer, handed back to be filled again.
  std::vector<char> text;
  size_t dropped_warnings = 0;
  size_t bytes = 0;  // of the window's JSON
  Summed summed;
  bool ok = false;  // every byte was whole events and the array closed exactly at the window's end
};

// Parses one window on the calling thread with `parser`.
ParsedWindow parse_window(std::string_view path, od::parser& parser, WindowText window);

// Threads that parse windows of one file beside the calling thread. Results come back as futures
// in the order the windows were given.
class WindowWorkers {
 public:
  WindowWorkers(std::string_view path, unsigned threads);
  ~WindowWorkers();
  WindowWorkers(const WindowWorkers&) = delete;
  WindowWorkers& operator=(const WindowWorkers&) = delete;

  // Parses `window` on a worker, or on the calling thread at once when the workers already have
  // enough windows waiting to stay busy meanwhile: the calling thread then parses the text it has
  // just inflated, still in its cache, and never sits waiting on a worker while a core idles.
  std::future<ParsedWindow> parse(WindowText window);

  // Parses the oldest waiting window on the calling thread, rather than have it wait for a worker to
  // reach it. False when none is waiting.
  bool help();

  // Has a worker map `ranges` (memory reserved, not yet written: the rank's columns past their
  // rows) before it takes its next window, so that the calling thread, merging the next windows'
  // rows into them, does not take a page fault for each 4 KiB it writes first: page faults were
  // 60 % of the merge's perf samples, and the merge 61-67 ms of the calling thread's CPU time on a
  // 474 MB trace with two threads (39-45 ms with this). Only pages are mapped, no byte is written:
  // the calling thread may write the same memory meanwhile, or free it. Without workers, or where
  // the kernel cannot (MADV_POPULATE_WRITE, Linux 5.14), nothing happens and the merge takes the
  // faults itself.
  void prefault(std::vector<std::span<char>> ranges);

 private:
  struct Job {
    WindowText window;
    std::promise<ParsedWindow> result;
  };
  // Windows waiting per worker before the calling thread parses one itself: two keep a worker busy
  // for longer than the calling thread takes to parse one and inflate the next.
  size_t backlog() const { return 2 * workers_; }

  void run();

  std::string_view path_;
  od::parser own_parser_;  // the calling thread's
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  std::vector<std::span<char>> prefault_;
  bool stop_ = false;
  size_t workers_ = 0;  // threads started
  TaskGroup threads_;   // last: joined first, before what the threads use goes
};

}  // namespace scaleprof::trace

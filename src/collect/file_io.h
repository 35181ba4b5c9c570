// The two ways scaleprof writes a run directory (docs/run-directory.md, "Rules every writer follows").
#pragma once

#include <string>

#include "core/result.h"

namespace scaleprof::collect {

// Replaces `path` with `text` atomically: writes "<path>.tmp", then rename()s it over `path`, so a
// reader (or a crash) sees the old file or the new one, never half of one.
Status replace_file(const std::string& path, const std::string& text);

// Creates `path` and its parents; "exists already" is fine.
Status make_directories(const std::string& path);

// An append-only CSV file. Each record is one write() of a whole line with O_APPEND, which reaches the
// kernel at once: a crash or kill -9 of this process loses at most the line being written, and no
// user-space buffer is ever lost. No fsync per record (that would cost milliseconds on NFS/Lustre);
// a machine that loses power may lose the last seconds.
class CsvAppender {
 public:
  CsvAppender() = default;
  CsvAppender(const CsvAppender&) = delete;
  CsvAppender& operator=(const CsvAppender&) = delete;
  CsvAppender(CsvAppender&& other) noexcept;
  CsvAppender& operator=(CsvAppender&& other) noexcept;
  ~CsvAppender();

  // Opens (creating when missing) and writes `header` when the file is empty.
  static Result<CsvAppender> open(const std::string& path, const std::string& header);

  // Appends `lines` (one or more whole lines, each ending in '\n') with one write().
  Status append(const std::string& lines);
  const std::string& path() const { return path_; }
  bool is_open() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace scaleprof::collect

// The ways scaleprof writes a run directory (docs/run-directory.md, "Rules every writer follows").
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/result.h"

namespace scaleprof {

// Replaces `path` with `text` atomically through the one output-file writer (core/output_file.h):
// a reader (or a crash) sees the old file or the new one, never half of one, and a file planted at
// a guessable temporary name is never followed. Only for files this process owns (claimed with
// create_new_file).
Status replace_file(const std::string& path, const std::string& text);

// Creates `path` with `text` only if nothing exists there yet (O_CREAT|O_EXCL, no symlink followed):
// the one atomic claim of a file. Returns false, touching nothing, when `path` exists already, so of
// any number of processes starting at once exactly one gets true.
Result<bool> create_new_file(const std::string& path, const std::string& text);

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

  // Appends `lines` (one or more whole lines, each ending in '\n') with one write(). When the write
  // fails part way (a full disk, a file size limit), the fragment is truncated away, so the file
  // still ends with a whole line and the next record is not glued to half of this one.
  Status append(const std::string& lines);
  const std::string& path() const { return path_; }
  bool is_open() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  std::string path_;
};

// A CSV file of metrics that never fails its caller: the policy "monitoring never kills training".
// A write that fails is counted, reported once on `messages` (and once more when writing works
// again), and its lines are kept (up to kMaxPendingBytes) and written before the next record, so a
// disk that fills up and is freed again loses nothing. The file is opened on the first record, and
// reopened after a failure.
class MetricsFile {
 public:
  static constexpr size_t kMaxPendingBytes = size_t{8} << 20;

  MetricsFile() = default;
  MetricsFile(std::string path, std::string header, FILE* messages)
      : path_(std::move(path)), header_(std::move(header)), messages_(messages) {}

  // Writes what earlier failures kept, then `lines`. Returns whether everything is on disk now.
  bool append(const std::string& lines);

  const std::string& path() const { return path_; }
  bool is_open() const { return csv_.is_open(); }
  int64_t failed_writes() const { return failed_writes_; }
  int64_t lost_bytes() const { return lost_bytes_; }             // dropped once kMaxPendingBytes was kept
  const std::string& last_error() const { return last_error_; }  // "" when no write ever failed
  size_t pending_bytes() const { return pending_.size(); }

 private:
  std::string path_;
  std::string header_;
  FILE* messages_ = stderr;
  CsvAppender csv_;
  std::string pending_;
  int64_t failed_writes_ = 0;
  int64_t lost_bytes_ = 0;
  bool failing_ = false;
  std::string last_error_;
};

}  // namespace scaleprof

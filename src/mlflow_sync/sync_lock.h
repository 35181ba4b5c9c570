// One `scaleprof mlflow sync` at a time per root and server. Two syncs of one root started together
// would each find a run missing on the server and each create it (MLflow has no "create if absent"),
// so every run and point would be there twice. The lock is flock(2) on
// <root>/.scaleprof-sync/<host>_<port>.lock, beside the progress record: held for the whole sync,
// released by the kernel when the process ends in any way (a kill -9 included), so a stale lock
// never blocks anyone. The file holds the holder's pid, host and start time, for the message a
// second sync prints, and is removed when the sync ends (with its folder, when the lock made it and
// it is empty), so a sync that failed leaves the root as it found it.
#pragma once

#include <string>

#include "core/result.h"

namespace scaleprof::mlflow_sync {

class SyncLock {
 public:
  SyncLock() = default;
  SyncLock(const SyncLock&) = delete;
  SyncLock& operator=(const SyncLock&) = delete;
  SyncLock(SyncLock&& other) noexcept
      : fd_(other.fd_),
        path_(std::move(other.path_)),
        holder_(std::move(other.holder_)),
        made_dir_(std::move(other.made_dir_)) {
    other.fd_ = -1;
    other.made_dir_.clear();
  }
  SyncLock& operator=(SyncLock&& other) noexcept;
  ~SyncLock();

  bool held() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  // When not held: who holds it, as its file says ("pid 123 on login1 since 2026-11-25 20:40:00 UTC").
  const std::string& holder() const { return holder_; }

  // Takes the lock at `path` (creating the file and its folder when missing; a symbolic link there is
  // refused). `wait`: block until the holder ends; else return at once, not held, with holder() set.
  static Result<SyncLock> acquire(const std::string& path, bool wait);

 private:
  void release();

  int fd_ = -1;
  std::string path_;
  std::string holder_;
  std::string made_dir_;  // the folder this lock created ("" when it existed), removed when empty
};

// <root>/.scaleprof-sync/<host>_<port>.lock: one lock per root and server.
std::string default_lock_path(const std::string& root, const std::string& server_url);

}  // namespace scaleprof::mlflow_sync

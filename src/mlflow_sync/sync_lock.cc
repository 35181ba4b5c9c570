#include "mlflow_sync/sync_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "mlflow_sync/sync_progress.h"

namespace scaleprof::mlflow_sync {

namespace {

namespace fs = std::filesystem;

std::string holder_text() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return fmt::format("pid {} on {} since {}", ::getpid(), host[0] != '\0' ? host : "?", stamp);
}

// What the holder wrote: one short line of printable ASCII (anything else is not shown).
std::string read_holder(int fd) {
  char buffer[200] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  std::string out;
  for (ssize_t i = 0; i < n; ++i) {
    const char c = buffer[i];
    if (c == '\n') break;
    if (c < 0x20 || c > 0x7e) return {};
    out += c;
  }
  return out;
}

}  // namespace

SyncLock& SyncLock::operator=(SyncLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    holder_ = std::move(other.holder_);
    made_dir_ = std::move(other.made_dir_);
    other.fd_ = -1;
    other.made_dir_.clear();
  }
  return *this;
}

SyncLock::~SyncLock() {
  release();
}

void SyncLock::release() {
  if (fd_ < 0) return;
  // Removed while still held, so a root a failed sync touched is as it was (no stray file): a sync
  // that opened the old file meanwhile finds, once it holds it, that it is no longer at the path,
  // and starts over (acquire()). Then the folder, when the lock made it or it is the sync's own
  // state folder, if nothing else is in it (rmdir removes only an empty one).
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
  if (!made_dir_.empty()) ::rmdir(made_dir_.c_str());
  made_dir_.clear();
}

Result<SyncLock> SyncLock::acquire(const std::string& path, bool wait) {
  const fs::path parent = fs::path(path).parent_path();
  SyncLock lock;
  lock.path_ = path;
  // A holder removes the file when it is done (~SyncLock); whoever opened it before then holds a
  // file no longer at `path` and starts over. Bounded: each round means another sync ended.
  for (int round = 0; round < 10000; ++round) {
    std::error_code ec;
    bool made = false;
    if (!parent.empty()) made = fs::create_directories(parent, ec);
    if (ec) return Error{fmt::format("{}: cannot create: {}", parent.string(), ec.message()), ErrorKind::kIo};
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int err = errno;
      if (err == ENOENT) continue;  // the folder went with another sync's end: make it again
      if (err == ELOOP)
        return Error{fmt::format("{}: a symbolic link; the sync lock is not taken through it", path),
                     ErrorKind::kRefused};
      return Error{fmt::format("{}: cannot open the sync lock: {}", path, std::strerror(err)), ErrorKind::kIo};
    }
    int rc = 0;
    do {
      rc = ::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      const int err = errno;
      if (err == EWOULDBLOCK) {
        lock.holder_ = read_holder(fd);
        if (lock.holder_.empty()) lock.holder_ = "another process";
        ::close(fd);
        return lock;
      }
      ::close(fd);
      return Error{fmt::format("{}: cannot take the sync lock: {}", path, std::strerror(err)), ErrorKind::kIo};
    }
    struct stat held {};
    struct stat now {};
    if (::fstat(fd, &held) != 0 || ::lstat(path.c_str(), &now) != 0 || held.st_ino != now.st_ino ||
        held.st_dev != now.st_dev) {
      ::close(fd);  // removed by the sync that held it: take the lock on the file now at `path`
      continue;
    }
    lock.fd_ = fd;
    if (made || parent.filename() == kStateDir) lock.made_dir_ = parent.string();
    break;
  }
  if (lock.fd_ < 0)
    return Error{fmt::format("{}: cannot take the sync lock: it keeps being replaced", path), ErrorKind::kIo};
  // Who holds it, for a second sync's message; a failure to write this is not a failure to lock.
  const std::string text = holder_text() + "\n";
  if (::ftruncate(lock.fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t written = ::pwrite(lock.fd_, text.data(), text.size(), 0);
  }
  return lock;
}

std::string default_lock_path(const std::string& root, const std::string& server_url) {
  std::string path = default_progress_path(root, server_url);
  if (path.ends_with(".json")) path.resize(path.size() - 5);
  return path + ".lock";
}

}  // namespace scaleprof::mlflow_sync

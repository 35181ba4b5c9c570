#include "mlflow_sync/sync_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
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
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    holder_ = std::move(other.holder_);
    other.fd_ = -1;
  }
  return *this;
}

SyncLock::~SyncLock() {
  // Closing releases the flock; the file stays (removing it would race with a sync opening it).
  if (fd_ >= 0) ::close(fd_);
}

Result<SyncLock> SyncLock::acquire(const std::string& path, bool wait) {
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) return Error{fmt::format("{}: cannot create: {}", parent.string(), ec.message())};
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) return Error{fmt::format("{}: a symbolic link; the sync lock is not taken through it", path)};
    return Error{fmt::format("{}: cannot open the sync lock: {}", path, std::strerror(err))};
  }
  SyncLock lock;
  lock.path_ = path;
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
    return Error{fmt::format("{}: cannot take the sync lock: {}", path, std::strerror(err))};
  }
  lock.fd_ = fd;
  // Who holds it, for a second sync's message; a failure to write this is not a failure to lock.
  const std::string text = holder_text() + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t written = ::pwrite(fd, text.data(), text.size(), 0);
  }
  return lock;
}

std::string default_lock_path(const std::string& root, const std::string& server_url) {
  std::string path = default_progress_path(root, server_url);
  if (path.ends_with(".json")) path.resize(path.size() - 5);
  return path + ".lock";
}

}  // namespace scaleprof::mlflow_sync

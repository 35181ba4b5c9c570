#include "collect/run_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace scaleprof::collect {

RunFile& RunFile::operator=(RunFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

RunFile::~RunFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string RunFile::proc_path() const {
  return fmt::format("/proc/self/fd/{}", fd_);
}

Result<RunFile> open_run_file(const std::string& path) {
  // O_NONBLOCK: a FIFO planted in place of a file must not block the open; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP || (err == EMLINK && is_symlink(path))) {
      return Error{fmt::format("{}: a symbolic link; not followed (skipped)", path), ErrorKind::kRefused};
    }
    return Error{fmt::format("{}: cannot open: {}", path, std::strerror(err)),
                 err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo};
  }
  RunFile file(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return Error{fmt::format("{}: cannot read: {}", path, std::strerror(errno)), ErrorKind::kIo};
  if (!S_ISREG(st.st_mode)) return Error{fmt::format("{}: not a regular file (skipped)", path), ErrorKind::kRefused};
  // Back to blocking reads for a regular file (O_NONBLOCK has no effect on them, but be plain).
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return file;
}

Result<std::string> read_run_file(const std::string& path, size_t max_bytes) {
  auto file = open_run_file(path);
  if (!file) return file.error();
  struct stat st {};
  if (::fstat(file.value().fd(), &st) == 0 && static_cast<uint64_t>(st.st_size) > max_bytes) {
    return Error{
        fmt::format("{}: {} bytes, more than the {} a file of this kind may have", path, st.st_size, max_bytes),
        ErrorKind::kTooLarge};
  }
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(file.value().fd(), buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{fmt::format("{}: cannot read: {}", path, std::strerror(errno)), ErrorKind::kIo};
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      return Error{fmt::format("{}: more than the {} bytes a file of this kind may have", path, max_bytes),
                   ErrorKind::kTooLarge};
    }
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

bool is_symlink(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

bool is_plain_file(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace scaleprof::collect

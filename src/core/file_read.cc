#include "core/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace scaleprof {

FileHandle& FileHandle::operator=(FileHandle&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileHandle::~FileHandle() {
  if (fd_ >= 0) ::close(fd_);
}

int FileHandle::release() {
  return std::exchange(fd_, -1);
}

std::variant<FileHandle, FileReadFailure> open_regular_file(int dir_fd, const std::string& name, bool no_follow) {
  using What = FileReadFailure::What;
  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (no_follow ? O_NOFOLLOW : 0);
  FileHandle file(::openat(dir_fd, name.c_str(), flags));
  if (file.fd() < 0) {
    const int err = errno;
    if (err == ENOENT) return FileReadFailure{What::kMissing, err};
    if (no_follow && err == ELOOP) return FileReadFailure{What::kSymlink, err};
    if (no_follow && err == EMLINK) {  // some systems say EMLINK for O_NOFOLLOW on a link
      struct stat st {};
      if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
        return FileReadFailure{What::kSymlink, err};
      }
    }
    return FileReadFailure{What::kOpen, err};
  }
  struct stat st {};
  if (::fstat(file.fd(), &st) != 0) return FileReadFailure{What::kStat, errno};
  if (!S_ISREG(st.st_mode)) return FileReadFailure{What::kNotRegular};
  // Back to blocking reads (O_NONBLOCK has no effect on a regular file, but be plain).
  const int status = ::fcntl(file.fd(), F_GETFL);
  if (status >= 0) ::fcntl(file.fd(), F_SETFL, status & ~O_NONBLOCK);
  return file;
}

std::variant<std::string, FileReadFailure> read_open_file(int fd, size_t max_bytes) {
  using What = FileReadFailure::What;
  struct stat st {};
  size_t expected = 0;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
      return FileReadFailure{What::kTooLarge, 0, static_cast<uint64_t>(st.st_size)};
    }
    expected = static_cast<size_t>(st.st_size);
  }
  std::string text;
  text.resize(expected);
  size_t got = 0;
  while (true) {
    // One byte of room past the cap tells a file that grew past it while being read.
    if (got == text.size()) {
      if (text.size() > max_bytes) return FileReadFailure{What::kTooLarge};
      text.resize(std::min(max_bytes + 1, std::max<size_t>(text.size() * 2, 4096)));
    }
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return FileReadFailure{What::kRead, errno};
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > max_bytes) return FileReadFailure{What::kTooLarge};
  text.resize(got);
  return text;
}

std::variant<std::string, FileReadFailure> read_named_file(const std::string& path, size_t max_bytes) {
  FileHandle file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.fd() < 0) {
    const int err = errno;
    return FileReadFailure{err == ENOENT ? FileReadFailure::What::kMissing : FileReadFailure::What::kOpen, err};
  }
  return read_open_file(file.fd(), max_bytes);
}

std::variant<std::string, FileReadFailure> read_regular_file(const std::string& path, size_t max_bytes,
                                                             bool no_follow) {
  auto opened = open_regular_file(AT_FDCWD, path, no_follow);
  if (auto* failure = std::get_if<FileReadFailure>(&opened)) return *failure;
  return read_open_file(std::get<FileHandle>(opened).fd(), max_bytes);
}

}  // namespace scaleprof

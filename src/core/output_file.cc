#include "core/output_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>

#include "core/file_size_signal.h"

namespace scaleprof {

namespace {

Error write_error(std::string_view path, int err) {
  return Error{fmt::format("{}: cannot write: {}", path, std::strerror(err)), ErrorKind::kIo};
}

// Writes all of `text` to `fd`, retrying short writes and interrupted calls. Returns 0 or an errno.
int write_all(int fd, std::string_view text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

// Gathers the produced pieces into blocks of kBlock bytes written to `fd`; the first failed write
// stops the writing and is kept as an errno.
class BlockWriter {
 public:
  explicit BlockWriter(int fd) : fd_(fd) { buffer_.reserve(kBlock); }
  void put(std::string_view text) {
    if (err_ != 0) return;
    if (buffer_.size() + text.size() < kBlock) {
      buffer_ += text;
      return;
    }
    flush();
    if (err_ == 0 && text.size() >= kBlock) {
      err_ = write_all(fd_, text);
    } else {
      buffer_ += text;
    }
  }
  // Writes what is buffered; returns 0 or the errno of the first failed write.
  int finish() {
    flush();
    return err_;
  }

 private:
  static constexpr size_t kBlock = size_t{1} << 16;
  void flush() {
    if (err_ == 0 && !buffer_.empty()) err_ = write_all(fd_, buffer_);
    buffer_.clear();
  }
  int fd_;
  int err_ = 0;
  std::string buffer_;
};

int write_produced(int fd, const std::function<void(const TextSink&)>& produce) {
  BlockWriter writer(fd);
  produce([&writer](std::string_view text) { writer.put(text); });
  return writer.finish();
}

// Writes to a device, pipe or socket without creating or truncating anything.
Status write_straight(const std::string& path, const std::function<void(const TextSink&)>& produce) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return write_error(path, errno);
  struct stat st {};
  int err = 0;
  if (::fstat(fd, &st) != 0) {
    err = errno;
  } else if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
    err = EEXIST;  // swapped for a file between our check and the open: do not write into it
  } else {
    err = write_produced(fd, produce);
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == EEXIST) return Error{fmt::format("{}: cannot write: changed while being opened", path), ErrorKind::kIo};
  if (err != 0) return write_error(path, err);
  return Ok{};
}

std::string random_suffix() {
  unsigned char bytes[8] = {};
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = ::getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  std::string out;
  for (unsigned char b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

// Replaces the regular file (or missing name) `target` via an exclusive temporary file beside it.
// `shown` is the name the user gave, used in messages. `mode` is the permission of the file replaced
// (or -1 for a new file: the default 0666 less the umask).
Status replace_regular(const std::string& target, const std::string& shown,
                       const std::function<void(const TextSink&)>& produce, int mode) {
  const size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : target.substr(0, slash + 1);
  // The temporary name must fit NAME_MAX (255) with its 22 added characters.
  const std::string base = (slash == std::string::npos ? target : target.substr(slash + 1)).substr(0, 200);
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp = fmt::format("{}.{}.{}.tmp", dir, base, random_suffix());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) return write_error(shown, errno);
  }
  if (fd < 0) return write_error(shown, EEXIST);
  int err = write_produced(fd, produce);
  if (err == 0 && mode >= 0 && ::fchmod(fd, static_cast<mode_t>(mode)) != 0) err = errno;
  if (err == 0 && ::fsync(fd) != 0 && errno != EINVAL) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), target.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return write_error(shown, err);
  }
  return Ok{};
}

}  // namespace

namespace {

// The pieces go through stdio, which buffers them; the first failed write is kept, the rest are
// dropped, and the stream is flushed once at the end.
Status write_produced_to_stream(FILE* stream, const std::function<void(const TextSink&)>& produce,
                                std::string_view what) {
  int err = 0;
  produce([&err, stream](std::string_view text) {
    if (err != 0) return;
    errno = 0;
    if (std::fwrite(text.data(), 1, text.size(), stream) != text.size()) err = errno != 0 ? errno : EIO;
  });
  errno = 0;
  if (err == 0 && (std::fflush(stream) != 0 || std::ferror(stream) != 0)) err = errno != 0 ? errno : EIO;
  if (err != 0) return write_error(what, err);
  return Ok{};
}

}  // namespace

Status write_stream(FILE* stream, std::string_view text, std::string_view what) {
  const FileSizeSignalBlock no_sigxfsz;  // past `ulimit -f`: an error (EFBIG), not the end of the process
  return write_produced_to_stream(
      stream, [text](const TextSink& put) { put(text); }, what);
}

Status write_output_file(const std::string& path, std::string_view text) {
  return write_output_file(path, [text](const TextSink& put) { put(text); });
}

Status write_output_file(const std::string& path, const std::function<void(const TextSink&)>& produce) {
  const FileSizeSignalBlock no_sigxfsz;  // past `ulimit -f`: an error (EFBIG), not the end of the process
  if (path.empty() || path == "-") return write_produced_to_stream(stdout, produce, "standard output");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return write_error(path, errno);
    return replace_regular(path, path, produce, -1);
  }
  std::string target = path;
  if (S_ISLNK(st.st_mode)) {
    // Follow the link to its final target; a dangling link is refused rather than creating a file
    // wherever it points.
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) {
        return Error{fmt::format("{}: cannot write: a symbolic link to a missing file (refused)", path),
                     ErrorKind::kIo};
      }
      return write_error(path, errno);
    }
    // Devices and pipes are opened through the link (/dev/stdout -> /proc/self/fd/1 -> pipe:[N] has
    // no path to resolve); a regular file is replaced in its own folder, so the link stays a link.
    if (S_ISREG(st.st_mode)) {
      std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr), &std::free);
      if (resolved == nullptr) return write_error(path, errno);
      target = resolved.get();
      if (::lstat(target.c_str(), &st) != 0) return write_error(path, errno);
    }
  }
  if (S_ISREG(st.st_mode)) return replace_regular(target, path, produce, static_cast<int>(st.st_mode & 07777));
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) return write_straight(target, produce);
  if (S_ISDIR(st.st_mode)) return Error{fmt::format("{}: cannot write: is a folder", path), ErrorKind::kIo};
  return Error{fmt::format("{}: cannot write: not a regular file, device or pipe", path), ErrorKind::kIo};
}

Status finish_stdout() {
  std::cout.flush();
  const bool cout_ok = !std::cout.fail();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (!flushed || std::ferror(stdout) != 0 || !cout_ok) {
    // The failing write may have been an earlier one whose errno is gone by now.
    if (errno == 0) return Error{"standard output: cannot write: some output was lost", ErrorKind::kIo};
    return write_error("standard output", errno);
  }
  return Ok{};
}

}  // namespace scaleprof

#include "core/file_io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/file_size_signal.h"
#include "core/output_file.h"
#include "core/terminal_text.h"

namespace scaleprof {

namespace {

// write() until everything is out: a regular file takes a short line whole, but a signal or a full
// disk can cut it, and EINTR must not lose the record.
bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Status replace_file(const std::string& path, const std::string& text) {
  // The one output-file writer: an exclusive, randomly named temporary file, every write checked,
  // synced, renamed over a regular file only; a planted "<path>.tmp" is never opened.
  return write_output_file(path, text);
}

Result<bool> create_new_file(const std::string& path, const std::string& text) {
  const FileSizeSignalBlock no_sigxfsz;  // past `ulimit -f`: EFBIG, never the end of the training
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    return Error{fmt::format("{}: cannot create: {}", path, std::strerror(errno)), ErrorKind::kIo};
  }
  bool ok = write_all(fd, text.data(), text.size());
  int saved = errno;
  if (::close(fd) != 0 && ok) ok = false, saved = errno;
  if (!ok) {
    // The claim stands (the file is ours); a reader sees an unreadable file, never another run's.
    return Error{fmt::format("{}: cannot write: {}", path, std::strerror(saved)), ErrorKind::kIo};
  }
  return true;
}

Status make_directories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return Error{fmt::format("{}: cannot create directory: {}", path, ec.message()), ErrorKind::kIo};
  return Ok{};
}

CsvAppender::CsvAppender(CsvAppender&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

CsvAppender& CsvAppender::operator=(CsvAppender&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

CsvAppender::~CsvAppender() {
  if (fd_ >= 0) ::close(fd_);
}

Result<CsvAppender> CsvAppender::open(const std::string& path, const std::string& header) {
  CsvAppender out;
  out.path_ = path;
  out.fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out.fd_ < 0)
    return Error{fmt::format("{}: cannot open for appending: {}", path, std::strerror(errno)), ErrorKind::kIo};
  struct stat st {};
  if (::fstat(out.fd_, &st) != 0)
    return Error{fmt::format("{}: cannot stat: {}", path, std::strerror(errno)), ErrorKind::kIo};
  if (st.st_size == 0) {
    if (Status s = out.append(header + "\n"); !s) return s.error();
  }
  return out;
}

Status CsvAppender::append(const std::string& lines) {
  if (fd_ < 0) return Error{fmt::format("{}: not open", path_), ErrorKind::kInternal};
  const FileSizeSignalBlock no_sigxfsz;  // past `ulimit -f`: EFBIG, counted; never the end of the training
  // One process appends to each file (the rank folders are claimed exclusively), so the end before
  // the write is where a failed write's fragment starts.
  const off_t before = ::lseek(fd_, 0, SEEK_END);
  if (!write_all(fd_, lines.data(), lines.size())) {
    const int saved = errno;
    if (before >= 0) (void)!::ftruncate(fd_, before);
    return Error{fmt::format("{}: cannot append: {}", path_, std::strerror(saved)), ErrorKind::kIo};
  }
  return Ok{};
}

bool MetricsFile::append(const std::string& lines) {
  const bool kept = !pending_.empty();
  if (kept) pending_ += lines;
  const std::string& out = kept ? pending_ : lines;
  Status written = Ok{};
  if (!csv_.is_open()) {
    auto opened = CsvAppender::open(path_, header_);
    if (opened) {
      csv_ = std::move(opened.value());
    } else {
      written = opened.error();
    }
  }
  if (csv_.is_open()) written = csv_.append(out);
  if (written) {
    if (failing_) {
      const FileSizeSignalBlock no_sigxfsz;  // stderr may be a file under the same limit
      print_message(
          messages_, "scaleprof",
          fmt::format("{}: writing works again after {} failed write(s); kept records written", path_, failed_writes_));
      std::fflush(messages_);
    }
    failing_ = false;
    pending_.clear();
    return true;
  }
  ++failed_writes_;
  last_error_ = written.error().message;
  if (!failing_) {
    const FileSizeSignalBlock no_sigxfsz;  // stderr may be a file under the same limit
    print_message(messages_, "scaleprof",
                  fmt::format("{}; training continues, the records are kept in memory and written at the next "
                              "record (reported once)",
                              last_error_));
    std::fflush(messages_);
  }
  failing_ = true;
  if (!kept) pending_ = lines;
  if (pending_.size() > kMaxPendingBytes) {
    // Keep the newest whole lines within the bound.
    size_t cut = pending_.find('\n', pending_.size() - kMaxPendingBytes);
    cut = cut == std::string::npos ? pending_.size() : cut + 1;
    lost_bytes_ += static_cast<int64_t>(cut);
    pending_.erase(0, cut);
  }
  return false;
}

}  // namespace scaleprof

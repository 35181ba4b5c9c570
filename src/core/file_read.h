// The one way scaleprof reads a whole file: every reader of a file that may sit in a shared space
// (run folders, MLflow file stores: collect/run_file.h and core/file_below.h, which used to have a
// copy each) and every reader of a file the user names (configurations, shards, itwinai's CSVs)
// opens and reads it here.
//
// A file is opened with O_NONBLOCK (a FIFO planted in place of a file cannot block the open) and
// must be a regular file; with `no_follow` a symbolic link as its last component is refused, never
// followed. Every read is capped: a file larger than the cap (by its size, or by what it grows to
// while being read) is refused, never a giant allocation. The failures come back as values, for the
// caller to word: each reader names its file and says why in its own terms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

namespace scaleprof {

// An open file descriptor, closed on destruction.
class FileHandle {
 public:
  FileHandle() = default;
  explicit FileHandle(int fd) : fd_(fd) {}
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  FileHandle(FileHandle&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileHandle& operator=(FileHandle&& other) noexcept;
  ~FileHandle();

  int fd() const { return fd_; }
  int release();  // gives the descriptor up: the caller closes it

 private:
  int fd_ = -1;
};

struct FileReadFailure {
  enum class What {
    kMissing,     // no such file (ENOENT)
    kSymlink,     // a symbolic link, with no_follow
    kNotRegular,  // a folder, FIFO, device or socket
    kOpen,        // open failed otherwise (error: errno)
    kStat,        // fstat failed (error: errno)
    kTooLarge,    // larger than the cap (size: what fstat said; 0 when it grew past the cap while read)
    kRead,        // read failed (error: errno)
  };
  What what = What::kOpen;
  int error = 0;
  uint64_t size = 0;
};

// Opens `name` (relative to the folder open on `dir_fd`, or AT_FDCWD for a path) for reading, as
// above; the descriptor is back to blocking reads.
std::variant<FileHandle, FileReadFailure> open_regular_file(int dir_fd, const std::string& name, bool no_follow);

// Reads the file open on `fd` from where it is to its end, at most `max_bytes`.
std::variant<std::string, FileReadFailure> read_open_file(int fd, size_t max_bytes);

// Both: the whole regular file at `path`.
std::variant<std::string, FileReadFailure> read_regular_file(const std::string& path, size_t max_bytes, bool no_follow);

// The whole file at `path` as the user named it: links followed, and any file that can be read to
// its end (a pipe such as bash's `<(...)` included), at most `max_bytes`. For the files a command
// line names (configurations, shards, CSV folders given with --root).
std::variant<std::string, FileReadFailure> read_named_file(const std::string& path, size_t max_bytes);

}  // namespace scaleprof

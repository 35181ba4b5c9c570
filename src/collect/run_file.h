// Reading the files below a run folder without following a symbolic link: the one way every reader
// of run directories (importers/run_reader.h) and `scaleprof mlflow sync` (its uploads) open them.
//
// A run folder is often group-writable on a shared file system; a member of the group could plant
// `rank-00000/gpu.csv -> ~colleague/.netrc`, and the colleague's next report or sync would read (and
// publish) that file. So the last component is opened with O_NOFOLLOW and must be a regular file,
// and folders below the run folder are listed with lstat (a link to a folder is not walked). A link
// is skipped with a message naming it; the rest of the run is still read. Above the run folder (the
// root, an experiment folder) links are followed as usual: that is where users put them on purpose.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "core/file_read.h"
#include "core/result.h"

namespace scaleprof::collect {

// An open file descriptor, closed on destruction (core/file_read.h's, which opens and reads it).
class RunFile : public FileHandle {
 public:
  using FileHandle::FileHandle;
  explicit RunFile(FileHandle file) : FileHandle(std::move(file)) {}

  // "/proc/self/fd/N": the file as opened, for an API that takes a path (a link planted at the
  // original path after the open is not followed through this name).
  std::string proc_path() const;
};

// Opens `path` for reading: a symbolic link (even one to a regular file) or anything but a regular
// file is an error naming `path` ("...: a symbolic link; not followed").
Result<RunFile> open_run_file(const std::string& path);

// The whole file, opened as above; larger than `max_bytes` is an error naming it.
Result<std::string> read_run_file(const std::string& path, size_t max_bytes);

// Whether `path` is a symbolic link (lstat; false when it does not exist).
bool is_symlink(const std::string& path);

// Whether `path` is a regular file, not through a symbolic link (lstat).
bool is_plain_file(const std::string& path);

}  // namespace scaleprof::collect

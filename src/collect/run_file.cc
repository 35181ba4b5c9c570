#include "collect/run_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace scaleprof::collect {

std::string RunFile::proc_path() const {
  return fmt::format("/proc/self/fd/{}", fd());
}

namespace {

// The messages of a run folder's reader (a refused file is "(skipped)": the rest of the run is read).
Error run_file_error(const std::string& path, const FileReadFailure& failure, size_t max_bytes) {
  using What = FileReadFailure::What;
  switch (failure.what) {
    case What::kSymlink:
      return Error{fmt::format("{}: a symbolic link; not followed (skipped)", path), ErrorKind::kRefused};
    case What::kNotRegular:
      return Error{fmt::format("{}: not a regular file (skipped)", path), ErrorKind::kRefused};
    case What::kMissing:
    case What::kOpen:
      return Error{fmt::format("{}: cannot open: {}", path, std::strerror(failure.error)),
                   failure.what == What::kMissing ? ErrorKind::kNotFound : ErrorKind::kIo};
    case What::kTooLarge:
      if (failure.size > 0) {
        return Error{
            fmt::format("{}: {} bytes, more than the {} a file of this kind may have", path, failure.size, max_bytes),
            ErrorKind::kTooLarge};
      }
      return Error{fmt::format("{}: more than the {} bytes a file of this kind may have", path, max_bytes),
                   ErrorKind::kTooLarge};
    case What::kStat:
    case What::kRead:
      break;
  }
  return Error{fmt::format("{}: cannot read: {}", path, std::strerror(failure.error)), ErrorKind::kIo};
}

}  // namespace

Result<RunFile> open_run_file(const std::string& path) {
  auto opened = open_regular_file(AT_FDCWD, path, /*no_follow=*/true);
  if (const auto* failure = std::get_if<FileReadFailure>(&opened)) return run_file_error(path, *failure, 0);
  return RunFile(std::move(std::get<FileHandle>(opened)));
}

Result<std::string> read_run_file(const std::string& path, size_t max_bytes) {
  auto file = open_run_file(path);
  if (!file) return file.error();
  auto text = read_open_file(file.value().fd(), max_bytes);
  if (const auto* failure = std::get_if<FileReadFailure>(&text)) return run_file_error(path, *failure, max_bytes);
  return std::move(std::get<std::string>(text));
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

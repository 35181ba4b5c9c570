#include "core/file_below.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <variant>

#include "core/file_read.h"

namespace scaleprof {

namespace {

using Fd = FileHandle;

std::vector<std::string_view> components(std::string_view relative) {
  std::vector<std::string_view> out;
  while (!relative.empty()) {
    const size_t slash = relative.find('/');
    out.push_back(relative.substr(0, slash));
    if (slash == std::string_view::npos) break;
    relative.remove_prefix(slash + 1);
  }
  return out;
}

std::string joined(const std::string& base, std::string_view relative) {
  if (relative.empty()) return base;
  return base.ends_with('/') ? base + std::string(relative) : base + "/" + std::string(relative);
}

enum class Opened { kOk, kMissing };

// Opens the folder `relative` below `base` (every component without following links) into *out.
Result<Opened> open_folder(const std::string& base, std::string_view relative, Fd* out) {
  Fd dir(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.fd() < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Opened::kMissing;
    return Error{fmt::format("{}: cannot open: {}", base, std::strerror(errno)), ErrorKind::kIo};
  }
  std::string so_far;
  for (std::string_view part : components(relative)) {
    const std::string name(part);
    if (!so_far.empty()) so_far += '/';
    so_far += name;
    struct stat st {};
    if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return Opened::kMissing;
      return Error{fmt::format("{}: cannot read: {}", joined(base, so_far), std::strerror(errno)), ErrorKind::kIo};
    }
    if (S_ISLNK(st.st_mode)) {
      return Error{fmt::format("{}: a symbolic link; not followed", joined(base, so_far)), ErrorKind::kRefused};
    }
    if (!S_ISDIR(st.st_mode)) return Opened::kMissing;
    // O_NOFOLLOW again: a link swapped in after the check is refused, not followed.
    Fd next(::openat(dir.fd(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.fd() < 0) {
      if (errno == ELOOP)
        return Error{fmt::format("{}: a symbolic link; not followed", joined(base, so_far)), ErrorKind::kRefused};
      return Error{fmt::format("{}: cannot open: {}", joined(base, so_far), std::strerror(errno)), ErrorKind::kIo};
    }
    dir = std::move(next);
  }
  *out = std::move(dir);
  return Opened::kOk;
}

}  // namespace

bool is_plain_relative_path(std::string_view relative) {
  if (relative.empty() || relative.front() == '/') return false;
  for (std::string_view part : components(relative)) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

Result<std::optional<std::string>> read_file_below(const std::string& base, std::string_view relative,
                                                   size_t max_bytes) {
  const std::string shown = joined(base, relative);
  if (!is_plain_relative_path(relative))
    return Error{fmt::format("{}: not a plain path below {}", shown, base), ErrorKind::kRefused};
  const size_t slash = relative.rfind('/');
  const std::string_view folder = slash == std::string_view::npos ? std::string_view() : relative.substr(0, slash);
  const std::string name(slash == std::string_view::npos ? relative : relative.substr(slash + 1));
  Fd dir;
  auto opened = open_folder(base, folder, &dir);
  if (!opened) return opened.error();
  if (opened.value() == Opened::kMissing) return std::optional<std::string>{};
  auto file = open_regular_file(dir.fd(), name, /*no_follow=*/true);
  std::variant<std::string, FileReadFailure> text = FileReadFailure{};
  if (const auto* failure = std::get_if<FileReadFailure>(&file)) {
    text = *failure;
  } else {
    text = read_open_file(std::get<FileHandle>(file).fd(), max_bytes);
  }
  if (const auto* failure = std::get_if<FileReadFailure>(&text)) {
    using What = FileReadFailure::What;
    switch (failure->what) {
      case What::kMissing:
        return std::optional<std::string>{};
      case What::kSymlink:
        return Error{fmt::format("{}: a symbolic link; not followed", shown), ErrorKind::kRefused};
      case What::kNotRegular:
      case What::kStat:
        return Error{fmt::format("{}: not a regular file", shown), ErrorKind::kRefused};
      case What::kOpen:
        return Error{fmt::format("{}: cannot open: {}", shown, std::strerror(failure->error)), ErrorKind::kIo};
      case What::kTooLarge:
        return Error{fmt::format("{}: larger than {} bytes; not read", shown, max_bytes), ErrorKind::kTooLarge};
      case What::kRead:
        return Error{fmt::format("{}: read error: {}", shown, std::strerror(failure->error)), ErrorKind::kIo};
    }
  }
  return std::optional<std::string>{std::move(std::get<std::string>(text))};
}

Result<std::optional<std::vector<FolderEntry>>> list_folder_below(const std::string& base, std::string_view relative,
                                                                  size_t max_entries) {
  const std::string shown = joined(base, relative);
  if (!relative.empty() && !is_plain_relative_path(relative)) {
    return Error{fmt::format("{}: not a plain path below {}", shown, base), ErrorKind::kRefused};
  }
  Fd dir;
  auto opened = open_folder(base, relative, &dir);
  if (!opened) return opened.error();
  if (opened.value() == Opened::kMissing) return std::optional<std::vector<FolderEntry>>{};
  const int fd = dir.release();
  DIR* stream = ::fdopendir(fd);
  if (stream == nullptr) {
    ::close(fd);
    return Error{fmt::format("{}: cannot list: {}", shown, std::strerror(errno)), ErrorKind::kIo};
  }
  std::vector<FolderEntry> out;
  Status status = Ok{};
  while (true) {
    errno = 0;
    const dirent* e = ::readdir(stream);
    if (e == nullptr) {
      if (errno != 0) status = Error{fmt::format("{}: cannot list: {}", shown, std::strerror(errno)), ErrorKind::kIo};
      break;
    }
    const std::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    if (out.size() >= max_entries) {
      status = Error{fmt::format("{}: more than {} entries; not read", shown, max_entries), ErrorKind::kTooLarge};
      break;
    }
    FolderEntry entry;
    entry.name = std::string(name);
    struct stat st {};
    if (::fstatat(::dirfd(stream), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      entry.kind = S_ISREG(st.st_mode)   ? FolderEntry::Kind::kFile
                   : S_ISDIR(st.st_mode) ? FolderEntry::Kind::kFolder
                   : S_ISLNK(st.st_mode) ? FolderEntry::Kind::kSymlink
                                         : FolderEntry::Kind::kOther;
    }
    out.push_back(std::move(entry));
  }
  ::closedir(stream);
  if (!status) return status.error();
  std::sort(out.begin(), out.end(), [](const FolderEntry& a, const FolderEntry& b) { return a.name < b.name; });
  return std::optional<std::vector<FolderEntry>>{std::move(out)};
}

}  // namespace scaleprof

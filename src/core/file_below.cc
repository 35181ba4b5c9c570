#include "core/file_below.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace scaleprof {

namespace {

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

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
  if (dir.get() < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Opened::kMissing;
    return Error{fmt::format("{}: cannot open: {}", base, std::strerror(errno))};
  }
  std::string so_far;
  for (std::string_view part : components(relative)) {
    const std::string name(part);
    if (!so_far.empty()) so_far += '/';
    so_far += name;
    struct stat st {};
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return Opened::kMissing;
      return Error{fmt::format("{}: cannot read: {}", joined(base, so_far), std::strerror(errno))};
    }
    if (S_ISLNK(st.st_mode)) {
      return Error{fmt::format("{}: a symbolic link; not followed", joined(base, so_far))};
    }
    if (!S_ISDIR(st.st_mode)) return Opened::kMissing;
    // O_NOFOLLOW again: a link swapped in after the check is refused, not followed.
    Fd next(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) {
      if (errno == ELOOP) return Error{fmt::format("{}: a symbolic link; not followed", joined(base, so_far))};
      return Error{fmt::format("{}: cannot open: {}", joined(base, so_far), std::strerror(errno))};
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
  if (!is_plain_relative_path(relative)) return Error{fmt::format("{}: not a plain path below {}", shown, base)};
  const size_t slash = relative.rfind('/');
  const std::string_view folder = slash == std::string_view::npos ? std::string_view() : relative.substr(0, slash);
  const std::string name(slash == std::string_view::npos ? relative : relative.substr(slash + 1));
  Fd dir;
  auto opened = open_folder(base, folder, &dir);
  if (!opened) return opened.error();
  if (opened.value() == Opened::kMissing) return std::optional<std::string>{};
  struct stat st {};
  if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return std::optional<std::string>{};
    return Error{fmt::format("{}: cannot read: {}", shown, std::strerror(errno))};
  }
  if (S_ISLNK(st.st_mode)) return Error{fmt::format("{}: a symbolic link; not followed", shown)};
  if (!S_ISREG(st.st_mode)) return Error{fmt::format("{}: not a regular file", shown)};
  Fd file(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (file.get() < 0) {
    if (errno == ELOOP) return Error{fmt::format("{}: a symbolic link; not followed", shown)};
    return Error{fmt::format("{}: cannot open: {}", shown, std::strerror(errno))};
  }
  if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Error{fmt::format("{}: not a regular file", shown)};
  }
  const auto too_large = [&] { return Error{fmt::format("{}: larger than {} bytes; not read", shown, max_bytes)}; };
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return too_large();
  std::string text;
  text.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (true) {
    // One byte of room past the limit tells a file that grew while being read.
    if (got == text.size()) {
      if (text.size() > max_bytes) return too_large();
      text.resize(std::min(max_bytes + 1, std::max<size_t>(text.size() * 2, 4096)));
    }
    const ssize_t n = ::read(file.get(), text.data() + got, text.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{fmt::format("{}: read error: {}", shown, std::strerror(errno))};
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > max_bytes) return too_large();
  text.resize(got);
  return std::optional<std::string>{std::move(text)};
}

Result<std::optional<std::vector<FolderEntry>>> list_folder_below(const std::string& base, std::string_view relative,
                                                                  size_t max_entries) {
  const std::string shown = joined(base, relative);
  if (!relative.empty() && !is_plain_relative_path(relative)) {
    return Error{fmt::format("{}: not a plain path below {}", shown, base)};
  }
  Fd dir;
  auto opened = open_folder(base, relative, &dir);
  if (!opened) return opened.error();
  if (opened.value() == Opened::kMissing) return std::optional<std::vector<FolderEntry>>{};
  const int fd = dir.release();
  DIR* stream = ::fdopendir(fd);
  if (stream == nullptr) {
    ::close(fd);
    return Error{fmt::format("{}: cannot list: {}", shown, std::strerror(errno))};
  }
  std::vector<FolderEntry> out;
  Status status = Ok{};
  while (true) {
    errno = 0;
    const dirent* e = ::readdir(stream);
    if (e == nullptr) {
      if (errno != 0) status = Error{fmt::format("{}: cannot list: {}", shown, std::strerror(errno))};
      break;
    }
    const std::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    if (out.size() >= max_entries) {
      status = Error{fmt::format("{}: more than {} entries; not read", shown, max_entries)};
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

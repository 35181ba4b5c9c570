#include "launch/write_refusal.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace scaleprof::launch {

std::string write_refusal(const std::string& path, bool force, std::string_view if_exists) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? std::string() : fmt::format("{}: cannot check: {}", path, std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) return fmt::format("{} is a symbolic link; not replaced (remove it first)", path);
  if (!S_ISREG(st.st_mode)) return fmt::format("{} exists and is not a regular file", path);
  if (!force) return fmt::format("{} exists already{}", path, if_exists);
  return {};
}

}  // namespace scaleprof::launch

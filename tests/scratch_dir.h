// The one scratch folder of the unit tests: a fresh folder under the system's temporary directory,
// unique to the object (mkdtemp, so parallel ctest processes and several folders in one test never
// share one), removed with everything in it when the object goes.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace scaleprof::testing {

class ScratchDir {
 public:
  // `tag` names the folder ("scaleprof-<tag>-XXXXXX"), so a folder left by a crashed test says whose it is.
  explicit ScratchDir(std::string_view tag = "test") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / ("scaleprof-" + std::string(tag) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& dir() const { return path_; }
  std::string path() const { return path_.string(); }
  // The full path of `rel` inside the folder; nothing is written.
  std::string file(const std::string& rel) const { return (path_ / rel).string(); }
  std::string operator/(const std::string& rel) const { return file(rel); }
  // Writes `bytes` to `rel`, creating its parent folders; returns the full path.
  std::string write(const std::string& rel, std::string_view bytes) const {
    const std::filesystem::path p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace scaleprof::testing

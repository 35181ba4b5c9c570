// Helpers of the collect tests: a private temporary folder, whole-file reads, a fake NVML script.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "scratch_dir.h"

namespace scaleprof::collect::testing {

using TempDir = ::scaleprof::testing::ScratchDir;

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace scaleprof::collect::testing

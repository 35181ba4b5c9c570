// Shared by the trace fuzz targets that run the reports: the input written to a file under /tmp, so
// that the report reads it as users' traces are read (pipeline::stream_report), removed afterwards.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <string_view>

namespace scaleprof::fuzzing {

class TraceFile {
 public:
  explicit TraceFile(std::string_view bytes) {
    char name[] = "/tmp/scaleprof-fuzz-XXXXXX.json";
    const int fd = mkstemps(name, 5);
    if (fd < 0) return;
    size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    ::close(fd);
    path_ = name;
    if (written != bytes.size()) path_.clear();
  }
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  ~TraceFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace scaleprof::fuzzing

#include "trace/trace_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <variant>

#include "core/captured_command.h"
#include "core/file_read.h"
#include "core/sqlite_read.h"
#include "trace/nsys_reader.h"

namespace scaleprof::trace {

namespace fs = std::filesystem;

namespace {

// A folder of our own under TMPDIR, removed with everything in it when this goes.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string pattern = (base / "scaleprof-nsys-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TemporaryFolder() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The first line of a child's message, at most 200 characters, for a one-line error.
std::string first_line(std::string_view text) {
  while (!text.empty() && (text.front() == '\n' || text.front() == '\r' || text.front() == ' ')) text.remove_prefix(1);
  text = text.substr(0, text.find_first_of("\r\n"));
  return std::string(text.substr(0, 200));
}

Result<RankTrace> export_and_read(const std::string& path, std::chrono::seconds deadline) {
  TemporaryFolder folder;
  if (folder.path().empty()) {
    return Error{fmt::format("{}: cannot make a temporary folder for nsys export", path), ErrorKind::kIo};
  }
  const std::string out = folder.path() + "/export.sqlite";
  CaptureLimits limits;
  limits.deadline = deadline;
  limits.max_output_bytes = size_t{1} << 20;
  // A relative name starting with '-' would reach nsys as an option: it goes as ./NAME.
  const std::string input = path.starts_with('-') ? "./" + path : path;
  auto run = run_captured({"nsys", "export", "--type", "sqlite", "--output", out, input}, {}, limits);
  if (!run) {
    if (run.error().kind == ErrorKind::kNotFound) {
      return Error{fmt::format("{}: an Nsight Systems report; reading it needs nsys on PATH to export it (or run `nsys "
                               "export --type sqlite --output FILE.sqlite {}` elsewhere and read the .sqlite)",
                               path, path),
                   ErrorKind::kNotFound};
    }
    return Error{fmt::format("{}: nsys export failed: {}", path, run.error().message), run.error().kind};
  }
  if (run.value().exit_code != 0) {
    return Error{fmt::format("{}: nsys export failed with exit status {}: {}", path, run.value().exit_code,
                             first_line(run.value().err.empty() ? run.value().out : run.value().err))};
  }
  if (detect_trace_format(out) != TraceFormat::kNsysSqlite) {
    return Error{fmt::format("{}: nsys export wrote no SQLite file", path)};
  }
  auto trace = read_nsys_sqlite(out);
  if (!trace) {
    // Name the report, not the temporary file that is gone by now.
    std::string message = trace.error().message;
    if (message.starts_with(out)) message = path + " (exported)" + message.substr(out.size());
    return Error{message, trace.error().kind};
  }
  trace.value().path = path;
  return trace;
}

}  // namespace

bool is_nsys_report_name(std::string_view path) {
  return path.ends_with(".nsys-rep") || path.ends_with(".qdrep");
}

TraceFormat detect_trace_format(const std::string& path) {
  auto opened = open_regular_file(AT_FDCWD, path, /*no_follow=*/false);
  if (auto* fd = std::get_if<FileHandle>(&opened)) {
    std::array<char, 16> head{};
    const ssize_t n = pread(fd->fd(), head.data(), head.size(), 0);
    if (n == static_cast<ssize_t>(head.size()) && has_sqlite_magic(std::string_view(head.data(), head.size()))) {
      return TraceFormat::kNsysSqlite;
    }
  }
  return is_nsys_report_name(path) ? TraceFormat::kNsysReport : TraceFormat::kKineto;
}

Result<RankTrace> read_trace_file(const std::string& path, const ParseOptions& options,
                                  std::chrono::seconds export_deadline) {
  switch (detect_trace_format(path)) {
    case TraceFormat::kNsysSqlite: {
      auto trace = read_nsys_sqlite(path);
      if (trace && options.on_bytes_read) options.on_bytes_read(trace.value().stats.json_bytes);
      return trace;
    }
    case TraceFormat::kNsysReport:
      return export_and_read(path, export_deadline);
    case TraceFormat::kKineto:
      break;
  }
  return read_kineto_trace(path, options);
}

}  // namespace scaleprof::trace

#include "pipeline/critical_path_overlay.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>
#include <system_error>

#include "analysis/path_overlay.h"
#include "trace/trace_overlay.h"

namespace scaleprof::pipeline {

namespace {

std::string overlay_name(const std::string& input) {
  std::string name = std::filesystem::path(input).filename().string();
  if (name.size() > 3 && name.compare(name.size() - 3, 3, ".gz") == 0) name.resize(name.size() - 3);
  return "overlaid_critical_path_" + name;
}

}  // namespace

Result<std::vector<std::string>> write_critical_path_overlays(const engine::RankStore& ranks, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec)) {
    return Error{
        fmt::format("--overlay {}: not a folder that can be made ({})", dir, ec ? ec.message() : "a file is there"),
        ErrorKind::kIo};
  }
  std::multiset<std::string> names;
  ranks->for_each([&](const engine::RankResults& r) {
    if (r.critical_path && !r.critical_path->steps.empty()) names.insert(overlay_name(r.critical_path->path));
  });
  std::vector<std::string> written;
  Status failed = Ok{};
  ranks->for_each([&](const engine::RankResults& r) {
    if (!failed || !r.critical_path || r.critical_path->steps.empty()) return;
    std::string name = overlay_name(r.critical_path->path);
    if (names.count(name) > 1) name = fmt::format("overlaid_critical_path_rank{}_{}", r.rank, name.substr(23));
    const std::string out = (std::filesystem::path(dir) / name).string();
    if (Status s = trace::write_trace_overlay(r.critical_path->path, out,
                                              analysis::critical_path_overlay_spec(*r.critical_path));
        !s) {
      failed = s;
      return;
    }
    written.push_back(out);
  });
  if (!failed) return failed.error();
  return written;
}

}  // namespace scaleprof::pipeline

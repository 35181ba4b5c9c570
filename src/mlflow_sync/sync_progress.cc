#include "mlflow_sync/sync_progress.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "core/credential_redaction.h"
#include "core/json_string.h"
#include "core/output_file.h"

namespace scaleprof::mlflow_sync {

namespace {

namespace fs = std::filesystem;

// A progress file larger than this is not one of ours (a run is about 100 bytes in it).
constexpr size_t kMaxProgressBytes = size_t{256} << 20;

}  // namespace

std::string progress_json(const SyncProgress& progress) {
  std::string out =
      fmt::format("{{\"version\":{},\"server\":{},\"runs\":{{", kProgressVersion, json_quote(progress.server));
  bool first = true;
  for (const auto& [id, run] : progress.runs) {
    out += fmt::format("{}\n{}:{{\"run_id\":{},\"metrics_done\":{},\"complete\":{}}}", first ? "" : ",", json_quote(id),
                       json_quote(run.run_id), run.metrics_done, run.complete);
    first = false;
  }
  return out + "\n}}\n";
}

Result<SyncProgress> parse_progress(std::string_view text, std::string_view what) {
  auto bad = [&](std::string_view why) { return Error{fmt::format("{}: not a sync progress file: {}", what, why)}; };
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(text.data(), text.size()).get(doc) != simdjson::SUCCESS) return bad("invalid JSON");
  simdjson::dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) return bad("not a JSON object");
  int64_t version = 0;
  if (root["version"].get_int64().get(version) != simdjson::SUCCESS || version != kProgressVersion) {
    return bad(fmt::format("version is not {}", kProgressVersion));
  }
  SyncProgress out;
  std::string_view server;
  if (root["server"].get_string().get(server) == simdjson::SUCCESS) out.server = std::string(server);
  simdjson::dom::object runs;
  if (root["runs"].get_object().get(runs) != simdjson::SUCCESS) return bad("no runs object");
  for (auto field : runs) {
    simdjson::dom::object entry;
    std::string_view run_id;
    if (field.value.get_object().get(entry) != simdjson::SUCCESS ||
        entry["run_id"].get_string().get(run_id) != simdjson::SUCCESS || run_id.empty()) {
      return bad("a run entry has no run_id");
    }
    RunProgress p;
    p.run_id = std::string(run_id);
    bool flag = false;
    if (entry["metrics_done"].get_bool().get(flag) == simdjson::SUCCESS) p.metrics_done = flag;
    if (entry["complete"].get_bool().get(flag) == simdjson::SUCCESS) p.complete = flag;
    out.runs[std::string(field.key)] = std::move(p);
  }
  return out;
}

std::string set_aside_name(const std::string& path, int64_t unix_seconds, int n) {
  std::tm tm{};
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
  return n == 0 ? fmt::format("{}.bad-{}", path, stamp) : fmt::format("{}.bad-{}-{}", path, stamp, n);
}

Result<LoadedProgress> load_progress(const std::string& path) {
  LoadedProgress out;
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (!fs::exists(st)) return out;
  std::string why;
  if (!fs::is_regular_file(st)) {
    why = "not a regular file";
  } else {
    const auto size = fs::file_size(path, ec);
    if (ec) return Error{fmt::format("{}: cannot read: {}", path, ec.message()), ErrorKind::kIo};
    if (size > kMaxProgressBytes) {
      why = fmt::format("{} bytes", size);
    } else {
      auto text = simdjson::padded_string::load(path);
      if (text.error() != simdjson::SUCCESS) return Error{fmt::format("{}: cannot read", path), ErrorKind::kIo};
      auto parsed = parse_progress(std::string_view(text.value()), path);
      if (parsed) {
        out.progress = std::move(parsed.value());
        return out;
      }
      why = parsed.error().message;
      const std::string prefix = path + ": not a sync progress file: ";
      if (why.starts_with(prefix)) why = why.substr(prefix.size());
    }
  }
  // Set aside under a name no one has: rename() would replace an existing file, link() does not.
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto cannot_move = [&](int err) {
    return Error{fmt::format("{}: not a sync progress file ({}), and it cannot be moved aside: {}", path, why,
                             std::strerror(err)),
                 ErrorKind::kIo};
  };
  for (int n = 0; n < 1000; ++n) {
    const std::string target = set_aside_name(path, now, n);
    if (::link(path.c_str(), target.c_str()) == 0) {
      if (::unlink(path.c_str()) != 0) return cannot_move(errno);
    } else if (errno == EEXIST) {
      continue;
    } else if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP || errno == ENOSYS) {
      // A file system without hard links: rename, to a name checked to be free (the sync lock is held).
      struct stat taken {};
      if (::lstat(target.c_str(), &taken) == 0) continue;
      if (::rename(path.c_str(), target.c_str()) != 0) return cannot_move(errno);
    } else {
      return cannot_move(errno);
    }
    out.set_aside = target;
    out.problem = fmt::format("{}: not a sync progress file ({}); moved to {} and the record rebuilt from the server",
                              path, why, target);
    return out;
  }
  return Error{fmt::format("{}: not a sync progress file ({}), and no free name to move it to", path, why),
               ErrorKind::kIo};
}

Status save_progress(const std::string& path, const SyncProgress& progress) {
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) return Error{fmt::format("{}: cannot create: {}", parent.string(), ec.message()), ErrorKind::kIo};
  return write_output_file(path, progress_json(progress));
}

std::string default_progress_path(const std::string& root, const std::string& server_url) {
  // host:port of the URL without scheme, user information and path; anything but [A-Za-z0-9.-] -> '_'.
  std::string shown = redact_url(server_url);
  const size_t scheme = shown.find("://");
  std::string host = scheme == std::string::npos ? shown : shown.substr(scheme + 3);
  host = host.substr(0, host.find_first_of("/?#"));
  std::string name;
  for (char c : host) name += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-') ? c : '_';
  if (name.empty() || name.front() == '.') name = "server" + name;
  return (fs::path(root) / kStateDir / (name + ".json")).string();
}

}  // namespace scaleprof::mlflow_sync

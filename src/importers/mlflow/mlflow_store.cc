#include "importers/mlflow/mlflow_store.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>

#include "core/file_below.h"

#include "core/credential_redaction.h"

namespace scaleprof::importers {

namespace fs = std::filesystem;

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int hi = hex_digit(text[i + 1]);
      const int lo = hex_digit(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

// file:///abs, file:/abs and file://localhost/abs name a local path.
std::optional<std::string> file_uri_path(std::string_view uri) {
  if (!uri.starts_with("file:")) return std::nullopt;
  uri.remove_prefix(5);
  if (uri.starts_with("//")) {
    uri.remove_prefix(2);
    if (uri.starts_with("localhost/")) uri.remove_prefix(9);
    if (!uri.starts_with("/")) return std::nullopt;  // file://host/path: another machine
  }
  return percent_decode(uri);
}

// The URI's scheme in lower case ("" when it has none): letters, digits, '+', '-', '.' before ':'.
std::string lower_scheme(std::string_view uri) {
  std::string out;
  for (char c : uri) {
    if (c == ':') return out;
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '+' && c != '-' && c != '.') return {};
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return {};
}

}  // namespace

std::string MlflowStore::redact(std::string_view text) const {
  return redact_credentials(text);
}

Result<TrackingUri> parse_tracking_uri(const std::string& uri) {
  if (uri.empty()) return TrackingUri{TrackingKind::kFileStore, "."};
  // Schemes are case-insensitive (RFC 3986): HTTP://host is a server, as for MLflow and curl.
  const std::string scheme = lower_scheme(uri);
  if (scheme == "http" || scheme == "https") {
    if (uri.compare(scheme.size(), 3, "://") != 0) {
      return Error{
          fmt::format("{}: a server's tracking URI is http://HOST:PORT or https://HOST[:PORT]", redact_url(uri)),
          ErrorKind::kUsage};
    }
    std::string base = uri;
    while (base.ends_with("/")) base.pop_back();
    return TrackingUri{TrackingKind::kServer, base};
  }
  if (uri.starts_with("sqlite:")) {
    // SQLAlchemy form: sqlite:///relative.db, sqlite:////absolute.db.
    std::string_view rest(uri);
    rest.remove_prefix(7);
    if (!rest.starts_with("///")) {
      return Error{fmt::format("{}: a SQLite tracking URI is sqlite:///relative/path.db or sqlite:////abs/path.db",
                               redact_url(uri)),
                   ErrorKind::kUsage};
    }
    rest.remove_prefix(3);
    const size_t query = rest.find('?');
    if (query != std::string_view::npos) rest = rest.substr(0, query);
    if (rest.empty()) return Error{fmt::format("{}: no database file in the URI", redact_url(uri)), ErrorKind::kUsage};
    return TrackingUri{TrackingKind::kSqlite, percent_decode(rest)};
  }
  if (uri.starts_with("file:")) {
    auto path = file_uri_path(uri);
    if (!path)
      return Error{fmt::format("{}: file URIs must name a local path (file:///abs/dir)", redact_url(uri)),
                   ErrorKind::kUsage};
    return TrackingUri{TrackingKind::kFileStore, *path};
  }
  const size_t colon = uri.find("://");
  if (colon != std::string::npos) {
    return Error{
        fmt::format(
            "{}: unsupported tracking URI scheme '{}' (use http(s)://, sqlite:///path.db, file:///dir or a folder)",
            redact_url(uri), redact_url(uri.substr(0, colon))),
        ErrorKind::kUsage};
  }
  return TrackingUri{TrackingKind::kFileStore, uri};
}

std::optional<std::string> local_artifact_dir(const std::string& artifact_uri) {
  if (artifact_uri.starts_with("file:")) return file_uri_path(artifact_uri);
  if (artifact_uri.starts_with("/")) return artifact_uri;
  return std::nullopt;
}

std::string remote_artifact_scheme(const std::string& artifact_uri) {
  if (local_artifact_dir(artifact_uri)) return {};
  // RFC 3986: a letter, then letters, digits, '+', '-', '.', up to the ':'.
  size_t end = 0;
  while (end < artifact_uri.size() && end < 32) {
    const char c = artifact_uri[end];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    const bool other = (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
    if (!(letter || (end > 0 && other))) break;
    ++end;
  }
  if (end > 0 && end < artifact_uri.size() && artifact_uri[end] == ':') return artifact_uri.substr(0, end);
  return artifact_uri.empty() ? "empty" : "relative path";
}

Result<std::string> checked_artifact_path(const std::string& path) {
  const fs::path relative(path);
  for (const fs::path& part : relative) {
    if (part == "..")
      return Error{fmt::format("artifact path '{}' leaves the run's artifact folder", path), ErrorKind::kRefused};
  }
  if (relative.is_absolute()) return Error{fmt::format("artifact path '{}' is absolute", path), ErrorKind::kRefused};
  return path;
}

Result<std::optional<std::string>> read_local_artifact(const std::string& artifact_uri, const std::string& path,
                                                       size_t max_bytes) {
  auto dir = local_artifact_dir(artifact_uri);
  if (!dir) {
    return Error{fmt::format("artifact root is not a local folder ({}); read this store through its server",
                             remote_artifact_scheme(artifact_uri)),
                 ErrorKind::kRefused};
  }
  auto checked = checked_artifact_path(path);
  if (!checked) return checked.error();
  return read_file_below(*dir, path, max_bytes);
}

Result<std::unique_ptr<MlflowStore>> open_mlflow_store(const std::string& tracking_uri,
                                                       const MlflowReadLimits& limits) {
  auto parsed = parse_tracking_uri(tracking_uri);
  if (!parsed) return parsed.error();
  const TrackingUri& t = parsed.value();
  switch (t.kind) {
    case TrackingKind::kServer:
      return open_mlflow_server_store(t.location);
    case TrackingKind::kSqlite:
      return open_mlflow_sqlite_store(t.location, limits);
    case TrackingKind::kFileStore:
      return open_mlflow_file_store(t.location, limits);
  }
  return Error{"unknown tracking URI kind", ErrorKind::kInternal};
}

}  // namespace scaleprof::importers

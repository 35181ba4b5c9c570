#include "pipeline/tracking_uri.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "core/credential_redaction.h"
#include "importers/mlflow/mlflow_store.h"

namespace scaleprof::pipeline {

namespace {

// "host:port" or "host:port/path": what a user means as a server but wrote without http://.
bool looks_like_host_port(const std::string& uri) {
  const size_t colon = uri.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  size_t i = colon + 1;
  size_t digits = 0;
  while (i < uri.size() && std::isdigit(static_cast<unsigned char>(uri[i])) != 0) {
    ++i;
    ++digits;
  }
  if (digits == 0 || (i < uri.size() && uri[i] != '/')) return false;
  for (size_t j = 0; j < colon; ++j) {
    const char c = uri[j];
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-') return false;
  }
  return true;
}

}  // namespace

std::string tracking_uri_from_environment() {
  const char* env = std::getenv("MLFLOW_TRACKING_URI");
  return env != nullptr ? std::string(env) : std::string();
}

Result<std::string> checked_tracking_uri(const std::string& uri, bool server_only) {
  std::string out = uri;
  const size_t scheme_end = out.find("://");
  if (scheme_end != std::string::npos) {
    for (size_t i = 0; i < scheme_end; ++i)
      out[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[i])));
  }
  const std::string shown = redact_url(out);
  const bool server = out.starts_with("http://") || out.starts_with("https://");
  if (server_only && !server) {
    return Error{
        fmt::format(
            "mlflow sync writes to an MLflow server: --tracking-uri (or MLFLOW_TRACKING_URI) must be http://HOST:PORT "
            "or https://... (got '{}')",
            shown),
        ErrorKind::kUsage};
  }
  if (scheme_end == std::string::npos && looks_like_host_port(out)) {
    std::error_code ec;
    if (!std::filesystem::exists(out, ec)) {
      return Error{fmt::format("--tracking-uri '{}' has no scheme: for a server write http://{}", shown, shown),
                   ErrorKind::kUsage};
    }
  }
  auto parsed = importers::parse_tracking_uri(out);
  if (!parsed) {
    // The parser's message starts with the URI as given: shown here without user information.
    std::string message = parsed.error().message;
    for (size_t at = message.find(out); at != std::string::npos; at = message.find(out, at + shown.size())) {
      message.replace(at, out.size(), shown);
    }
    return Error{message, ErrorKind::kUsage};
  }
  return out;
}

}  // namespace scaleprof::pipeline

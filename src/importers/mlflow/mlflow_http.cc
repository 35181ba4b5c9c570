#include "importers/mlflow/mlflow_http.h"

#include <fmt/format.h>

#include <cstdlib>

#include "importers/mlflow/mlflow_json.h"

namespace scaleprof::importers {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

}  // namespace

HttpCredentials credentials_from_environment() {
  HttpCredentials c;
  c.token = env("MLFLOW_TRACKING_TOKEN");
  c.username = env("MLFLOW_TRACKING_USERNAME");
  c.password = env("MLFLOW_TRACKING_PASSWORD");
  const std::string insecure = env("MLFLOW_TRACKING_INSECURE_TLS");
  c.insecure_tls = insecure == "true" || insecure == "True" || insecure == "1";
  return c;
}

HttpWording mlflow_http_wording() {
  HttpWording w;
  w.server = "the MLflow server";
  w.insecure_tls_hint = "MLFLOW_TRACKING_INSECURE_TLS=true skips certificate checks";
  w.credentials_hint = "MLFLOW_TRACKING_USERNAME / MLFLOW_TRACKING_PASSWORD";
  return w;
}

std::string http_failure(const HttpClient& client, std::string_view endpoint, const HttpResponse& response) {
  std::string detail = parse_error_response(response.body);
  if (detail.empty()) {
    if (response.status == 401 || response.status == 403) {
      detail = "not authorized (set MLFLOW_TRACKING_TOKEN or MLFLOW_TRACKING_USERNAME/PASSWORD)";
    } else {
      detail = "the server gave no MLflow error message";
    }
  }
  // One line of the server's words, cut: a proxy may answer with a whole page.
  detail = detail.substr(0, detail.find_first_of("\r\n"));
  if (detail.size() > 300) detail = detail.substr(0, 300) + "...";
  return client.failure(fmt::format("{}: HTTP {}: {}", endpoint, response.status, detail)).message;
}

}  // namespace scaleprof::importers

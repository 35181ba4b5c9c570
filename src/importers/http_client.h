// A small HTTP client (libcurl) for MLflow's REST API: GET and POST with JSON, MLflow's credential
// variables, bounded timeouts. Credentials are read from the environment when the client is made
// and are never part of a message: errors name the server by its URL without user information.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"

namespace scaleprof::importers {

struct HttpResponse {
  int64_t status = 0;
  std::string body;
};

struct HttpCredentials {
  std::string token;     // MLFLOW_TRACKING_TOKEN: Authorization: Bearer
  std::string username;  // MLFLOW_TRACKING_USERNAME / _PASSWORD: basic auth
  std::string password;
  bool insecure_tls = false;  // MLFLOW_TRACKING_INSECURE_TLS=true
};

// MLflow's variables from the process environment.
HttpCredentials credentials_from_environment();

// The URL as messages may show it: user information ("user:pass@") removed.
std::string redact_url(std::string_view url);

class HttpClient {
 public:
  // `base_url` like http://127.0.0.1:5000 (no trailing '/').
  HttpClient(std::string base_url, HttpCredentials credentials);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // `path_and_query` starts with '/'. A transport failure (refused, timeout) is an error; any HTTP
  // status is a response.
  Result<HttpResponse> get(const std::string& path_and_query);
  Result<HttpResponse> post_json(const std::string& path, std::string_view json);
  // PUT of a local file's bytes, streamed from disk (MLflow's artifact proxy takes uploads this way).
  // A file that cannot be opened is an error naming it; the file is only read.
  Result<HttpResponse> put_file(const std::string& path, const std::string& local_file);
  // PUT of bytes held in memory.
  Result<HttpResponse> put_bytes(const std::string& path, std::string_view bytes);

  // Percent-encodes one query value.
  std::string escape(std::string_view text) const;
  const std::string& shown_url() const { return shown_url_; }

 private:
  Result<HttpResponse> perform(const std::string& path, const std::string* json, FILE* upload = nullptr,
                               int64_t upload_size = 0);

  std::string base_url_;
  std::string shown_url_;
  HttpCredentials credentials_;
  void* curl_ = nullptr;  // CURL*, reused so connections are kept alive
};

// A one-line description of a failed REST call: "<server>: <endpoint>: HTTP 500: <message>".
std::string http_failure(const HttpClient& client, std::string_view endpoint, const HttpResponse& response);

}  // namespace scaleprof::importers

// A small HTTP client (libcurl, loaded at run time): GET and POST with JSON, PUT of files, a bearer
// token or basic authentication. Its one user today is MLflow's REST API, from both sides: the
// importer (importers/mlflow/) and the exporter (mlflow_sync/); what is MLflow's (its credential
// variables, its error bodies, the words naming its server) is in importers/mlflow/mlflow_http.h.
// Credentials are never part of a message: every message goes through the one credential redactor
// (core/credential_redaction.h) with the client's own secrets.
//
// Bounds (HttpLimits): a connect timeout, a low-speed limit instead of a total timeout (an upload
// that is slow but moving always finishes; one that stalls fails), and a cap on the response body
// (no automatic decompression, so a small compressed body cannot grow past it).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/credential_redaction.h"  // IWYU pragma: export (redact_url)
#include "core/result.h"

namespace scaleprof {

struct HttpResponse {
  int64_t status = 0;
  std::string body;
};

struct HttpCredentials {
  std::string token;     // Authorization: Bearer
  std::string username;  // with password: basic auth
  std::string password;
  bool insecure_tls = false;  // no certificate checks
};

// How the client's messages name the server and the settings a user may change, so that they speak
// the service's language ("cannot reach the MLflow server", its variables).
struct HttpWording {
  std::string server = "the server";  // "cannot reach <server>: ..."
  std::string insecure_tls_hint;      // after a TLS failure: "TLS failed (...); <hint>"
  std::string credentials_hint;       // the other way to give a user name and password than the URL
};

struct HttpLimits {
  // Time to resolve the host and open the connection (TLS handshake included).
  int64_t connect_timeout_ms = 10'000;
  // A transfer (request, server's work, response) is abandoned once it has moved fewer than
  // `low_speed_bytes_per_s` bytes per second for `low_speed_window_s` seconds in a row: stalled, not
  // slow. There is no limit on the whole transfer, so a large artifact on a slow link finishes.
  int64_t low_speed_bytes_per_s = 1;
  int64_t low_speed_window_s = 60;
  // The most response bytes kept; a longer body ends the transfer with an error naming the cap.
  int64_t max_body_bytes = int64_t{64} << 20;
};

class HttpClient {
 public:
  // `base_url` like http://127.0.0.1:5000 (no trailing '/').
  HttpClient(std::string base_url, HttpCredentials credentials, HttpLimits limits = {}, HttpWording wording = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // `path_and_query` starts with '/'. A transport failure is an error saying what happened (cannot
  // connect, stalled, body over the cap, connection broken); any HTTP status is a response.
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
  const HttpLimits& limits() const { return limits_; }
  // `text` (a message, a server's words) through the one redactor, with this client's secrets (its
  // token, password, the URL's user information and the Basic authorization they make).
  std::string redact(std::string_view text) const;
  // "<server>: <what>", redacted: for messages about this server's responses.
  Error failure(std::string_view what) const;

 private:
  struct TransferCounts {
    bool connected = false;
    int64_t sent = 0;
    int64_t upload_size = 0;
    int64_t received = 0;
  };
  Result<HttpResponse> perform(const std::string& path, const std::string* json, FILE* upload = nullptr,
                               int64_t upload_size = 0);
  // What a failed transfer (libcurl's `code`) means, in words: could not connect, stalled, over the
  // body cap, broken connection, TLS.
  std::string transfer_failure(int code, bool over_cap, const TransferCounts& counts, std::string_view curl_message,
                               std::string_view curl_error) const;

  std::string base_url_;
  std::string shown_url_;
  HttpCredentials credentials_;
  HttpLimits limits_;
  HttpWording wording_;
  std::vector<std::string> secrets_;
  void* curl_ = nullptr;  // CURL*, reused so connections are kept alive
};

}  // namespace scaleprof

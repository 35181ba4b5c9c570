#include "importers/http_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "importers/mlflow_json.h"

namespace scaleprof::importers {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

size_t append_body(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  body->append(data, size * count);
  return size * count;
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
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

std::string redact_url(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const size_t host = scheme + 3;
  size_t end = url.find_first_of("/?#", host);
  if (end == std::string_view::npos) end = url.size();
  const size_t at = url.substr(host, end - host).rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  return std::string(url.substr(0, host)) + std::string(url.substr(host + at + 1));
}

HttpClient::HttpClient(std::string base_url, HttpCredentials credentials)
    : base_url_(std::move(base_url)), shown_url_(redact_url(base_url_)), credentials_(std::move(credentials)) {
  global_init();
  curl_ = curl_easy_init();
}

HttpClient::~HttpClient() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

std::string HttpClient::escape(std::string_view text) const {
  char* e = curl_easy_escape(static_cast<CURL*>(curl_), text.data(), static_cast<int>(text.size()));
  if (e == nullptr) return {};
  std::string out(e);
  curl_free(e);
  return out;
}

Result<HttpResponse> HttpClient::get(const std::string& path_and_query) {
  return perform(path_and_query, nullptr);
}

Result<HttpResponse> HttpClient::post_json(const std::string& path, std::string_view json) {
  const std::string body(json);
  return perform(path, &body);
}

Result<HttpResponse> HttpClient::put_file(const std::string& path, const std::string& local_file) {
  FILE* file = std::fopen(local_file.c_str(), "rb");
  if (file == nullptr) return Error{fmt::format("{}: cannot read: {}", local_file, std::strerror(errno))};
  struct stat st {};
  if (::fstat(fileno(file), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fclose(file);
    return Error{fmt::format("{}: not a regular file", local_file)};
  }
  auto r = perform(path, nullptr, file, static_cast<int64_t>(st.st_size));
  std::fclose(file);
  return r;
}

Result<HttpResponse> HttpClient::put_bytes(const std::string& path, std::string_view bytes) {
  std::string copy(bytes);
  // A read-only stream over the bytes, so the upload path is the same as for a file.
  FILE* memory = copy.empty() ? std::fopen("/dev/null", "rb") : fmemopen(copy.data(), copy.size(), "rb");
  if (memory == nullptr) return Error{fmt::format("{}: cannot buffer an upload: {}", shown_url_, std::strerror(errno))};
  auto r = perform(path, nullptr, memory, static_cast<int64_t>(copy.size()));
  std::fclose(memory);
  return r;
}

Result<HttpResponse> HttpClient::perform(const std::string& path, const std::string* json, FILE* upload,
                                         int64_t upload_size) {
  auto* curl = static_cast<CURL*>(curl_);
  if (curl == nullptr) return Error{fmt::format("{}: cannot start an HTTP client", shown_url_)};
  curl_easy_reset(curl);
  HttpResponse response;
  const std::string url = base_url_ + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 120000L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
  if (credentials_.insecure_tls) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  struct curl_slist* headers = nullptr;
  std::string auth;
  if (!credentials_.token.empty()) {
    auth = "Authorization: Bearer " + credentials_.token;
    headers = curl_slist_append(headers, auth.c_str());
  } else if (!credentials_.username.empty()) {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(curl, CURLOPT_USERNAME, credentials_.username.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, credentials_.password.c_str());
  }
  if (json != nullptr) {
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, json->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(json->size()));
  }
  if (upload != nullptr) {
    headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip per file
    curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(curl, CURLOPT_READDATA, upload);  // libcurl's default read callback is fread
    curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(upload_size));
  }
  if (headers != nullptr) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  const CURLcode rc = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  // The header list and the strings above hold the credentials; libcurl keeps no copy past reset.
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  if (rc != CURLE_OK) {
    return Error{fmt::format("{}: cannot reach the MLflow server: {}", shown_url_, curl_easy_strerror(rc))};
  }
  long status = 0;  // NOLINT(google-runtime-int): libcurl's type
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  response.status = status;
  return response;
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
  return fmt::format("{}: {}: HTTP {}: {}", client.shown_url(), endpoint, response.status, detail);
}

}  // namespace scaleprof::importers

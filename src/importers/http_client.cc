#include "importers/http_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/shared_library.h"
#include "importers/mlflow_json.h"

namespace scaleprof::importers {

namespace {

// libcurl, loaded the first time an HTTP client is made (as the GPU libraries are): only the
// MLflow commands talk HTTP, and linking it mapped libcurl with its TLS, SSH, LDAP and Kerberos
// libraries (28 shared libraries) into every scaleprof process, `trace` commands included (issue
// 12: their peak memory and start-up). The header gives the types and constants; the functions
// come from Debian's libcurl4 (libcurl.so.4, installed with libcurl4-openssl-dev).
struct CurlApi {
  SharedLibrary lib;
  std::string error;                        // why libcurl could not be loaded ("" when loaded)
  CURLcode (*global_init)(long) = nullptr;  // NOLINT(google-runtime-int): libcurl's type
  CURL* (*easy_init)() = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  void (*easy_reset)(CURL*) = nullptr;
  char* (*easy_escape)(CURL*, const char*, int) = nullptr;
  void (*free_text)(void*) = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
};

CurlApi load_curl() {
  CurlApi api;
  auto lib = SharedLibrary::open("libcurl.so.4");
  if (!lib) {
    api.error = fmt::format("cannot load libcurl ({})", lib.error().message);
    return api;
  }
  api.lib = std::move(lib.value());
  bool found = true;
  auto get = [&](auto& fn, const char* name) {
    fn = api.lib.function<std::remove_reference_t<decltype(fn)>>(name);
    found &= fn != nullptr;
  };
  get(api.global_init, "curl_global_init");
  get(api.easy_init, "curl_easy_init");
  get(api.easy_cleanup, "curl_easy_cleanup");
  get(api.easy_reset, "curl_easy_reset");
  get(api.easy_escape, "curl_easy_escape");
  get(api.free_text, "curl_free");
  get(api.easy_setopt, "curl_easy_setopt");
  get(api.easy_perform, "curl_easy_perform");
  get(api.easy_getinfo, "curl_easy_getinfo");
  get(api.easy_strerror, "curl_easy_strerror");
  get(api.slist_append, "curl_slist_append");
  get(api.slist_free_all, "curl_slist_free_all");
  if (!found) {
    api.error = fmt::format("cannot load libcurl ({} lacks a function scaleprof uses)", api.lib.path());
    return api;
  }
  if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) api.error = "cannot initialise libcurl";
  return api;
}

// Loaded once per process, on first use (thread-safe: a function-local static).
const CurlApi& curl() {
  static const CurlApi api = load_curl();
  return api;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

size_t append_body(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  body->append(data, size * count);
  return size * count;
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
  if (curl().error.empty()) curl_ = curl().easy_init();
}

HttpClient::~HttpClient() {
  if (curl_ != nullptr) curl().easy_cleanup(static_cast<CURL*>(curl_));
}

std::string HttpClient::escape(std::string_view text) const {
  if (curl_ == nullptr) return {};
  char* e = curl().easy_escape(static_cast<CURL*>(curl_), text.data(), static_cast<int>(text.size()));
  if (e == nullptr) return {};
  std::string out(e);
  curl().free_text(e);
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
  const CurlApi& api = curl();
  if (!api.error.empty()) return Error{fmt::format("{}: {}", shown_url_, api.error)};
  auto* handle = static_cast<CURL*>(curl_);
  if (handle == nullptr) return Error{fmt::format("{}: cannot start an HTTP client", shown_url_)};
  api.easy_reset(handle);
  HttpResponse response;
  const std::string url = base_url_ + path;
  api.easy_setopt(handle, CURLOPT_URL, url.c_str());
  api.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  api.easy_setopt(handle, CURLOPT_TIMEOUT_MS, 120000L);
  api.easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
  api.easy_setopt(handle, CURLOPT_WRITEFUNCTION, append_body);
  api.easy_setopt(handle, CURLOPT_WRITEDATA, &response.body);
  api.easy_setopt(handle, CURLOPT_ACCEPT_ENCODING, "");
  if (credentials_.insecure_tls) {
    api.easy_setopt(handle, CURLOPT_SSL_VERIFYPEER, 0L);
    api.easy_setopt(handle, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  struct curl_slist* headers = nullptr;
  std::string auth;
  if (!credentials_.token.empty()) {
    auth = "Authorization: Bearer " + credentials_.token;
    headers = api.slist_append(headers, auth.c_str());
  } else if (!credentials_.username.empty()) {
    api.easy_setopt(handle, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    api.easy_setopt(handle, CURLOPT_USERNAME, credentials_.username.c_str());
    api.easy_setopt(handle, CURLOPT_PASSWORD, credentials_.password.c_str());
  }
  if (json != nullptr) {
    headers = api.slist_append(headers, "Content-Type: application/json");
    api.easy_setopt(handle, CURLOPT_POST, 1L);
    api.easy_setopt(handle, CURLOPT_POSTFIELDS, json->data());
    api.easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(json->size()));
  }
  if (upload != nullptr) {
    headers = api.slist_append(headers, "Content-Type: application/octet-stream");
    headers = api.slist_append(headers, "Expect:");  // no 100-continue round trip per file
    api.easy_setopt(handle, CURLOPT_UPLOAD, 1L);
    api.easy_setopt(handle, CURLOPT_READDATA, upload);  // libcurl's default read callback is fread
    api.easy_setopt(handle, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(upload_size));
  }
  if (headers != nullptr) api.easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
  const CURLcode rc = api.easy_perform(handle);
  api.slist_free_all(headers);
  // The header list and the strings above hold the credentials; libcurl keeps no copy past reset.
  api.easy_setopt(handle, CURLOPT_HTTPHEADER, nullptr);
  if (rc != CURLE_OK) {
    return Error{fmt::format("{}: cannot reach the MLflow server: {}", shown_url_, api.easy_strerror(rc))};
  }
  long status = 0;  // NOLINT(google-runtime-int): libcurl's type
  api.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
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

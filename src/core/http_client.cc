#include "core/http_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/number_text.h"
#include "core/shared_library.h"

namespace scaleprof {

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
  // Never unloaded: the function-local static that holds it is destroyed at exit, and unloading
  // libcurl then would take OpenSSL with it while its exit handlers still run (shared_library.h).
  auto lib = SharedLibrary::open("libcurl.so.4", SharedLibrary::Unload::kNever);
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

// The response body, kept up to a cap: past it the callback refuses the bytes, which ends the
// transfer (CURLE_WRITE_ERROR), so an endless body costs at most the cap.
struct BodySink {
  std::string* body = nullptr;
  size_t cap = 0;
  bool over_cap = false;
};

size_t append_body(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  const size_t n = size * count;
  if (n > sink->cap - std::min(sink->cap, sink->body->size())) {
    sink->over_cap = true;
    return 0;
  }
  sink->body->append(data, n);
  return n;
}

std::string base64(std::string_view bytes) {
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

std::string percent_decoded(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) != 0 &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2])) != 0) {
      out += static_cast<char>(*parse_hex(text.substr(i + 1, 2)));  // two hex digits, checked above
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// What a message must never show: the configured token and password, the user information of the
// base URL (as typed and decoded), and the Basic authorization value they make.
std::vector<std::string> known_secrets(const std::string& base_url, const HttpCredentials& c) {
  std::vector<std::string> secrets = {c.token, c.password};
  if (!c.username.empty() || !c.password.empty()) secrets.push_back(base64(c.username + ":" + c.password));
  const std::string userinfo = url_userinfo(base_url);
  if (!userinfo.empty()) {
    const std::string decoded = percent_decoded(userinfo);
    secrets.push_back(userinfo);
    secrets.push_back(decoded);
    secrets.push_back(base64(decoded));
    const size_t colon = userinfo.find(':');
    if (colon != std::string::npos) {
      secrets.push_back(userinfo.substr(colon + 1));
      secrets.push_back(percent_decoded(userinfo.substr(colon + 1)));
    }
  }
  std::erase(secrets, std::string());
  // Longest first, so a secret that contains another is hidden whole.
  std::sort(secrets.begin(), secrets.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  secrets.erase(std::unique(secrets.begin(), secrets.end()), secrets.end());
  return secrets;
}

std::string describe_bytes(int64_t n) {
  if (n < 10'000) return fmt::format("{} bytes", n);
  if (n < 10'000'000) return fmt::format("{:.1f} kB", static_cast<double>(n) / 1e3);
  return fmt::format("{:.1f} MB", static_cast<double>(n) / 1e6);
}

}  // namespace

HttpClient::HttpClient(std::string base_url, HttpCredentials credentials, HttpLimits limits, HttpWording wording)
    : base_url_(std::move(base_url)),
      credentials_(std::move(credentials)),
      limits_(limits),
      wording_(std::move(wording)),
      secrets_(known_secrets(base_url_, credentials_)) {
  shown_url_ = redact_credentials(redact_url(base_url_), secrets_);
  if (curl().error.empty()) curl_ = curl().easy_init();
}

std::string HttpClient::redact(std::string_view text) const {
  return redact_credentials(text, secrets_);
}

Error HttpClient::failure(std::string_view what) const {
  // Named once: a message from this client already starts with the server.
  if (what.starts_with(shown_url_ + ": ")) return Error{redact(what), ErrorKind::kNetwork};
  return Error{redact(fmt::format("{}: {}", shown_url_, what)), ErrorKind::kNetwork};
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
  if (file == nullptr)
    return Error{fmt::format("{}: cannot read: {}", local_file, std::strerror(errno)), ErrorKind::kIo};
  struct stat st {};
  if (::fstat(fileno(file), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fclose(file);
    return Error{fmt::format("{}: not a regular file", local_file), ErrorKind::kRefused};
  }
  auto r = perform(path, nullptr, file, static_cast<int64_t>(st.st_size));
  std::fclose(file);
  return r;
}

Result<HttpResponse> HttpClient::put_bytes(const std::string& path, std::string_view bytes) {
  std::string copy(bytes);
  // A read-only stream over the bytes, so the upload path is the same as for a file.
  FILE* memory = copy.empty() ? std::fopen("/dev/null", "rb") : fmemopen(copy.data(), copy.size(), "rb");
  if (memory == nullptr) return failure(fmt::format("cannot buffer an upload: {}", std::strerror(errno)));
  auto r = perform(path, nullptr, memory, static_cast<int64_t>(copy.size()));
  std::fclose(memory);
  return r;
}

Result<HttpResponse> HttpClient::perform(const std::string& path, const std::string* json, FILE* upload,
                                         int64_t upload_size) {
  const CurlApi& api = curl();
  if (!api.error.empty()) return failure(api.error);
  auto* handle = static_cast<CURL*>(curl_);
  if (handle == nullptr) return failure("cannot start an HTTP client");
  api.easy_reset(handle);
  HttpResponse response;
  BodySink sink{&response.body, static_cast<size_t>(std::max<int64_t>(limits_.max_body_bytes, 0))};
  std::array<char, CURL_ERROR_SIZE> curl_message{};
  const std::string url = base_url_ + path;
  api.easy_setopt(handle, CURLOPT_URL, url.c_str());
  api.easy_setopt(handle, CURLOPT_ERRORBUFFER, curl_message.data());
  api.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  // NOLINTBEGIN(google-runtime-int): libcurl takes long
  api.easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(limits_.connect_timeout_ms));
  // Stalled, not slow: no total timeout (CURLOPT_TIMEOUT stays 0), so an artifact upload of any size
  // finishes as long as it moves.
  api.easy_setopt(handle, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(limits_.low_speed_bytes_per_s));
  api.easy_setopt(handle, CURLOPT_LOW_SPEED_TIME, static_cast<long>(limits_.low_speed_window_s));
  // NOLINTEND(google-runtime-int)
  api.easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
  api.easy_setopt(handle, CURLOPT_WRITEFUNCTION, append_body);
  api.easy_setopt(handle, CURLOPT_WRITEDATA, &sink);
  // A declared length over the cap ends the transfer before any of it is read. No Accept-Encoding
  // and no decoding: a body arrives as sent, so the cap counts the bytes that are kept.
  api.easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(sink.cap));
  api.easy_setopt(handle, CURLOPT_HTTP_CONTENT_DECODING, 0L);
  api.easy_setopt(handle, CURLOPT_HTTP_TRANSFER_DECODING, 1L);  // chunked framing only
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
  const char* method = "GET";
  if (json != nullptr) {
    method = "POST";
    headers = api.slist_append(headers, "Content-Type: application/json");
    api.easy_setopt(handle, CURLOPT_POST, 1L);
    api.easy_setopt(handle, CURLOPT_POSTFIELDS, json->data());
    api.easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(json->size()));
  }
  if (upload != nullptr) {
    method = "PUT";
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
  api.easy_setopt(handle, CURLOPT_ERRORBUFFER, nullptr);
  if (rc != CURLE_OK) {
    TransferCounts counts;
    counts.upload_size = upload != nullptr ? upload_size : json != nullptr ? static_cast<int64_t>(json->size()) : 0;
    curl_off_t value = 0;
    if (api.easy_getinfo(handle, CURLINFO_CONNECT_TIME_T, &value) == CURLE_OK) counts.connected = value > 0;
    if (api.easy_getinfo(handle, CURLINFO_SIZE_UPLOAD_T, &value) == CURLE_OK) counts.sent = value;
    counts.received = static_cast<int64_t>(response.body.size());
    const std::string where = fmt::format("{} {}", method, path.substr(0, path.find('?')));
    return failure(fmt::format(
        "{}: {}", where, transfer_failure(rc, sink.over_cap, counts, curl_message.data(), api.easy_strerror(rc))));
  }
  long status = 0;  // NOLINT(google-runtime-int): libcurl's type
  api.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
  response.status = status;
  return response;
}

std::string HttpClient::transfer_failure(int code, bool over_cap, const TransferCounts& counts,
                                         std::string_view curl_message, std::string_view curl_error) const {
  const std::string detail = curl_message.empty() ? std::string(curl_error) : std::string(curl_message);
  switch (static_cast<CURLcode>(code)) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return fmt::format("cannot reach {}: host not found ({})", wording_.server, detail);
    case CURLE_COULDNT_CONNECT:
      return fmt::format("cannot reach {}: connection refused or no route ({})", wording_.server, detail);
    case CURLE_OPERATION_TIMEDOUT:
      if (!counts.connected) {
        return fmt::format("cannot reach {}: no connection within {} s", wording_.server,
                           limits_.connect_timeout_ms / 1000.0);
      }
      return fmt::format(
          "the transfer stalled: less than {} byte/s for {} s ({}received {}); the server stopped reading or "
          "answering",
          limits_.low_speed_bytes_per_s, limits_.low_speed_window_s,
          counts.upload_size > 0
              ? fmt::format("sent {} of {}, ", describe_bytes(counts.sent), describe_bytes(counts.upload_size))
              : std::string(),
          describe_bytes(counts.received));
    case CURLE_WRITE_ERROR:
    case CURLE_FILESIZE_EXCEEDED:
      if (over_cap || code == CURLE_FILESIZE_EXCEEDED) {
        return fmt::format("the response is larger than the cap of {} bytes; not read further", limits_.max_body_bytes);
      }
      return fmt::format("cannot keep the response ({})", detail);
    case CURLE_URL_MALFORMAT:
      return fmt::format(
          "the server's URL is malformed (a user name or password holding a slash, an at sign, a colon or a hash "
          "must be percent-encoded{})",
          wording_.credentials_hint.empty() ? std::string() : ", or given as " + wording_.credentials_hint);
    case CURLE_GOT_NOTHING:
      return "the server closed the connection without answering";
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
      return fmt::format("the connection broke during the transfer ({} sent, {} received: {})",
                         describe_bytes(counts.sent), describe_bytes(counts.received), detail);
    case CURLE_READ_ERROR:
    case CURLE_ABORTED_BY_CALLBACK:
      return fmt::format("cannot read what was to be uploaded ({})", detail);
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
      return fmt::format("TLS failed ({}){}", detail,
                         wording_.insecure_tls_hint.empty() ? std::string() : "; " + wording_.insecure_tls_hint);
    default:
      return fmt::format("the HTTP request failed ({})", detail);
  }
}

}  // namespace scaleprof

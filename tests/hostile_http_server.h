// A scripted HTTP/1.1 server for the client's tests: listens on 127.0.0.1 on a free port, in a
// thread of the test, and answers each request with what the test's handler writes, one request per
// connection ("Connection: close"). Handlers can misbehave as a hostile or broken server would:
// drip bytes, stall, read an upload slowly, send an endless body. The destructor stops and joins it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace scaleprof::testing {

struct HttpRequest {
  std::string method;
  std::string target;         // path and query
  std::string headers;        // the raw header lines
  std::string headers_lower;  // the same, lower-cased (to look names up)
  int64_t content_length = 0;
  std::string body;  // read by the server unless it was made with read_bodies = false
};

class HttpConnection {
 public:
  HttpConnection(int fd, const std::atomic<bool>& stop) : fd_(fd), stop_(stop) {}

  // Sends all of `bytes`; false once the client has gone (or the server is stopping).
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      if (stop_) return false;
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // Reads up to `n` bytes (less at the end of the stream); "" once the client has gone.
  std::string receive(size_t n) {
    std::string out(n, '\0');
    for (;;) {
      if (stop_) return {};
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t got = ::recv(fd_, out.data(), n, 0);
      if (got <= 0) return {};
      out.resize(static_cast<size_t>(got));
      return out;
    }
  }
  // Reads exactly `n` bytes, `chunk` at a time with `pause` between reads (a slow reader).
  std::string receive_slowly(int64_t n, size_t chunk, std::chrono::milliseconds pause) {
    std::string out;
    while (static_cast<int64_t>(out.size()) < n) {
      std::this_thread::sleep_for(pause);
      const std::string part = receive(std::min<size_t>(chunk, static_cast<size_t>(n) - out.size()));
      if (part.empty()) break;
      out += part;
    }
    return out;
  }
  // Waits, sending nothing, until the client closes the connection or the server stops.
  void wait_for_close() {
    char buf[4096];
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      if (::recv(fd_, buf, sizeof buf, 0) <= 0) return;
    }
  }
  bool stopping() const { return stop_; }

 private:
  int fd_;
  const std::atomic<bool>& stop_;
};

// A whole response with a Content-Length.
inline std::string http_response(int status, std::string_view body, std::string_view extra_headers = "") {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n" + std::string(extra_headers) + "\r\n" + std::string(body);
}

class HostileHttpServer {
 public:
  using Handler = std::function<void(HttpConnection&, const HttpRequest&)>;

  explicit HostileHttpServer(Handler handler, bool read_bodies = true)
      : handler_(std::move(handler)), read_bodies_(read_bodies) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;  // a free port
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listen_fd_, 16);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~HostileHttpServer() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  HostileHttpServer(const HostileHttpServer&) = delete;
  HostileHttpServer& operator=(const HostileHttpServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  std::vector<HttpRequest> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      HttpConnection connection(fd, stop_);
      HttpRequest request;
      if (read_request(connection, &request)) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          requests_.push_back(request);
        }
        handler_(connection, request);
      }
      ::close(fd);
    }
  }

  bool read_request(HttpConnection& c, HttpRequest* r) const {
    std::string head;
    size_t end = std::string::npos;
    while ((end = head.find("\r\n\r\n")) == std::string::npos) {
      const std::string part = c.receive(4096);
      if (part.empty() || head.size() > (1 << 20)) return false;
      head += part;
    }
    std::string rest = head.substr(end + 4);
    head.resize(end);
    const size_t sp1 = head.find(' ');
    const size_t sp2 = head.find(' ', sp1 + 1);
    r->method = head.substr(0, sp1);
    r->target = head.substr(sp1 + 1, sp2 - sp1 - 1);
    r->headers = head.substr(head.find("\r\n") + 2);
    r->headers_lower = r->headers;
    for (char& ch : r->headers_lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const size_t cl = r->headers_lower.find("content-length:");
    if (cl != std::string::npos) r->content_length = std::stoll(r->headers_lower.substr(cl + 15));
    r->body = rest;
    if (read_bodies_) {
      while (static_cast<int64_t>(r->body.size()) < r->content_length) {
        const std::string part = c.receive(65536);
        if (part.empty()) return false;
        r->body += part;
      }
    }
    return true;
  }

  Handler handler_;
  bool read_bodies_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<HttpRequest> requests_;
  std::thread thread_;
};

}  // namespace scaleprof::testing

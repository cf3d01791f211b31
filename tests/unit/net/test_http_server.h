// A small HTTP/1.1 server for download tests: a thread with a listening socket on 127.0.0.1 (an
// ephemeral port) serving configured routes, one connection at a time, `Connection: close`.
// Routes (matched on the exact target, else on the path without its query) can honour or ignore
// Range, drop the connection after K body bytes (simulating an interruption), stall, redirect, or
// answer any status; unknown paths get 404. Every request is recorded so tests can check what the
// client sent (e.g. the Range header of a resume).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace brisk::test {

struct HttpRoute {
  int status = 200;  // 200: serve `body` (206 for a Range request); 3xx: redirect to `location`
  std::string body;
  bool ignore_range = false;  // answer 200 with the whole body even when asked for a range
  int64_t drop_after = -1;    // close the connection after this many body bytes...
  int drop_times = 0;         // ...for this many requests, then serve normally
  int64_t stall_after = -1;   // stop sending after this many body bytes...
  double stall_s = 0;         // ...for this long, then close
  std::string location;
  std::vector<std::pair<std::string, std::string>> headers;  // extra response headers

  static HttpRoute Body(std::string body) {
    HttpRoute r;
    r.body = std::move(body);
    return r;
  }
  static HttpRoute Redirect(std::string location, int status = 302) {
    HttpRoute r;
    r.status = status;
    r.location = std::move(location);
    return r;
  }
  static HttpRoute Status(int status, std::string body = "") {
    HttpRoute r;
    r.status = status;
    r.body = std::move(body);
    return r;
  }
  HttpRoute& IgnoreRange() {
    ignore_range = true;
    return *this;
  }
  HttpRoute& Drop(int64_t after, int times) {
    drop_after = after;
    drop_times = times;
    return *this;
  }
  HttpRoute& Stall(int64_t after, double seconds) {
    stall_after = after;
    stall_s = seconds;
    return *this;
  }
  HttpRoute& Header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
    return *this;
  }
};

struct HttpRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

class TestHttpServer {
 public:
  TestHttpServer();
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  bool ok() const { return listen_fd_ >= 0; }
  int port() const { return port_; }
  // http://127.0.0.1:<port><path>
  std::string Url(const std::string& path) const;
  void SetRoute(const std::string& path, HttpRoute route);
  std::vector<HttpRequest> Requests() const;
  // Requests whose path is `path`.
  std::vector<HttpRequest> RequestsFor(const std::string& path) const;

 private:
  void Loop();
  void Serve(int fd);
  void SendAll(int fd, const char* data, size_t n);

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::map<std::string, HttpRoute> routes_;
  std::vector<HttpRequest> requests_;
  std::thread thread_;
};

// `size` bytes of deterministic pseudo-random content.
std::string TestContent(size_t size, uint32_t seed);

}  // namespace brisk::test

#include "test_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>

namespace brisk::test {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 206:
      return "Partial Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 307:
      return "Temporary Redirect";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 416:
      return "Range Not Satisfiable";
    case 500:
      return "Internal Server Error";
    default:
      return "Status";
  }
}

// "bytes=START-" or "bytes=START-END"; false when absent or malformed.
bool ParseRange(const std::string& v, int64_t* first, int64_t* last) {
  if (v.rfind("bytes=", 0) != 0) return false;
  const std::string spec = v.substr(6);
  const size_t dash = spec.find('-');
  if (dash == std::string::npos || dash == 0) return false;
  char* end = nullptr;
  *first = std::strtoll(spec.c_str(), &end, 10);
  if (end != spec.c_str() + dash) return false;
  *last = -1;
  if (dash + 1 < spec.size()) *last = std::strtoll(spec.c_str() + dash + 1, nullptr, 10);
  return true;
}

}  // namespace

std::string TestContent(size_t size, uint32_t seed) {
  std::string s(size, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s[i] = char(x >> 24);
  }
  return s;
}

TestHttpServer::TestHttpServer() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 16) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return;
  }
  listen_fd_ = fd;
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Loop(); });
}

TestHttpServer::~TestHttpServer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
}

std::string TestHttpServer::Url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

void TestHttpServer::SetRoute(const std::string& path, HttpRoute route) {
  std::lock_guard<std::mutex> lock(mu_);
  routes_[path] = std::move(route);
}

std::vector<HttpRequest> TestHttpServer::Requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::vector<HttpRequest> TestHttpServer::RequestsFor(const std::string& path) const {
  std::vector<HttpRequest> out;
  for (HttpRequest& r : Requests())
    if (r.path == path) out.push_back(std::move(r));
  return out;
}

void TestHttpServer::Loop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    Serve(fd);
    close(fd);
  }
}

void TestHttpServer::SendAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
    if (w <= 0) return;
    data += w;
    n -= size_t(w);
  }
}

void TestHttpServer::Serve(int fd) {
  std::string in;
  char buf[4096];
  while (in.find("\r\n\r\n") == std::string::npos && in.size() < 65536) {
    ssize_t r = recv(fd, buf, sizeof(buf), 0);
    if (r <= 0) return;
    in.append(buf, size_t(r));
  }
  HttpRequest req;
  size_t eol = in.find("\r\n");
  const std::string request_line = in.substr(0, eol);
  const size_t sp1 = request_line.find(' '), sp2 = request_line.rfind(' ');
  if (sp1 == std::string::npos || sp2 <= sp1) return;
  req.method = request_line.substr(0, sp1);
  req.path = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  for (size_t pos = eol + 2; pos < in.size();) {
    size_t end = in.find("\r\n", pos);
    if (end == std::string::npos || end == pos) break;
    const std::string line = in.substr(pos, end - pos);
    const size_t colon = line.find(':');
    if (colon != std::string::npos)
      req.headers[Lower(Trim(line.substr(0, colon)))] = Trim(line.substr(colon + 1));
    pos = end + 2;
  }

  HttpRoute route;
  bool found = false, drop = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(req);
    auto it = routes_.find(req.path);  // the exact target, else the path without its query
    if (it == routes_.end()) it = routes_.find(req.path.substr(0, req.path.find('?')));
    if (it != routes_.end()) {
      found = true;
      route = it->second;
      if (it->second.drop_times > 0) {
        drop = true;
        --it->second.drop_times;
      }
    }
  }
  if (!found) {
    route.status = 404;
    route.body = "Entry not found";
  }

  int status = route.status;
  std::string headers;
  int64_t first = 0, last = int64_t(route.body.size()) - 1;
  const int64_t size = int64_t(route.body.size());
  if (status == 200) {
    int64_t rf = 0, rl = -1;
    if (!route.ignore_range && ParseRange(req.Header("range"), &rf, &rl)) {
      if (rf >= size) {
        status = 416;
        headers += "Content-Range: bytes */" + std::to_string(size) + "\r\n";
        first = 0;
        last = -1;
      } else {
        status = 206;
        first = rf;
        if (rl >= 0 && rl < last) last = rl;
        headers += "Content-Range: bytes " + std::to_string(first) + "-" + std::to_string(last) +
                   "/" + std::to_string(size) + "\r\n";
      }
    }
    headers += "Accept-Ranges: bytes\r\n";
  } else {
    if (!route.location.empty()) headers += "Location: " + route.location + "\r\n";
  }
  for (auto& [k, v] : route.headers) headers += k + ": " + v + "\r\n";
  std::string body;
  if (status == 200 || status == 206)
    body = route.body.substr(size_t(first), size_t(last - first + 1));
  else if (status != 416)
    body = route.body;

  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) + "\r\n" +
                     headers + "Content-Length: " + std::to_string(body.size()) +
                     "\r\nConnection: close\r\n\r\n";
  SendAll(fd, head.data(), head.size());
  if (req.method == "HEAD") return;
  size_t n = body.size();
  if (drop && route.drop_after >= 0) n = std::min(n, size_t(route.drop_after));
  if (route.stall_after >= 0) n = std::min(n, size_t(route.stall_after));
  SendAll(fd, body.data(), n);
  if (route.stall_after >= 0 && n < body.size()) {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(route.stall_s);
    while (!stop_ && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return;
  }
  if (n < body.size()) shutdown(fd, SHUT_RDWR);  // an interruption: close before the end
}

}  // namespace brisk::test

// A scripted HTTP/1.1 server for the bench http tests: every request is answered by a list of
// steps (write these bytes, sleep, close the connection) that the test chooses, so timings,
// truncations, hangs and broken framing are exact and need no real model. Plain POSIX sockets,
// one thread per connection, keep-alive until a step closes or the client goes away.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace brisk::test {

struct ScriptStep {
  enum Kind { kWrite, kSleep, kClose } kind = kWrite;
  std::string bytes;  // kWrite
  int ms = 0;         // kSleep
};
using Script = std::vector<ScriptStep>;

inline ScriptStep Write(std::string bytes) { return {ScriptStep::kWrite, std::move(bytes), 0}; }
inline ScriptStep Sleep(int ms) { return {ScriptStep::kSleep, "", ms}; }
inline ScriptStep Close() { return {ScriptStep::kClose, "", 0}; }

struct ScriptRequest {
  std::string method, target, body;
  std::string head;  // request line and headers, as sent
};

// Response pieces.
inline std::string SseHeader() {
  return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
}
inline std::string Chunk(const std::string& s) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "%zx\r\n", s.size());
  return hex + s + "\r\n";
}
inline std::string LastChunk() { return "0\r\n\r\n"; }
inline std::string Event(const std::string& data) { return Chunk("data: " + data + "\n\n"); }
inline std::string WholeResponse(int status, const std::string& content_type,
                                 const std::string& body, const std::string& extra = "") {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
}

class ScriptServer {
 public:
  using Handler = std::function<Script(const ScriptRequest&)>;

  explicit ScriptServer(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(listen_fd_, 128);
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~ScriptServer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    }
    cv_.notify_all();
    ::shutdown(listen_fd_, SHUT_RDWR);
    accept_thread_.join();
    ::close(listen_fd_);
    for (std::thread& t : conn_threads_) t.join();
  }

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_; }
  int max_active() const { return max_active_; }  // requests being answered at the same time
  std::vector<ScriptRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void AcceptLoop() {
    for (;;) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;  // shut down
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) {
        ::close(fd);
        return;
      }
      ++connections_;
      fds_.push_back(fd);
      conn_threads_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  bool Recv(int fd, std::string& buf) {
    char tmp[4096];
    const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf.append(tmp, size_t(n));
    return true;
  }

  // Sleeps, but wakes at once when the server stops (a "hung" server must not hold the test).
  void SleepMs(int ms) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stop_; });
  }

  void Serve(int fd) {
    std::string buf;
    for (bool open = true; open;) {
      size_t end;
      while ((end = buf.find("\r\n\r\n")) == std::string::npos)
        if (!Recv(fd, buf)) return Finish(fd);
      ScriptRequest r;
      const std::string head = buf.substr(0, end);
      r.head = head;
      const size_t sp1 = head.find(' '), sp2 = head.find(' ', sp1 + 1);
      r.method = head.substr(0, sp1);
      r.target = head.substr(sp1 + 1, sp2 - sp1 - 1);
      std::string lower = head;
      std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
      size_t body_len = 0;
      if (size_t p = lower.find("content-length:"); p != std::string::npos)
        body_len = std::stoul(head.substr(p + 15));
      while (buf.size() < end + 4 + body_len)
        if (!Recv(fd, buf)) return Finish(fd);
      r.body = buf.substr(end + 4, body_len);
      buf.erase(0, end + 4 + body_len);
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(r);
      }
      const int now = ++active_;
      for (int m = max_active_; now > m && !max_active_.compare_exchange_weak(m, now);) {
      }
      const std::vector<ScriptStep> steps = handler_(r);
      // The request stops counting as active before its last bytes go out: a closed-loop client
      // may start its next request as soon as it has them, possibly before this thread runs again
      // (on a loaded machine that read as one request too many in flight).
      size_t last_write = steps.size();
      for (size_t i = 0; i < steps.size(); ++i)
        if (steps[i].kind == ScriptStep::kWrite) last_write = i;
      bool counted = true;
      for (size_t i = 0; i < steps.size(); ++i) {
        const ScriptStep& s = steps[i];
        if (s.kind == ScriptStep::kClose) {
          open = false;
          break;
        }
        if (s.kind == ScriptStep::kSleep) {
          SleepMs(s.ms);
          continue;
        }
        if (i == last_write) --active_, counted = false;
        for (size_t off = 0; off < s.bytes.size();) {
          const ssize_t n = ::send(fd, s.bytes.data() + off, s.bytes.size() - off, MSG_NOSIGNAL);
          if (n <= 0) {
            open = false;
            break;
          }
          off += size_t(n);
        }
        if (!open) break;
      }
      if (counted) --active_;
    }
    Finish(fd);
  }

  void Finish(int fd) {
    std::lock_guard<std::mutex> lock(mu_);
    fds_.erase(std::remove(fds_.begin(), fds_.end(), fd), fds_.end());
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
  }

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<int> fds_;
  std::vector<std::thread> conn_threads_;
  std::vector<ScriptRequest> requests_;
  std::atomic<int> connections_{0}, active_{0}, max_active_{0};
};

}  // namespace brisk::test

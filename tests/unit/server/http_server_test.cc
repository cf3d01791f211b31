// HttpServer over real sockets: raw POSIX clients send exact bytes (including malformed and slow
// ones) and parse the answers themselves, so the transport is checked against the wire format.
#include "server/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/api_error.h"
#include "util/clock.h"

namespace brisk::server {
namespace {

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Polls `cond` until it holds or `timeout_s` passes.
template <typename Cond>
bool WaitFor(Cond cond, double timeout_s = 3) {
  double end = NowSeconds() + timeout_s;
  while (!cond()) {
    if (NowSeconds() > end) return false;
    SleepMs(5);
  }
  return true;
}

struct Response {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;                            // chunked bodies decoded
  std::vector<std::string> chunks;             // the chunks as sent
};

class Client {
 public:
  // `source`: the local address to connect from (127.0.0.2 looks like another client host).
  explicit Client(int port, int rcvbuf = 0, const char* source = nullptr) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (rcvbuf > 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    if (source) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      inet_pton(AF_INET, source, &local.sin_addr);
      bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof(local));
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~Client() { Close(); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Appends what arrives before `end` to buf_; false on EOF, error or timeout.
  bool Fill(double end) {
    pollfd p{fd_, POLLIN, 0};
    int wait_ms = static_cast<int>((end - NowSeconds()) * 1000);
    if (wait_ms < 0 || poll(&p, 1, wait_ms) <= 0) return false;
    char tmp[65536];
    ssize_t n = recv(fd_, tmp, sizeof(tmp), 0);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }

  // Waits until buf_ holds `needle` (or `n` bytes) and takes everything up to its end.
  std::optional<std::string> ReadUntil(std::string_view needle, double timeout_s = 5) {
    double end = NowSeconds() + timeout_s;
    while (buf_.find(needle) == std::string::npos) {
      if (!Fill(end)) return std::nullopt;
    }
    return Take(buf_.find(needle) + needle.size());
  }
  std::optional<std::string> ReadBytes(size_t n, double end) {
    while (buf_.size() < n) {
      if (!Fill(end)) return std::nullopt;
    }
    return Take(n);
  }
  std::string Take(size_t n) {
    std::string out = buf_.substr(0, n);
    buf_.erase(0, n);
    return out;
  }

  std::optional<Response> ReadResponse(double timeout_s = 5) {
    double end = NowSeconds() + timeout_s;
    auto head = ReadUntil("\r\n\r\n", timeout_s);
    if (!head) return std::nullopt;
    Response r;
    if (head->compare(0, 9, "HTTP/1.1 ") != 0) return std::nullopt;
    r.status = std::stoi(head->substr(9, 3));
    size_t line = head->find("\r\n") + 2;
    while (line < head->size() - 2) {
      size_t eol = head->find("\r\n", line);
      std::string field = head->substr(line, eol - line);
      size_t colon = field.find(':');
      std::string name = field.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string value = field.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      r.headers[name] = value;
      line = eol + 2;
    }
    if (r.headers["transfer-encoding"] == "chunked") {
      for (;;) {
        auto size_line = ReadUntil("\r\n", end - NowSeconds());
        if (!size_line) return std::nullopt;
        size_t size = std::stoul(*size_line, nullptr, 16);
        auto data = ReadBytes(size + 2, end);
        if (!data || data->substr(size) != "\r\n") return std::nullopt;
        if (size == 0) break;
        r.chunks.push_back(data->substr(0, size));
        r.body += r.chunks.back();
      }
    } else if (r.headers.count("content-length")) {
      auto body = ReadBytes(std::stoul(r.headers["content-length"]), end);
      if (!body) return std::nullopt;
      r.body = *body;
    }
    return r;
  }

  std::optional<Response> Ask(std::string_view request) {
    if (!Send(request)) return std::nullopt;
    return ReadResponse();
  }

  // True when the server closes the connection within `timeout_s` (data before that is dropped).
  bool WaitClosed(double timeout_s) {
    double end = NowSeconds() + timeout_s;
    while (Fill(end)) continue;
    return eof_;
  }

  std::string buf_;

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
};

// The handler shared by the tests: paths select behaviours; "/" and the rest echo the request.
struct Fixture {
  // Threads the handler starts (answers "from any thread"); joined before the server goes away.
  template <typename F>
  void Spawn(F f) {
    std::lock_guard<std::mutex> lock(mu);
    workers.push_back(std::async(std::launch::async, std::move(f)));
  }
  void JoinWorkers() {
    std::unique_lock<std::mutex> lock(mu);
    auto joining = std::move(workers);
    lock.unlock();  // each future's destructor waits for its thread
  }
  std::mutex mu;
  std::vector<std::future<void>> workers;
  std::shared_ptr<HttpExchange> held;  // "/hold": kept by the test
  std::atomic<int> calls{0};           // handler invocations
  std::atomic<int> disconnects{0};
  HttpHandler Handler() {
    return [this](HttpRequest&& req, std::shared_ptr<HttpExchange> ex) {
      calls++;
      if (req.path == "/hold" || req.path == "/holdstream") {
        ex->OnDisconnect([this] { disconnects++; });
        if (req.path == "/holdstream") {
          ex->StartStream(200, "text/event-stream");
          ex->Write("one");
        }
        std::lock_guard<std::mutex> lock(mu);
        held = ex;
        return;
      }
      if (req.path == "/stream") {
        Spawn([ex] {
          ex->StartStream(200, "text/event-stream", {{"X-Stream", "yes"}});
          for (int i = 0; i < 50; ++i) {
            ex->Write("data: " + std::to_string(i) + "\n\n");
            if (i == 10) ex->Write("");  // must not end the chunked body
          }
          ex->EndStream();
        });
        return;
      }
      if (req.path == "/late") {
        Spawn([ex] {
          SleepMs(100);
          ex->Respond(HttpResponse{200, "text/plain", {}, "late"});
        });
        return;
      }
      if (req.path == "/throw") throw std::runtime_error("boom");
      HttpResponse r;
      r.content_type = "text/plain";
      r.headers = {{"X-Extra", "1"}, {"X-Bad", "a\r\nX-Injected: 1"}};
      std::string names;
      for (const auto& h : req.headers) names += (names.empty() ? "" : ",") + h.first;
      const std::string* test = req.Header("x-test");
      r.body = req.method + " " + req.path + " q=" + req.query + " x-test=" + (test ? *test : "-") +
               " headers=" + names + " body=" + req.body;
      ex->Respond(std::move(r));
    };
  }
  std::shared_ptr<HttpExchange> Held() {
    std::lock_guard<std::mutex> lock(mu);
    return held;
  }
};

HttpLimits FastLimits() {
  HttpLimits l{.max_body_bytes = 1024, .max_header_bytes = 1024, .max_connections = 16};
  l.header_timeout_s = l.body_timeout_s = l.write_timeout_s = 1;
  l.idle_timeout_s = 2;
  return l;
}

class HttpServerTest : public ::testing::Test {
 protected:
  // By default with the API layer's error bodies, as `brisk serve` installs them.
  void Start(HttpLimits limits = FastLimits(), HttpErrorBody error_body = TransportErrorResponse) {
    auto r = HttpServer::Start("127.0.0.1", 0, 2, limits, f_.Handler(), std::move(error_body));
    ASSERT_TRUE(r.ok()) << r.status().message();
    server_ = std::move(r).value();
    port_ = server_->port();
  }
  void TearDown() override {
    f_.JoinWorkers();
    server_.reset();
  }
  // A fresh connection gets an echo answer.
  void ExpectServed() {
    Client c(port_);
    auto r = c.Ask("GET /ping HTTP/1.1\r\nHost: t\r\n\r\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "GET /ping q= x-test=- headers=host body=");
  }
  void ExpectError(const Response& r, int status, const std::string& message_part,
                   const std::string& type = "invalid_request_error") {
    EXPECT_EQ(r.status, status);
    EXPECT_EQ(r.headers.at("content-type"), "application/json");
    EXPECT_EQ(r.headers.at("connection"), "close");
    auto j = nlohmann::json::parse(r.body);
    EXPECT_EQ(j["error"]["type"], type);
    EXPECT_NE(j["error"]["message"].get<std::string>().find(message_part), std::string::npos)
        << r.body;
    EXPECT_TRUE(j["error"]["param"].is_null());
  }

  Fixture f_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

TEST_F(HttpServerTest, GetWithKeepAlive) {
  Start();
  Client c(port_);  // (port 0 asked for an ephemeral port; Client connects to the real one)
  auto r = c.Ask("GET /a/b?x=1&y=2 HTTP/1.1\r\nHost: t\r\nX-Test: Hello\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "GET /a/b q=x=1&y=2 x-test=Hello headers=host,x-test body=");
  EXPECT_EQ(r->headers["server"], "brisk");
  EXPECT_EQ(r->headers["content-type"], "text/plain");
  EXPECT_EQ(r->headers["x-extra"], "1");
  EXPECT_EQ(r->headers.count("x-bad"), 0u);  // a CR/LF in a value would inject headers
  EXPECT_EQ(r->headers.count("x-injected"), 0u);
  EXPECT_EQ(r->headers.count("connection"), 0u);
  r = c.Ask("GET /second HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "GET /second q= x-test=- headers=host body=");
  EXPECT_EQ(server_->open_connections(), 1u);
  EXPECT_EQ(f_.calls, 2);
}

TEST_F(HttpServerTest, PipelinedRequests) {
  Start();
  Client c(port_);
  // Two requests in one packet: both answered, in order.
  auto r = c.Ask(
      "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello world"
      "GET /next HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "POST /echo q= x-test=- headers=host,content-length body=hello world");
  r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "GET /next q= x-test=- headers=host body=");
  // A request arriving while /late is handled (during the disconnect watch read) is kept.
  ASSERT_TRUE(c.Send("GET /late HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(WaitFor([&] { return server_->active_exchanges() == 1; }));
  ASSERT_TRUE(c.Send("GET /after HTTP/1.1\r\nHost: t\r\n\r\n"));
  r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "late");
  r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "GET /after q= x-test=- headers=host body=");
}

TEST_F(HttpServerTest, ChunkedBodyAndExpectContinue) {
  Start();
  Client c(port_);
  ASSERT_TRUE(
      c.Send("POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
             "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "POST /c q= x-test=- headers=host,transfer-encoding body=hello world");
  ASSERT_TRUE(
      c.Send("POST /e HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_EQ(c.ReadUntil("\r\n\r\n", 2), "HTTP/1.1 100 Continue\r\n\r\n");
  r = c.Ask("abc");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "POST /e q= x-test=- headers=host,content-length,expect body=abc");
}

TEST_F(HttpServerTest, WithoutAnErrorBodyHookTransportErrorsArePlainText) {
  Start(FastLimits(), nullptr);
  Client c(port_);
  auto r = c.Ask("GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(2000, 'a') + "\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 431);
  EXPECT_EQ(r->headers.at("content-type"), "text/plain");
  EXPECT_EQ(r->body, "request header exceeds the limit of 1024 bytes\n");
}

TEST_F(HttpServerTest, BodyOverLimitIs413AndHeaderOverLimitIs431) {
  Start();
  {
    Client c(port_);
    ASSERT_TRUE(c.Send("POST /big HTTP/1.1\r\nHost: t\r\nContent-Length: 2000\r\n\r\n"));
    c.Send(std::string(2000, 'x'));  // may fail once the server has closed
    auto r = c.ReadResponse();
    ASSERT_TRUE(r);
    ExpectError(*r, 413, "1024 bytes");
    EXPECT_TRUE(c.WaitClosed(3));
  }
  {
    // A chunked body has no length up front: the parser's running limit catches it.
    Client c(port_);
    std::string chunk = "258\r\n" + std::string(600, 'y') + "\r\n";  // 0x258 = 600 bytes
    auto r = c.Ask("POST /big HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk +
                   chunk);
    ASSERT_TRUE(r);
    ExpectError(*r, 413, "request body exceeds");
    EXPECT_TRUE(c.WaitClosed(3));
  }
  {
    Client c(port_);
    auto r = c.Ask("GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(2000, 'a') + "\r\n\r\n");
    ASSERT_TRUE(r);
    ExpectError(*r, 431, "request header exceeds the limit of 1024 bytes");
    EXPECT_TRUE(c.WaitClosed(3));
  }
  EXPECT_EQ(f_.calls, 0);
  ExpectServed();  // the server goes on serving new connections
}

TEST_F(HttpServerTest, MalformedRequestsAre400) {
  Start();
  for (std::string bad : {"NOT A REQUEST\r\n\r\n", "GET / HTTP/1.1\r\nNo colon here\r\n\r\n",
                          "POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
                          "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"}) {
    Client c(port_);
    auto r = c.Ask(bad);
    ASSERT_TRUE(r) << bad;
    ExpectError(*r, 400, "malformed HTTP request");
    EXPECT_TRUE(c.WaitClosed(3));
  }
  EXPECT_EQ(f_.calls, 0);
}

TEST_F(HttpServerTest, SlowlorisIsCutOffAtTheHeaderDeadline) {
  Start();  // header_timeout_s = 1
  std::atomic<double> closed_after{-1};
  std::thread slow([&] {
    Client c(port_);
    std::string header = "GET /slow HTTP/1.1\r\nHost: t\r\nX-Pad: " + std::string(100, 'a');
    double start = NowSeconds();
    for (char ch : header) {  // one byte every 200 ms
      if (!c.Send(std::string(1, ch)) || c.WaitClosed(0.2)) break;
    }
    closed_after = NowSeconds() - start;
  });
  SleepMs(300);
  double t0 = NowSeconds();
  ExpectServed();  // others are served meanwhile
  EXPECT_LT(NowSeconds() - t0, 0.5);
  slow.join();
  EXPECT_GT(closed_after, 0.8);
  EXPECT_LT(closed_after, 1.6);
  EXPECT_EQ(f_.calls, 1);
}

TEST_F(HttpServerTest, IdleAndBodyTimeoutsClose) {
  HttpLimits limits = FastLimits();
  limits.idle_timeout_s = 0.5;
  limits.body_timeout_s = 0.5;
  Start(limits);
  Client idle(port_);
  ASSERT_TRUE(idle.Ask("GET / HTTP/1.1\r\nHost: t\r\n\r\n"));
  double t0 = NowSeconds();
  EXPECT_TRUE(idle.WaitClosed(3));
  EXPECT_GT(NowSeconds() - t0, 0.3);
  EXPECT_LT(NowSeconds() - t0, 1.5);

  Client partial(port_);
  ASSERT_TRUE(partial.Send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc"));
  t0 = NowSeconds();
  EXPECT_TRUE(partial.WaitClosed(3));
  EXPECT_LT(NowSeconds() - t0, 1.5);
  EXPECT_EQ(f_.calls, 1);
  EXPECT_TRUE(WaitFor([&] { return server_->open_connections() == 0; }));
}

TEST_F(HttpServerTest, ConnectionCloseIsHonoured) {
  Start();
  for (std::string req :
       {"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", "GET / HTTP/1.0\r\n\r\n"}) {
    Client c(port_);
    auto r = c.Ask(req);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->headers["connection"], "close");
    EXPECT_TRUE(c.WaitClosed(3));
  }
}

TEST_F(HttpServerTest, StreamFromAnotherThreadThenKeepAlive) {
  Start();
  Client c(port_);
  auto r = c.Ask("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->headers["content-type"], "text/event-stream");
  EXPECT_EQ(r->headers["cache-control"], "no-cache");
  EXPECT_EQ(r->headers["x-accel-buffering"], "no");
  EXPECT_EQ(r->headers["x-stream"], "yes");
  ASSERT_EQ(r->chunks.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(r->chunks[i], "data: " + std::to_string(i) + "\n\n");
  r = c.Ask("GET /again HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "GET /again q= x-test=- headers=host body=");
  EXPECT_TRUE(WaitFor([&] { return server_->active_exchanges() == 0; }));
}

TEST_F(HttpServerTest, ClientClosingMidStreamDisconnects) {
  Start();
  Client c(port_);
  ASSERT_TRUE(c.Send("GET /holdstream HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(c.ReadUntil("one\r\n"));
  ASSERT_TRUE(WaitFor([&] { return f_.Held() != nullptr; }));
  auto ex = f_.Held();
  EXPECT_FALSE(ex->disconnected());
  EXPECT_EQ(server_->active_exchanges(), 1u);
  c.Close();
  ASSERT_TRUE(WaitFor([&] { return f_.disconnects == 1; }));
  EXPECT_TRUE(ex->disconnected());
  EXPECT_TRUE(WaitFor([&] { return server_->active_exchanges() == 0; }));
  // Later calls are ignored; a callback set now runs at once.
  ex->Write("late");
  ex->EndStream();
  std::promise<void> late;
  ex->OnDisconnect([&] { late.set_value(); });
  EXPECT_EQ(late.get_future().wait_for(std::chrono::seconds(2)), std::future_status::ready);
  EXPECT_EQ(f_.disconnects, 1);
  EXPECT_EQ(ex->queued_bytes(), 0u);
  EXPECT_TRUE(WaitFor([&] { return server_->open_connections() == 0; }));
}

TEST_F(HttpServerTest, StalledWriteTimesOut) {
  HttpLimits limits = FastLimits();
  limits.write_timeout_s = 0.5;
  Start(limits);
  Client c(port_, /*rcvbuf=*/4096);
  ASSERT_TRUE(c.Send("GET /hold HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(WaitFor([&] { return f_.Held() != nullptr; }));
  auto ex = f_.Held();
  ex->StartStream(200, "text/plain");
  // The client reads nothing: far more than the socket buffers hold stays queued.
  for (int i = 0; i < 256; ++i) ex->Write(std::string(64 << 10, 'z'));
  EXPECT_GT(ex->queued_bytes(), 0u);
  ASSERT_TRUE(WaitFor([&] { return f_.disconnects == 1; }, 5));
  EXPECT_TRUE(ex->disconnected());
  EXPECT_TRUE(WaitFor([&] { return ex->queued_bytes() == 0; }));
  EXPECT_TRUE(WaitFor([&] { return server_->active_exchanges() == 0; }));
}

TEST_F(HttpServerTest, DelayedRespondFromAnotherThread) {
  Start();
  Client c(port_);
  double t0 = NowSeconds();
  auto r = c.Ask("GET /late HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_GE(NowSeconds() - t0, 0.1);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "late");
  EXPECT_TRUE(WaitFor([&] { return server_->active_exchanges() == 0; }));
  // A handler that throws gets a 500 for its request; the connection goes on.
  r = c.Ask("GET /throw HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_NE(r->body.find("boom"), std::string::npos);
}

TEST_F(HttpServerTest, StopAcceptingLetsOpenStreamsFinish) {
  Start();
  Client c(port_);
  ASSERT_TRUE(c.Send("GET /holdstream HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(WaitFor([&] { return f_.Held() != nullptr; }));
  server_->StopAccepting();
  EXPECT_TRUE(WaitFor([&] { return !Client(port_).connected(); }));
  auto ex = f_.Held();
  ex->Write("two");
  ex->EndStream();
  auto r = c.ReadResponse();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->chunks, (std::vector<std::string>{"one", "two"}));
  EXPECT_FALSE(ex->disconnected());
  EXPECT_EQ(f_.disconnects, 0);
}

TEST_F(HttpServerTest, StopWhileTheHandlerHoldsAnExchange) {
  Start();
  Client c(port_);
  ASSERT_TRUE(c.Send("GET /hold HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(WaitFor([&] { return f_.Held() != nullptr; }));
  auto ex = f_.Held();
  server_->Stop();
  EXPECT_EQ(f_.disconnects, 1);  // Stop closed the connection before returning
  EXPECT_TRUE(ex->disconnected());
  EXPECT_EQ(server_->open_connections(), 0u);
  EXPECT_EQ(server_->active_exchanges(), 0u);
  EXPECT_TRUE(c.WaitClosed(2));
  ex->Respond(HttpResponse{});
  ex->StartStream(200, "text/plain");
  ex->Write("x");
  ex->EndStream();
  ex->OnDisconnect([] {});
  server_->Stop();  // idempotent
  server_.reset();
  ex->Write("after the server is gone");
  ex->EndStream();
  EXPECT_TRUE(ex->disconnected());
  EXPECT_EQ(f_.disconnects, 1);
}

TEST_F(HttpServerTest, AtTheLimitTheLongestIdleConnectionMakesRoom) {
  HttpLimits limits = FastLimits();
  limits.max_connections = 2;
  Start(limits);
  Client a(port_);
  ASSERT_TRUE(a.Ask("GET / HTTP/1.1\r\nHost: t\r\n\r\n"));  // keep-alive: idle since now
  SleepMs(20);
  Client b(port_);
  ASSERT_TRUE(b.Ask("GET / HTTP/1.1\r\nHost: t\r\n\r\n"));
  EXPECT_EQ(server_->open_connections(), 2u);
  ExpectServed();  // takes a's slot: a waited longest
  EXPECT_TRUE(a.WaitClosed(2));
  EXPECT_EQ(server_->admission().evicted_total, 1u);
  EXPECT_EQ(server_->admission().refused_total, 0u);
}

TEST_F(HttpServerTest, AtTheLimitWithEveryConnectionBusyTheNewOneGets503) {
  HttpLimits limits = FastLimits();
  limits.max_connections = 1;
  Start(limits);
  Client holder(port_);
  ASSERT_TRUE(holder.Send("GET /hold HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(WaitFor([&] { return f_.Held() != nullptr; }));
  {
    Client over(port_);
    auto r = over.ReadResponse();  // answered without sending anything
    ASSERT_TRUE(r);
    ExpectError(*r, 503, "connection limit", "server_error");
    EXPECT_NE(r->body.find("--max-connections 1"), std::string::npos) << r->body;
    EXPECT_EQ(r->headers.at("retry-after"), "1");
    EXPECT_TRUE(over.WaitClosed(3));
  }
  EXPECT_EQ(server_->admission().refused_total, 1u);
  f_.Held()->Respond(HttpResponse{200, "text/plain", {}, "done"});
  auto done = holder.ReadResponse();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->body, "done");
  ExpectServed();  // the holder is idle again: its slot is taken
}

TEST_F(HttpServerTest, PerClientLimitLeavesOtherClientsAlone) {
  HttpLimits limits = FastLimits();
  limits.max_connections_per_client = 1;
  Start(limits);
  Client holder(port_);
  ASSERT_TRUE(holder.Send("GET /hold HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(WaitFor([&] { return f_.Held() != nullptr; }));
  {
    Client same(port_);  // 127.0.0.1 again, whose one slot is busy
    auto r = same.ReadResponse();
    ASSERT_TRUE(r);
    ExpectError(*r, 503, "too many connections from 127.0.0.1", "server_error");
  }
  Client other(port_, 0, "127.0.0.2");
  ASSERT_TRUE(other.connected());
  auto r = other.Ask("GET /ping HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  f_.Held()->Respond(HttpResponse{200, "text/plain", {}, "done"});
}

// Issue 35: one client holding every slot with half-sent headers (and re-opening each one it
// loses) must not lock out requests that send their header at once.
TEST_F(HttpServerTest, AFloodOfHalfSentHeadersDoesNotLockOutRequests) {
  HttpLimits limits = FastLimits();
  limits.max_connections = 64;
  limits.header_timeout_s = 30;  // the flood is never cut off by the deadline during the test
  Start(limits);
  std::atomic<bool> stop{false};
  std::atomic<int> reopened{0};
  std::thread flooder([&] {
    std::vector<std::unique_ptr<Client>> flood;
    for (int i = 0; i < 80; ++i) {  // more than the limit
      flood.push_back(std::make_unique<Client>(port_, 0, "127.0.0.2"));
      flood.back()->Send("GET / HTTP/1.1\r\nHost: flood\r\n");
    }
    while (!stop) {
      for (auto& c : flood) {  // re-open what the server closed
        pollfd p{c->fd(), POLLIN, 0};
        if (poll(&p, 1, 0) > 0) {
          c = std::make_unique<Client>(port_, 0, "127.0.0.2");
          c->Send("GET / HTTP/1.1\r\nHost: flood\r\n");
          reopened++;
        }
      }
      SleepMs(2);
    }
  });
  SleepMs(200);
  int ok = 0;
  for (int i = 0; i < 100; ++i) {
    Client c(port_);
    auto r = c.Ask("GET /ping HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    if (r && r->status == 200) ok++;
  }
  stop = true;
  flooder.join();
  EXPECT_GE(ok, 95);
  EXPECT_GT(reopened.load(), 0);  // the flood really was pushing against the limit
}

TEST(HttpServerStartTest, BindErrorsNameTheAddress) {
  auto handler = [](HttpRequest&&, std::shared_ptr<HttpExchange> ex) { ex->Respond({}); };
  auto first = HttpServer::Start("127.0.0.1", 0, 1, HttpLimits{}, handler);
  ASSERT_TRUE(first.ok()) << first.status().message();
  int port = first.value()->port();
  auto second = HttpServer::Start("127.0.0.1", port, 1, HttpLimits{}, handler);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.message(), "127.0.0.1:" + std::to_string(port) + ": address already in use");
  auto range = HttpServer::Start("127.0.0.1", 70000, 1, HttpLimits{}, handler);
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.message(), "127.0.0.1:70000: port out of range (0-65535)");
  auto no_handler = HttpServer::Start("127.0.0.1", 0, 1, HttpLimits{}, nullptr);
  EXPECT_FALSE(no_handler.ok());
}

}  // namespace
}  // namespace brisk::server

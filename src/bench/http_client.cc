// The same Beast configuration as brisk_server (src/CMakeLists.txt), so Beast's inline functions
// compile identically in both libraries of the one `brisk` binary (beast::string_view in
// particular changes type with the second macro).
#ifndef BOOST_ASIO_NO_DEPRECATED
#define BOOST_ASIO_NO_DEPRECATED
#endif
#ifndef BOOST_BEAST_USE_STD_STRING_VIEW
#define BOOST_BEAST_USE_STD_STRING_VIEW
#endif

#include "bench/http_client.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

namespace brisk {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

// Response headers larger than this are a broken server, not something to measure.
constexpr uint32_t kMaxHeaderBytes = 64 << 10;
constexpr uint64_t kMaxBodyBytes = uint64_t(1) << 32;
constexpr size_t kMaxQuoted = 200;  // bytes of a body or line quoted in an error message

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

// A body or line for an error message: one line, bounded.
std::string Quote(std::string_view s) {
  std::string out(s.substr(0, kMaxQuoted));
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  if (s.size() > kMaxQuoted) out += "...";
  return out;
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

}  // namespace

std::string HttpUrl::HostHeader() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + port;
}

std::string HttpUrl::ToString() const { return "http://" + HostHeader() + base_path; }

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  const std::string what = "--url '" + std::string(url) + "'";
  std::string_view rest = url;
  if (StartsWithNoCase(rest, "https://"))
    return Status::Error(what + ": https is not supported (use plain http to a local server)");
  if (StartsWithNoCase(rest, "http://")) {
    rest.remove_prefix(7);
  } else if (rest.find("://") != std::string_view::npos) {
    return Status::Error(what + ": only http:// URLs are supported");
  }
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos)
    return Status::Error(what + ": credentials in the URL are not supported (use --api-key)");
  HttpUrl u;
  std::string_view port;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return Status::Error(what + ": unclosed '[' in the host");
    u.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return Status::Error(what + ": junk after the IPv6 address");
      port = after.substr(1);
    }
  } else {
    const size_t colon = authority.find(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (u.host.empty()) return Status::Error(what + ": no host");
  if (!port.empty()) {
    int p = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || p > 65535) return Status::Error(what + ": bad port");
      p = p * 10 + (c - '0');
    }
    if (p < 1 || p > 65535) return Status::Error(what + ": port must be in 1..65535");
    u.port = std::to_string(p);
  }
  if (path.find_first_of("?#") != std::string_view::npos)
    return Status::Error(what + ": a query or fragment makes no sense in a base URL");
  std::string base(path);
  while (!base.empty() && base.back() == '/') base.pop_back();
  // People paste the OpenAI base URL (".../v1"); the endpoints below add /v1 themselves.
  if (base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0)
    base.resize(base.size() - 3);
  while (!base.empty() && base.back() == '/') base.pop_back();
  u.base_path = base;
  return u;
}

// ---- SSE ------------------------------------------------------------------------------------

Status SseParser::Feed(std::string_view bytes, double t_s, std::vector<SseEvent>& out) {
  for (char c : bytes) {
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') continue;  // the second half of "\r\n"
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      Status st = Line(partial_line_, t_s, out);
      partial_line_.clear();
      if (!st.ok()) return st;
    } else {
      partial_line_ += c;
    }
  }
  return Status::Ok();
}

Status SseParser::Line(std::string_view line, double t_s, std::vector<SseEvent>& out) {
  if (line.empty()) {  // the end of an event
    if (in_event_ && has_data_) out.push_back({t_s, data_});
    data_.clear();
    in_event_ = has_data_ = false;
    return Status::Ok();
  }
  if (line[0] == ':') return Status::Ok();  // comment (keep-alive pings)
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (has_data_) data_ += '\n';
    data_.append(value);
    in_event_ = has_data_ = true;
    return Status::Ok();
  }
  if (field == "event" || field == "id" || field == "retry") {
    in_event_ = true;
    return Status::Ok();
  }
  return Status::Error("malformed SSE line '" + Quote(line) + "'");
}

Status SseParser::Finish() const {
  if (!partial_line_.empty() || in_event_)
    return Status::Error(
        "malformed SSE: the stream ended inside an event (no blank line after it)");
  return Status::Ok();
}

std::string DescribeHttpFailure(const HttpCallResult& r) {
  if (r.status != 0 && (r.status < 200 || r.status > 299)) {
    std::string s = "HTTP " + std::to_string(r.status);
    std::string detail;
    auto j = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("error")) {
      const auto& e = j["error"];
      if (e.is_object() && e.contains("message") && e["message"].is_string())
        detail = e["message"].get<std::string>();
      else if (e.is_string())
        detail = e.get<std::string>();
    }
    if (detail.empty()) detail = r.body;
    if (!detail.empty()) s += ": " + Quote(detail);
    return s;
  }
  return r.error.ok() ? "" : r.error.message();
}

// ---- the client loop ------------------------------------------------------------------------

namespace {

struct Exchange {
  std::function<void(HttpCallResult)> done;
  HttpCallResult result;
  http::request<http::string_body> request;
  std::optional<http::response_parser<http::string_body>> parser;
  SseParser sse;
  bool header_seen = false;
  bool reused = false;   // sent on a connection kept alive from an earlier exchange
  bool retried = false;  // already reconnected once
  Clock::time_point deadline;
};

struct Conn {
  explicit Conn(net::io_context& ioc) : stream(ioc) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  bool connected = false;
  bool busy = false;
  std::unique_ptr<Exchange> ex;  // the exchange in flight (a parser cannot be reassigned)
};

}  // namespace

struct HttpClientLoop::Impl {
  Impl(HttpUrl u, HttpClientOptions o) : url(std::move(u)), options(std::move(o)) {}

  net::io_context ioc;  // first: outlives the sockets
  const HttpUrl url;
  const HttpClientOptions options;
  std::optional<tcp::resolver::results_type> endpoints;
  std::vector<std::unique_ptr<Conn>> conns;

  void Send(Conn& c, HttpCallRequest req, std::function<void(HttpCallResult)> done) {
    BRISK_CHECK(!c.busy);
    c.busy = true;
    c.ex = std::make_unique<Exchange>();
    Exchange& ex = *c.ex;
    ex.done = std::move(done);
    ex.result.start_s = NowSeconds();
    ex.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(options.total_timeout_s));
    ex.request.method(req.method == "GET" ? http::verb::get : http::verb::post);
    ex.request.target(req.target);
    ex.request.version(11);
    ex.request.set(http::field::host, url.HostHeader());
    ex.request.set(http::field::user_agent, "brisk-bench/" BRISK_VERSION);
    ex.request.set(http::field::accept, "application/json, text/event-stream");
    for (const auto& [name, value] : options.headers) ex.request.set(name, value);
    if (ex.request.method() == http::verb::post) {
      ex.request.set(http::field::content_type, req.content_type);
      ex.request.body() = std::move(req.body);
    }
    ex.request.keep_alive(true);
    ex.request.prepare_payload();
    ex.reused = c.connected;
    if (c.connected)
      Write(c);
    else
      Connect(c);
  }

  void Connect(Conn& c) {
    if (!endpoints) {
      tcp::resolver resolver(ioc);
      beast::error_code ec;
      auto r = resolver.resolve(url.host, url.port, ec);
      if (ec) {  // posted: `done` runs inside Run(), never inside Send()
        net::post(ioc, [this, &c, m = "cannot resolve " + url.host + ": " + ec.message()] {
          Fail(c, m);
        });
        return;
      }
      endpoints = std::move(r);
    }
    const auto remaining = c.ex->deadline - Clock::now();
    const auto connect_timeout = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(options.connect_timeout_s));
    c.stream.expires_after(std::min(remaining, connect_timeout));
    c.stream.async_connect(*endpoints, [this, &c](beast::error_code ec, const tcp::endpoint&) {
      if (ec == beast::error::timeout)
        return Fail(c, "connect to " + url.HostHeader() + ": no answer within " +
                           Seconds(options.connect_timeout_s));
      if (ec) return Fail(c, "connect to " + url.HostHeader() + ": " + ec.message());
      c.connected = true;
      beast::error_code ignored;
      c.stream.socket().set_option(tcp::no_delay(true), ignored);  // small requests, no batching
      Write(c);
    });
  }

  void Write(Conn& c) {
    c.stream.expires_at(c.ex->deadline);  // one deadline for the rest of the exchange
    http::async_write(c.stream, c.ex->request, [this, &c](beast::error_code ec, size_t) {
      if (ec) {
        if (CanRetry(c)) return Retry(c);
        return Fail(c, Describe(ec, "sending the request"));
      }
      c.ex->parser.emplace();
      c.ex->parser->header_limit(kMaxHeaderBytes);
      c.ex->parser->body_limit(kMaxBodyBytes);
      Read(c);
    });
  }

  void Read(Conn& c) {
    http::async_read_some(c.stream, c.buffer, *c.ex->parser,
                          [this, &c](beast::error_code ec, size_t) {
                            // Stamped first: everything parsed from this read arrived by now.
                            const double t = NowSeconds();
                            if (Status st = Consume(c, t); !st.ok()) return Fail(c, st.message());
                            if (ec) {
                              if (CanRetry(c)) return Retry(c);
                              return Fail(c, Describe(ec, "reading the response"));
                            }
                            if (!c.ex->parser->is_done()) return Read(c);
                            if (c.ex->result.event_stream)
                              if (Status st = c.ex->sse.Finish(); !st.ok())
                                return Fail(c, st.message());
                            if (!c.ex->result.event_stream)
                              c.ex->result.body = std::move(c.ex->parser->get().body());
                            const bool keep_alive = c.ex->parser->get().keep_alive();
                            c.ex->result.end_s = t;
                            if (!keep_alive) Close(c);
                            Complete(c);
                          });
  }

  // Takes what the parser has produced so far: the header once, then new event-stream bytes.
  Status Consume(Conn& c, double t) {
    Exchange& ex = *c.ex;
    if (!ex.parser->is_header_done()) return Status::Ok();
    auto& msg = ex.parser->get();
    if (!ex.header_seen) {
      ex.header_seen = true;
      ex.result.status = int(msg.result_int());
      ex.result.content_type = std::string(msg[http::field::content_type]);
      ex.result.server = std::string(msg[http::field::server]);
      ex.result.event_stream = StartsWithNoCase(ex.result.content_type, "text/event-stream");
    }
    if (!ex.result.event_stream || msg.body().empty()) return Status::Ok();
    Status st = ex.sse.Feed(msg.body(), t, ex.result.events);
    // The parser appends at the body's current end, so clearing keeps memory flat on long
    // streams.
    msg.body().clear();
    return st;
  }

  // A kept-alive connection the server closed meanwhile fails before any byte of the answer;
  // that is no failure of the request, so it is sent once more on a fresh connection.
  bool CanRetry(const Conn& c) const {
    return c.ex->reused && !c.ex->retried && !(c.ex->parser && c.ex->parser->got_some());
  }

  void Retry(Conn& c) {
    Close(c);
    c.ex->retried = true;
    c.ex->reused = false;
    c.ex->parser.reset();
    Connect(c);
  }

  std::string Describe(beast::error_code ec, const char* during) const {
    if (ec == beast::error::timeout)
      return "no complete response within " + Seconds(options.total_timeout_s) + " (timeout)";
    if (ec == http::error::partial_message)
      return "connection closed before the end of the response (truncated)";
    if (ec == http::error::end_of_stream) return "connection closed without a response";
    if (ec.category() == http::make_error_code(http::error::end_of_stream).category())
      return "malformed HTTP response: " + ec.message();
    return std::string(during) + ": " + ec.message();
  }

  void Close(Conn& c) {
    beast::error_code ignored;
    c.stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    c.stream.socket().close(ignored);
    c.connected = false;
    c.buffer.consume(c.buffer.size());
  }

  void Fail(Conn& c, std::string message) {
    c.ex->result.error = Status::Error(std::move(message));
    c.ex->result.end_s = NowSeconds();
    if (c.ex->parser && !c.ex->result.event_stream && c.ex->parser->is_header_done())
      c.ex->result.body = std::move(c.ex->parser->get().body());  // partial; error documents
    Close(c);
    Complete(c);
  }

  void Complete(Conn& c) {
    // Moved out first: `done` may Send() on this connection again, which resets c.ex->
    auto done = std::move(c.ex->done);
    HttpCallResult result = std::move(c.ex->result);
    c.ex->parser.reset();
    c.busy = false;
    done(std::move(result));
  }
};

HttpClientLoop::HttpClientLoop(HttpUrl url, HttpClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(url), std::move(options))) {}

HttpClientLoop::~HttpClientLoop() = default;

int HttpClientLoop::AddConnection() {
  impl_->conns.push_back(std::make_unique<Conn>(impl_->ioc));
  return int(impl_->conns.size()) - 1;
}

void HttpClientLoop::Send(int conn, HttpCallRequest request,
                          std::function<void(HttpCallResult)> done) {
  BRISK_CHECK(conn >= 0 && size_t(conn) < impl_->conns.size());
  impl_->Send(*impl_->conns[size_t(conn)], std::move(request), std::move(done));
}

void HttpClientLoop::Run() {
  impl_->ioc.run();
  impl_->ioc.restart();
}

void HttpClientLoop::RunFor(double seconds) {
  impl_->ioc.run_for(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(seconds, 0.0))));
  if (impl_->ioc.stopped()) impl_->ioc.restart();
}

HttpCallResult HttpCall(const HttpUrl& url, const HttpClientOptions& options,
                        HttpCallRequest request) {
  HttpClientLoop loop(url, options);
  HttpCallResult out;
  loop.Send(loop.AddConnection(), std::move(request),
            [&out](HttpCallResult r) { out = std::move(r); });
  loop.Run();
  return out;
}

bool WaitWhileLoading(const HttpUrl& url, const HttpClientOptions& options, double max_wait_s,
                      bool progress) {
  constexpr double kPollTimeoutS = 5;
  constexpr auto kPollDelay = std::chrono::milliseconds(250);
  HttpClientOptions opts = options;
  opts.total_timeout_s = std::min(opts.total_timeout_s, kPollTimeoutS);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(max_wait_s);
  for (bool waited = false;; waited = true) {
    HttpCallRequest req;
    req.method = "GET";
    req.target = url.base_path + "/health";
    const HttpCallResult r = HttpCall(url, opts, std::move(req));
    if (r.status != 503 || std::chrono::steady_clock::now() >= deadline) return waited;
    if (!waited && progress)
      std::fprintf(stderr, "waiting for the server: GET /health answers 503 (%.80s)\n",
                   r.body.c_str());
    std::this_thread::sleep_for(kPollDelay);
  }
}

}  // namespace brisk

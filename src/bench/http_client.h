// A small HTTP/1.1 client for `brisk bench http` (bench/http_bench.h), on Boost.Beast.
//
// Load generation on a small machine that also runs the server must not add its own scheduling
// noise: every connection of a benchmark level lives on one io_context driven by one thread, so C
// concurrent streams cost C sockets, not C threads competing with the server for the cores. Each
// read is stamped with the steady clock the moment it completes, and every Server-Sent Event
// ("data:" lines up to a blank line) carries the time of the read that completed it.
//
// Nothing here can hang: connecting has its own timeout and a whole exchange (send -> last byte)
// has a total deadline; Boost errors arrive as error codes and become Status messages.
// Boost stays inside http_client.cc, so users of this header need no Boost includes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/clock.h"  // NowSeconds: the time base of every timestamp below
#include "util/status.h"

namespace brisk {

// http://host[:port][/base]. Only plain http: benchmarks run next to the server.
struct HttpUrl {
  std::string host;  // "127.0.0.1", "localhost", "::1" (brackets removed)
  std::string port = "80";
  std::string base_path;  // "" or "/prefix" (no trailing slash); a trailing "/v1" is dropped
  std::string HostHeader() const;  // "host:port", IPv6 in brackets
  std::string ToString() const;    // "http://host:port/base"
};
Result<HttpUrl> ParseHttpUrl(std::string_view url);

struct HttpClientOptions {
  double connect_timeout_s = 10;
  double total_timeout_s = 600;  // request start -> whole response, connecting included
  // Sent with every request (e.g. {"Authorization", "Bearer ..."}).
  std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpCallRequest {
  std::string method = "POST";  // "GET" or "POST"
  std::string target;           // path (+ query), the URL's base path already prepended
  std::string body;             // POST only
  std::string content_type = "application/json";
};

// One "data:" event of a text/event-stream response: its data lines joined with '\n', and when
// the read that completed it finished.
struct SseEvent {
  double t_s = 0;
  std::string data;
};

// Incremental Server-Sent Events parser: bytes may be split anywhere (mid-line, mid-"\r\n").
// Lines other than data:, event:, id:, retry: and ":" comments are reported as malformed, so a
// server that streams bare JSON lines is caught instead of measured as zero tokens.
class SseParser {
 public:
  // Parses `bytes` that arrived at `t_s`; complete events are appended to `out`.
  Status Feed(std::string_view bytes, double t_s, std::vector<SseEvent>& out);
  // At the end of the body: an error when it stops inside an event (no blank line after it).
  Status Finish() const;

 private:
  Status Line(std::string_view line, double t_s, std::vector<SseEvent>& out);
  std::string partial_line_;
  std::string data_;
  bool in_event_ = false;  // a field line seen since the last blank line
  bool has_data_ = false;  // a data: line among them
  bool after_cr_ = false;  // the previous chunk ended in '\r' ("\r\n" split across chunks)
};

struct HttpCallResult {
  // Transport or framing failure: connect error, timeout, connection closed before the end of
  // the response, malformed chunked encoding or SSE. What arrived before it is kept below.
  Status error;
  int status = 0;  // HTTP status; 0 when no header arrived
  std::string content_type;
  std::string server;            // the Server header, if any
  bool event_stream = false;     // Content-Type text/event-stream: data went to `events`
  std::string body;              // other bodies (JSON, error documents)
  std::vector<SseEvent> events;  // event-stream bodies
  double start_s = 0;            // request started (before connecting, if it had to)
  double end_s = 0;              // response complete, or the failure
};

// "HTTP 500: <error.message>" for a non-2xx answer (the body itself when it is not an OpenAI
// error document), else the transport error's message; "" for a clean success.
std::string DescribeHttpFailure(const HttpCallResult& r);

// Many keep-alive connections on one io_context. Not thread-safe: Send() and Run() are called
// from one thread, callbacks run on it too (inside Run()), and may call Send() again.
class HttpClientLoop {
 public:
  HttpClientLoop(HttpUrl url, HttpClientOptions options);
  ~HttpClientLoop();
  HttpClientLoop(const HttpClientLoop&) = delete;
  HttpClientLoop& operator=(const HttpClientLoop&) = delete;

  // A new connection slot (connected on its first Send); returns its id.
  int AddConnection();
  // Sends on connection `conn`, which must have no request in flight. The connection is reused
  // when the previous response allowed keep-alive; a reused connection that the server had
  // closed is reconnected once, transparently. `done` always runs exactly once.
  void Send(int conn, HttpCallRequest request, std::function<void(HttpCallResult)> done);
  // Runs until no request is in flight.
  void Run();
  // Runs callbacks for at most `seconds`; returns sooner when no request is in flight (then it
  // does not wait: a caller with nothing in flight sleeps on its own schedule).
  void RunFor(double seconds);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One request on a fresh connection, synchronously (for /metrics, /v1/models).
HttpCallResult HttpCall(const HttpUrl& url, const HttpClientOptions& options,
                        HttpCallRequest request);

// While GET /health answers 503 (the server is still loading its model: brisk, vLLM and
// llama-server all say so there) polls it every 250 ms, for at most max_wait_s; true when it
// waited. Anything else (200, no /health route, no server at all) ends the wait at once: the
// requests that follow show what is wrong. progress: one stderr line when the wait starts.
bool WaitWhileLoading(const HttpUrl& url, const HttpClientOptions& options, double max_wait_s,
                      bool progress);

}  // namespace brisk

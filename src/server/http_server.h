// HTTP/1.1 transport for `brisk serve` (DESIGN §3 "HTTP threads", §6 "Limits"), on
// Boost.Beast/Asio. It knows nothing about OpenAI or the engine (the body of its own error
// responses comes from an HttpErrorBody the caller installs): it parses requests within hard
// limits, hands each complete request to one handler, and carries the handler's answer back — a
// whole response, or a stream of pieces (Server-Sent Events) that may be produced on any thread
// (the engine thread's request sinks). Slow or vanished clients never block anyone: headers and
// bodies must arrive within their timeouts, writes that stall past the write timeout close the
// connection, and a client that goes away is reported to the handler through the exchange's
// disconnect callback.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/connection_admission.h"
#include "util/status.h"

namespace brisk::server {

struct HttpLimits {
  size_t max_body_bytes = 8u << 20;     // larger bodies: 413, connection closed
  size_t max_header_bytes = 16u << 10;  // request line + headers; larger: 431, closed
  double header_timeout_s = 10;         // the whole header must arrive within this (slowloris)
  double body_timeout_s = 30;           // the whole body must arrive within this
  double write_timeout_s = 30;          // a response (or one queued stream piece) must drain
  double idle_timeout_s = 60;           // keep-alive connection waiting for its next request
  // Connections open at once, in all and per client address (<= 0: no limit). A connection over
  // a limit takes the slot of the longest-idle one (waiting for a request header), or is answered
  // 503 and closed when all are busy (connection_admission.h).
  int max_connections = 1024;
  int max_connections_per_client = 0;
};

struct HttpRequest {
  std::string method;                                        // "GET", "POST", ...
  std::string target;                                        // as sent: path + optional "?query"
  std::string path;                                          // target without the query
  std::string query;                                         // after '?', or ""
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  std::string remote;  // peer "ip:port"
  // The first header with this (lower-case) name, or nullptr.
  const std::string* Header(std::string_view lower_name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers (Retry-After, ...)
  std::string body;
};

// One request/response exchange. Every method is thread-safe and returns at once; the work is
// posted to the connection's strand. Exactly one of Respond() or StartStream()...EndStream()
// must be called; calls after a disconnect are ignored.
class HttpExchange {
 public:
  virtual ~HttpExchange() = default;
  virtual void Respond(HttpResponse response) = 0;
  // Streaming response (chunked transfer encoding). `headers` are extra headers.
  virtual void StartStream(int status, std::string content_type,
                           std::vector<std::pair<std::string, std::string>> headers = {}) = 0;
  virtual void Write(std::string piece) = 0;  // queued, sent in order
  virtual void EndStream() = 0;               // after the queued pieces; then keep-alive resumes
  // Runs once, on an HTTP thread, when the client closes or the connection fails before the
  // response completed (set it before submitting work that needs cancelling). If the client is
  // already gone when it is set, it runs at once.
  virtual void OnDisconnect(std::function<void()> callback) = 0;
  virtual bool disconnected() const = 0;
  virtual size_t queued_bytes() const = 0;  // stream bytes written by the handler, not yet sent
};

using HttpHandler = std::function<void(HttpRequest&& request, std::shared_ptr<HttpExchange> ex)>;
// Builds the response for a failure of the transport itself (413, 431, 400 malformed request, 500
// when the handler throws): the layer above installs one so these look like its own errors.
// Without one the body is the message as text/plain.
using HttpErrorBody = std::function<HttpResponse(int status, const std::string& message)>;

class HttpServer {
 public:
  // Binds host:port (port 0: an ephemeral port, see port()) and starts `threads` I/O threads.
  // Errors: the address cannot be parsed or bound ("127.0.0.1:8080: address already in use").
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& host, int port, int threads,
                                                   const HttpLimits& limits, HttpHandler handler,
                                                   HttpErrorBody error_body = {});
  virtual ~HttpServer() = default;  // = Stop()
  virtual int port() const = 0;
  // Stops accepting new connections (drain); open connections go on.
  virtual void StopAccepting() = 0;
  // Connections open now / exchanges whose response has not completed.
  virtual size_t open_connections() const = 0;
  virtual size_t active_exchanges() const = 0;
  // The admission policy's counts: connections admitted and open, refused, evicted.
  virtual AdmissionCounters admission() const = 0;
  // Closes every connection and joins the I/O threads. Idempotent.
  virtual void Stop() = 0;
};

}  // namespace brisk::server

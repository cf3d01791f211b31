// Internals of the HTTP/1.1 transport (http_server.h): the state every connection shares with the
// server, one accepted connection, and the exchange handed to the handler. Only http_server.cc and
// http_connection.cc include this file.
//
// Threading: every Connection member runs on the connection's strand (the executor of its
// socket). Exchange methods may be called from any thread; they post to that strand. Lifetimes:
// the io_context lives in ServerCore, which every Connection holds by shared_ptr, so an exchange
// the handler keeps after Stop() (or after the server is gone) still points at live objects.
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
// GCC 12 under -fsanitize=address reports a false -Wmaybe-uninitialized inside Beast's parser
// (a boost::optional in basic_parser.hpp); the diagnostic is about Boost's code, not ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#pragma GCC diagnostic pop
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/connection_admission.h"
#include "server/http_server.h"

namespace brisk::server::http_internal {

namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

class Connection;

// Shared by the server and every connection (see the lifetime note above).
struct ServerCore {
  ServerCore(const HttpLimits& l, HttpHandler h, HttpErrorBody e, int threads)
      : ioc(threads),
        limits(l),
        handler(std::move(h)),
        error_body(std::move(e)),
        admission({l.max_connections, l.max_connections_per_client}) {}

  // The response for a failure of the transport itself (error_body's, else plain text).
  HttpResponse ErrorResponse(int status, const std::string& message) const;

  net::io_context ioc;  // declared first: destroyed last
  const HttpLimits limits;
  const HttpHandler handler;
  const HttpErrorBody error_body;
  std::atomic<size_t> open_connections{0};
  std::atomic<size_t> active_exchanges{0};
  std::atomic<bool> draining{false};  // StopAccepting() called: answer with Connection: close

  // Guards `stopped`, `connections` and `admission`. Posts from outside the I/O threads also happen
  // under it, so that none can land in the io_context after Stop() has drained it (a handler queued
  // in a stopped io_context would keep its connection, and the core, alive forever).
  std::mutex mu;
  std::atomic<bool> stopped{false};  // written under mu; read without it by disconnected()
  std::unordered_map<uint64_t, std::weak_ptr<Connection>> connections;
  ConnectionAdmission admission;
};

class Exchange;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `client`: the peer's address without the port (the admission key).
  Connection(std::shared_ptr<ServerCore> core, tcp::socket socket, uint64_t id, std::string client);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  ServerCore& core() { return *core_; }
  const net::any_io_executor& executor() { return executor_; }

  // On the strand.
  void Start();
  // Answers 503 with `why` and closes (a connection the admission policy turned away).
  void Refuse(std::string why);
  // Closes the connection if it is still waiting for a request header (the admission policy chose
  // it to make room); else tells the policy it stays.
  void EvictIfIdle();
  // Closes the socket now. An exchange whose response has not completed is disconnected.
  void Close();

  // The exchange's operations, run on the strand; calls from a finished exchange are ignored.
  void ExRespond(Exchange& ex, HttpResponse response);
  void ExStartStream(Exchange& ex, int status, const std::string& content_type,
                     const std::vector<std::pair<std::string, std::string>>& headers);
  void ExWrite(Exchange& ex, std::string piece);
  void ExEndStream(Exchange& ex);
  void ExOnDisconnect(Exchange& ex, std::function<void()> callback);

 private:
  // What to do once a queued write has gone out.
  enum class After { kNothing, kFinishExchange, kLingerClose };
  struct Out {
    std::string bytes;
    size_t payload = 0;  // handler bytes in `bytes` (counted in the exchange's queued_bytes)
    After after = After::kNothing;
  };

  // Reading requests.
  void WaitForNextRequest();
  void ReadHeader();
  void OnHeader(boost::system::error_code ec);
  void OnBody(boost::system::error_code ec);
  void OnReadError(boost::system::error_code ec);
  void Dispatch();

  // While a request is handled: one read stays pending to notice the client leaving.
  void WatchForDisconnect();
  void OnWatch(boost::system::error_code ec, size_t n);

  // Responses.
  void Send(std::string bytes, size_t payload, After after);
  void WriteNext();
  void OnWritten(boost::system::error_code ec);
  void FinishExchange();
  void SendErrorAndClose(int status, std::string message,
                         std::vector<std::pair<std::string, std::string>> headers = {});
  // The admission policy's view of this connection (under core_->mu).
  void SetIdle(bool idle);
  std::string Head(int status, const std::string& content_type,
                   const std::vector<std::pair<std::string, std::string>>& headers,
                   const std::string& framing) const;

  // Closing after a response: stop sending, discard what the client still sends for a moment,
  // then close; closing with unread input would reset the connection and could destroy the
  // response in flight (a 413 sent while the client is still uploading).
  void LingerClose();
  void Discard();

  // Deadlines: a fired timer closes the connection unless it was re-armed or disarmed meanwhile.
  void ArmRead(double seconds);
  void DisarmRead();
  void ArmWrite(double seconds);
  void DisarmWrite();
  void Arm(net::steady_timer& timer, uint64_t& generation, double seconds);

  void DisconnectExchange(Exchange& ex);

  std::shared_ptr<ServerCore> core_;  // first: released after the socket and timers
  const uint64_t id_;
  tcp::socket socket_;
  net::any_io_executor executor_;  // the strand
  std::string remote_;
  const std::string client_;
  bool idle_ = true;  // waiting for a request header (strand-only mirror of the admission state)
  net::steady_timer read_timer_;
  net::steady_timer write_timer_;
  uint64_t read_generation_ = 0;
  uint64_t write_generation_ = 0;

  boost::beast::flat_buffer buffer_;  // bytes received and not parsed yet (pipelined requests)
  std::optional<http::request_parser<http::string_body>> parser_;
  bool closed_ = false;
  bool lingering_ = false;
  bool keep_alive_ = true;
  unsigned version_ = 11;
  bool head_request_ = false;

  std::shared_ptr<Exchange> exchange_;  // the request being handled (cycle broken when done)
  bool watching_ = false;               // the disconnect watch read is pending
  bool resume_after_watch_ = false;     // the response is done: read the next request after it

  bool chunked_ = true;         // streaming framing (HTTP/1.0 clients get a close-delimited body)
  bool suppress_body_ = false;  // HEAD, 204, 304
  std::deque<Out> queue_;
  std::vector<Out> inflight_;
  std::vector<net::const_buffer> buffers_;
  bool writing_ = false;
  char scratch_[4096];  // discarded bytes while lingering
};

class Exchange final : public HttpExchange, public std::enable_shared_from_this<Exchange> {
 public:
  explicit Exchange(std::shared_ptr<Connection> conn) : conn_(std::move(conn)) {}

  void Respond(HttpResponse response) override;
  void StartStream(int status, std::string content_type,
                   std::vector<std::pair<std::string, std::string>> headers) override;
  void Write(std::string piece) override;
  void EndStream() override;
  void OnDisconnect(std::function<void()> callback) override;
  bool disconnected() const override;
  size_t queued_bytes() const override { return queued_bytes_.load(); }

 private:
  friend class Connection;
  enum class Phase { kWaiting, kResponding, kStreaming, kEnding, kDone };

  // Runs fn(connection, exchange) on the strand; false (and nothing runs) once the server stopped.
  template <typename Fn>
  bool Post(Fn fn);

  const std::shared_ptr<Connection> conn_;
  std::atomic<bool> disconnected_{false};
  std::atomic<size_t> queued_bytes_{0};
  // Strand-only.
  Phase phase_ = Phase::kWaiting;
  bool finished_ = false;  // counted out of active_exchanges (response done or disconnected)
  std::function<void()> on_disconnect_;
};

}  // namespace brisk::server::http_internal

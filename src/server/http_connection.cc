#include "server/http_connection.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <utility>

#include "util/ascii.h"
#include "util/clock.h"

namespace brisk::server::http_internal {
namespace {

namespace beast = boost::beast;
using boost::system::error_code;

constexpr size_t kReadSize = 4096;         // bytes asked of each raw read
constexpr size_t kMinBuffered = 64 << 10;  // pipelined input kept while a request is handled
constexpr double kLingerSeconds = 1.0;     // how long a closing connection still drains input
constexpr size_t kBatch = 64 << 10;        // bytes gathered into one write

bool IsTokenChar(char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Header names and values from the handler go on the wire verbatim; CR, LF or NUL in them would
// let a reflected value inject headers, so such headers are dropped.
bool ValidName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), IsTokenChar);
}
bool ValidValue(std::string_view value) {
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

// Framing headers belong to the transport; a handler's copy would contradict them.
bool TransportOwned(std::string_view name) {
  for (std::string_view owned : {"content-length", "transfer-encoding", "connection", "server"}) {
    if (beast::iequals(name, owned)) return true;
  }
  return false;
}

int ValidStatus(int status) { return status >= 200 && status <= 599 ? status : 500; }

std::string Hex(size_t n) {
  char buf[24];
  return std::string(buf, std::to_chars(buf, buf + sizeof(buf), n, 16).ptr);
}

std::string FormatRemote(const tcp::socket& socket) {
  error_code ec;
  tcp::endpoint ep = socket.remote_endpoint(ec);
  if (ec) return "?";
  std::string ip = ep.address().to_string();
  if (ep.address().is_v6()) ip = "[" + ip + "]";
  return ip + ":" + std::to_string(ep.port());
}

// Runs a handler-supplied callback; its exceptions must not unwind through an I/O thread.
void RunCallback(const std::function<void()>& callback) {
  if (!callback) return;
  try {
    callback();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "brisk: http: disconnect callback threw: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "brisk: http: disconnect callback threw\n");
  }
}

}  // namespace

HttpResponse ServerCore::ErrorResponse(int status, const std::string& message) const {
  if (error_body) return error_body(status, message);
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain";
  r.body = message + "\n";
  return r;
}

Connection::Connection(std::shared_ptr<ServerCore> core, tcp::socket socket, uint64_t id,
                       std::string client)
    : core_(std::move(core)),
      id_(id),
      socket_(std::move(socket)),
      executor_(socket_.get_executor()),
      remote_(FormatRemote(socket_)),
      client_(std::move(client)),
      read_timer_(executor_),
      write_timer_(executor_) {
  error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);  // stream pieces are small and latency-bound
}

Connection::~Connection() {
  if (!closed_) {  // only when the io_context dropped its handlers without running them
    core_->open_connections--;
    std::lock_guard<std::mutex> lock(core_->mu);
    core_->connections.erase(id_);
    core_->admission.Remove(id_);
  }
}

void Connection::Start() {
  if (closed_) return;
  ReadHeader();  // the first header is due header_timeout_s after the accept
}

void Connection::Refuse(std::string why) {
  if (closed_) return;
  SendErrorAndClose(503, std::move(why), {{"Retry-After", "1"}});
}

void Connection::EvictIfIdle() {
  if (closed_) return;
  if (!idle_ || exchange_ || lingering_) {
    std::lock_guard<std::mutex> lock(core_->mu);
    core_->admission.CancelEviction(id_);
    return;
  }
  Close();
}

void Connection::SetIdle(bool idle) {
  if (idle_ == idle) return;
  idle_ = idle;
  std::lock_guard<std::mutex> lock(core_->mu);
  if (idle) {
    core_->admission.MarkIdle(id_, NowSeconds());
  } else {
    core_->admission.MarkBusy(id_);
  }
}

// ---------------------------------------------------------------------------------------------
// Deadlines

void Connection::Arm(net::steady_timer& timer, uint64_t& generation, double seconds) {
  uint64_t armed = ++generation;
  timer.cancel();
  if (!(seconds > 0)) return;  // a non-positive limit means "no deadline"
  seconds = std::min(seconds, 1e7);
  timer.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(seconds)));
  timer.async_wait([self = shared_from_this(), &generation, armed](error_code ec) {
    // `generation` is a member of *self, which the capture keeps alive.
    if (ec || self->closed_ || generation != armed) return;
    self->Close();
  });
}

void Connection::ArmRead(double seconds) { Arm(read_timer_, read_generation_, seconds); }
void Connection::ArmWrite(double seconds) { Arm(write_timer_, write_generation_, seconds); }
void Connection::DisarmRead() {
  ++read_generation_;
  read_timer_.cancel();
}
void Connection::DisarmWrite() {
  ++write_generation_;
  write_timer_.cancel();
}

// ---------------------------------------------------------------------------------------------
// Reading requests

void Connection::WaitForNextRequest() {
  if (closed_) return;
  SetIdle(true);
  if (buffer_.size() > 0) {  // a pipelined request already arrived: its header deadline starts now
    ReadHeader();
    return;
  }
  ArmRead(core_->limits.idle_timeout_s);
  socket_.async_read_some(buffer_.prepare(kReadSize),
                          [self = shared_from_this()](error_code ec, size_t n) {
                            if (self->closed_) return;
                            self->buffer_.commit(n);
                            if (ec) {  // the client closed its idle connection
                              self->Close();
                              return;
                            }
                            self->ReadHeader();
                          });
}

void Connection::ReadHeader() {
  const HttpLimits& limits = core_->limits;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(
      std::min<size_t>(limits.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
  parser_->body_limit(static_cast<std::uint64_t>(limits.max_body_bytes));
  // One deadline for the whole header, however it trickles in (slowloris).
  ArmRead(limits.header_timeout_s);
  http::async_read_header(
      socket_, buffer_, *parser_,
      [self = shared_from_this()](error_code ec, size_t) { self->OnHeader(ec); });
}

void Connection::OnHeader(error_code ec) {
  if (closed_) return;
  if (ec) {
    OnReadError(ec);
    return;
  }
  SetIdle(false);  // a whole header arrived: this connection is serving a request now
  const auto& req = parser_->get();
  version_ = req.version();
  keep_alive_ = req.keep_alive();
  head_request_ = req.method() == http::verb::head;
  if (parser_->is_done()) {
    DisarmRead();
    Dispatch();
    return;
  }
  ArmRead(core_->limits.body_timeout_s);
  // Clients that ask (curl does for large bodies) would otherwise wait before sending the body.
  if (version_ >= 11 && beast::iequals(req[http::field::expect], "100-continue")) {
    Send("HTTP/1.1 100 Continue\r\n\r\n", 0, After::kNothing);
  }
  http::async_read(socket_, buffer_, *parser_,
                   [self = shared_from_this()](error_code ec, size_t) { self->OnBody(ec); });
}

void Connection::OnBody(error_code ec) {
  if (closed_) return;
  if (ec) {
    OnReadError(ec);
    return;
  }
  DisarmRead();
  Dispatch();
}

void Connection::OnReadError(error_code ec) {
  DisarmRead();
  const HttpLimits& limits = core_->limits;
  if (ec == http::error::header_limit) {
    SendErrorAndClose(431, "request header exceeds the limit of " +
                               std::to_string(limits.max_header_bytes) + " bytes");
  } else if (ec == http::error::body_limit) {
    SendErrorAndClose(413, "request body exceeds the limit of " +
                               std::to_string(limits.max_body_bytes) + " bytes");
  } else if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
             ec != http::error::end_of_stream && ec != http::error::partial_message) {
    SendErrorAndClose(400, "malformed HTTP request: " + ec.message());
  } else {
    Close();  // the client went away (EOF, reset) mid-request: nobody to answer
  }
}

void Connection::Dispatch() {
  http::request<http::string_body> msg = parser_->release();
  parser_.reset();
  HttpRequest request;
  request.method = std::string(msg.method_string());
  request.target = std::string(msg.target());
  size_t q = request.target.find('?');
  request.path = request.target.substr(0, q);
  if (q != std::string::npos) request.query = request.target.substr(q + 1);
  request.headers.reserve(std::distance(msg.begin(), msg.end()));
  for (const auto& field : msg) {
    request.headers.emplace_back(AsciiLower(field.name_string()), std::string(field.value()));
  }
  request.body = std::move(msg.body());
  request.remote = remote_;

  auto ex = std::make_shared<Exchange>(shared_from_this());
  exchange_ = ex;
  core_->active_exchanges++;
  WatchForDisconnect();
  try {
    core_->handler(std::move(request), ex);
  } catch (const std::exception& e) {
    ExRespond(*ex, core_->ErrorResponse(500, std::string("internal error: ") + e.what()));
  } catch (...) {
    ExRespond(*ex, core_->ErrorResponse(500, "internal error"));
  }
}

// ---------------------------------------------------------------------------------------------
// Disconnect detection

void Connection::WatchForDisconnect() {
  if (watching_ || closed_) return;
  // Enough pipelined input is kept; more waits in the kernel (and disconnects of this exchange
  // are then noticed only when a write fails).
  if (buffer_.size() >= std::max(kMinBuffered, core_->limits.max_header_bytes)) return;
  watching_ = true;
  socket_.async_read_some(
      buffer_.prepare(kReadSize),
      [self = shared_from_this()](error_code ec, size_t n) { self->OnWatch(ec, n); });
}

void Connection::OnWatch(error_code ec, size_t n) {
  watching_ = false;
  if (closed_) return;
  buffer_.commit(n);  // a pipelined next request: kept for WaitForNextRequest
  if (lingering_) {
    ec ? Close() : Discard();
    return;
  }
  if (ec && ec != net::error::operation_aborted) {  // EOF or failure: the client is gone
    Close();
    return;
  }
  if (resume_after_watch_) {  // FinishExchange cancelled the watch to read the next request
    resume_after_watch_ = false;
    WaitForNextRequest();
    return;
  }
  if (exchange_) WatchForDisconnect();
}

void Connection::DisconnectExchange(Exchange& ex) {
  if (ex.finished_) return;
  ex.finished_ = true;
  ex.phase_ = Exchange::Phase::kDone;
  ex.disconnected_ = true;
  core_->active_exchanges--;
  std::function<void()> callback = std::move(ex.on_disconnect_);
  ex.on_disconnect_ = nullptr;
  RunCallback(callback);
}

// ---------------------------------------------------------------------------------------------
// Writing

void Connection::Send(std::string bytes, size_t payload, After after) {
  if (closed_) return;
  queue_.push_back(Out{std::move(bytes), payload, after});
  WriteNext();
}

void Connection::WriteNext() {
  if (closed_ || writing_ || queue_.empty()) return;
  // Queued entries (each already framed) go out in one gathered write, but only up to a modest
  // batch: the write deadline should bound the time for about one piece, not for a whole backlog.
  inflight_.clear();
  buffers_.clear();
  size_t batch = 0;
  while (!queue_.empty() && (inflight_.empty() || batch + queue_.front().bytes.size() <= kBatch)) {
    batch += queue_.front().bytes.size();
    inflight_.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  for (const Out& out : inflight_) buffers_.push_back(net::buffer(out.bytes));
  writing_ = true;
  ArmWrite(core_->limits.write_timeout_s);
  net::async_write(socket_, buffers_,
                   [self = shared_from_this()](error_code ec, size_t) { self->OnWritten(ec); });
}

void Connection::OnWritten(error_code ec) {
  writing_ = false;
  if (closed_) return;
  DisarmWrite();
  if (ec) {  // the client is gone (or the write deadline closed the socket)
    Close();
    return;
  }
  size_t payload = 0;
  bool finish = false;
  bool linger = false;
  for (const Out& out : inflight_) {
    payload += out.payload;
    finish |= out.after == After::kFinishExchange;
    linger |= out.after == After::kLingerClose;
  }
  inflight_.clear();
  buffers_.clear();
  if (exchange_) exchange_->queued_bytes_ -= payload;
  if (linger) {
    LingerClose();
    return;
  }
  if (finish) FinishExchange();
  WriteNext();
}

void Connection::FinishExchange() {
  if (std::shared_ptr<Exchange> ex = std::move(exchange_)) {
    if (!ex->finished_) {
      ex->finished_ = true;
      ex->phase_ = Exchange::Phase::kDone;
      ex->on_disconnect_ = nullptr;  // the response is complete: it can no longer be cut off
      core_->active_exchanges--;
    }
  }
  if (!keep_alive_) {
    LingerClose();
    return;
  }
  if (watching_) {  // the watch read owns the buffer: cancel it, continue in OnWatch
    resume_after_watch_ = true;
    error_code ec;
    socket_.cancel(ec);
    return;
  }
  WaitForNextRequest();
}

std::string Connection::Head(int status, const std::string& content_type,
                             const std::vector<std::pair<std::string, std::string>>& headers,
                             const std::string& framing) const {
  http::status code = http::int_to_status(static_cast<unsigned>(status));
  std::string head = "HTTP/1.1 " + std::to_string(status) + " ";
  if (code == http::status::unknown) {
    head += "Unknown";
  } else {
    head += std::string(http::obsolete_reason(code));
  }
  head += "\r\nServer: brisk\r\n";
  if (!content_type.empty() && ValidValue(content_type)) {
    head += "Content-Type: " + content_type + "\r\n";
  }
  for (const auto& [name, value] : headers) {
    if (!ValidName(name) || !ValidValue(value) || TransportOwned(name)) continue;
    if (beast::iequals(name, "content-type")) continue;  // set above
    head += name + ": " + value + "\r\n";
  }
  head += framing;
  if (!keep_alive_) {
    head += "Connection: close\r\n";
  } else if (version_ < 11) {
    head += "Connection: keep-alive\r\n";
  }
  head += "\r\n";
  return head;
}

void Connection::SendErrorAndClose(int status, std::string message,
                                   std::vector<std::pair<std::string, std::string>> headers) {
  keep_alive_ = false;
  version_ = 11;
  HttpResponse r = core_->ErrorResponse(status, message);
  for (auto& h : headers) r.headers.push_back(std::move(h));
  std::string bytes = Head(r.status, r.content_type, r.headers,
                           "Content-Length: " + std::to_string(r.body.size()) + "\r\n") +
                      r.body;
  Send(std::move(bytes), 0, After::kLingerClose);
}

// ---------------------------------------------------------------------------------------------
// Closing

void Connection::LingerClose() {
  if (closed_ || lingering_) return;
  lingering_ = true;
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_send, ec);  // the client sees EOF after the response
  ArmRead(kLingerSeconds);
  if (!watching_) Discard();  // else OnWatch goes on discarding
}

void Connection::Discard() {
  socket_.async_read_some(net::buffer(scratch_),
                          [self = shared_from_this()](error_code ec, size_t) {
                            if (!self->closed_) ec ? self->Close() : self->Discard();
                          });
}

void Connection::Close() {
  if (closed_) return;
  closed_ = true;
  DisarmRead();
  DisarmWrite();
  error_code ec;
  socket_.close(ec);  // pending operations complete with operation_aborted and see closed_
  core_->open_connections--;
  {
    std::lock_guard<std::mutex> lock(core_->mu);
    core_->connections.erase(id_);
    core_->admission.Remove(id_);
  }
  if (std::shared_ptr<Exchange> ex = std::move(exchange_)) {
    // Unsent stream bytes will never go out. (inflight_ stays: the aborted write owns its buffers
    // until its handler runs.)
    for (Out& out : inflight_) ex->queued_bytes_ -= std::exchange(out.payload, 0);
    for (const Out& out : queue_) ex->queued_bytes_ -= out.payload;
    queue_.clear();
    DisconnectExchange(*ex);
  }
  queue_.clear();
}

// ---------------------------------------------------------------------------------------------
// The exchange's operations (on the strand)

void Connection::ExRespond(Exchange& ex, HttpResponse response) {
  if (closed_ || exchange_.get() != &ex || ex.phase_ != Exchange::Phase::kWaiting) return;
  ex.phase_ = Exchange::Phase::kResponding;
  if (core_->draining) keep_alive_ = false;
  int status = ValidStatus(response.status);
  std::string framing;
  if (status != 204) framing = "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  std::string bytes = Head(status, response.content_type, response.headers, framing);
  if (!head_request_ && status != 204 && status != 304) bytes += response.body;
  Send(std::move(bytes), 0, After::kFinishExchange);
}

void Connection::ExStartStream(Exchange& ex, int status, const std::string& content_type,
                               const std::vector<std::pair<std::string, std::string>>& headers) {
  if (closed_ || exchange_.get() != &ex || ex.phase_ != Exchange::Phase::kWaiting) return;
  ex.phase_ = Exchange::Phase::kStreaming;
  if (core_->draining) keep_alive_ = false;
  status = ValidStatus(status);
  suppress_body_ = head_request_ || status == 204 || status == 304;
  // HTTP/1.0 has no chunked encoding: the body then ends when the connection closes.
  chunked_ = version_ >= 11;
  if (!chunked_) keep_alive_ = false;
  std::string framing;
  if (chunked_ && status != 204 && status != 304) framing = "Transfer-Encoding: chunked\r\n";
  // Proxies (nginx) must pass each piece on at once instead of buffering the stream.
  framing += "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\n";
  std::vector<std::pair<std::string, std::string>> extra;
  for (const auto& header : headers) {
    if (beast::iequals(header.first, "cache-control") ||
        beast::iequals(header.first, "x-accel-buffering")) {
      continue;
    }
    extra.push_back(header);
  }
  Send(Head(status, content_type, extra, framing), 0, After::kNothing);
}

void Connection::ExWrite(Exchange& ex, std::string piece) {
  size_t n = piece.size();
  if (closed_ || exchange_.get() != &ex || ex.phase_ != Exchange::Phase::kStreaming ||
      suppress_body_) {
    ex.queued_bytes_ -= n;
    return;
  }
  if (!chunked_) {
    Send(std::move(piece), n, After::kNothing);
    return;
  }
  std::string size = Hex(n);
  std::string chunk;
  chunk.reserve(size.size() + n + 4);
  chunk.append(size).append("\r\n").append(piece).append("\r\n");
  Send(std::move(chunk), n, After::kNothing);
}

void Connection::ExEndStream(Exchange& ex) {
  if (closed_ || exchange_.get() != &ex || ex.phase_ != Exchange::Phase::kStreaming) return;
  ex.phase_ = Exchange::Phase::kEnding;
  Send(chunked_ && !suppress_body_ ? "0\r\n\r\n" : "", 0, After::kFinishExchange);
}

void Connection::ExOnDisconnect(Exchange& ex, std::function<void()> callback) {
  if (ex.disconnected_) {
    RunCallback(callback);
    return;
  }
  if (ex.finished_ || exchange_.get() != &ex) return;  // response complete: never runs
  ex.on_disconnect_ = std::move(callback);
}

// ---------------------------------------------------------------------------------------------
// Exchange: thread-safe front, posting to the connection's strand

template <typename Fn>
bool Exchange::Post(Fn fn) {
  ServerCore& core = conn_->core();
  std::lock_guard<std::mutex> lock(core.mu);
  if (core.stopped) return false;  // the I/O threads are gone or going: nothing would run it
  net::post(conn_->executor(),
            [self = shared_from_this(), fn = std::move(fn)]() mutable { fn(*self->conn_, *self); });
  return true;
}

void Exchange::Respond(HttpResponse response) {
  if (disconnected()) return;
  Post([r = std::move(response)](Connection& c, Exchange& ex) mutable {
    c.ExRespond(ex, std::move(r));
  });
}

void Exchange::StartStream(int status, std::string content_type,
                           std::vector<std::pair<std::string, std::string>> headers) {
  if (disconnected()) return;
  Post([status, ct = std::move(content_type), h = std::move(headers)](Connection& c, Exchange& ex) {
    c.ExStartStream(ex, status, ct, h);
  });
}

void Exchange::Write(std::string piece) {
  // Empty pieces are dropped: a zero-length chunk would end the chunked body.
  if (piece.empty() || disconnected()) return;
  size_t n = piece.size();
  queued_bytes_ += n;  // ExWrite or the write's completion takes it off again
  bool posted = Post(
      [p = std::move(piece)](Connection& c, Exchange& ex) mutable { c.ExWrite(ex, std::move(p)); });
  if (!posted) queued_bytes_ -= n;
}

void Exchange::EndStream() {
  if (disconnected()) return;
  Post([](Connection& c, Exchange& ex) { c.ExEndStream(ex); });
}

void Exchange::OnDisconnect(std::function<void()> callback) {
  Post([cb = std::move(callback)](Connection& c, Exchange& ex) mutable {
    c.ExOnDisconnect(ex, std::move(cb));
  });
}

bool Exchange::disconnected() const { return disconnected_ || conn_->core().stopped; }

}  // namespace brisk::server::http_internal

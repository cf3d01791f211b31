// HttpServer: the listening socket, the accept loop and the I/O threads. Each accepted socket
// becomes a Connection (http_connection.cc) on its own strand.
#include "server/http_server.h"

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include "server/http_connection.h"
#include "util/clock.h"

namespace brisk::server {

const std::string* HttpRequest::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return &value;
  }
  return nullptr;
}

namespace {

using http_internal::Connection;
using http_internal::ServerCore;
namespace net = http_internal::net;
using tcp = http_internal::tcp;
using boost::system::error_code;

// How long Stop() lets the I/O threads finish closing connections before it stops the
// io_context outright (only a bug would need that: every pending operation is cancelled).
constexpr auto kStopGrace = std::chrono::seconds(5);

// The admission key: the peer's IP address (IPv4-mapped IPv6 as plain IPv4), without the port.
std::string ClientAddress(const tcp::socket& socket) {
  error_code ec;
  const tcp::endpoint ep = socket.remote_endpoint(ec);
  if (ec) return "?";
  auto addr = ep.address();
  if (addr.is_v6() && addr.to_v6().is_v4_mapped())
    addr = net::ip::make_address_v4(net::ip::v4_mapped, addr.to_v6());
  return addr.to_string();
}

std::string Reason(const error_code& ec) {
  std::string message = ec.message();  // "Address already in use" -> "address already in use"
  if (!message.empty() && message[0] >= 'A' && message[0] <= 'Z') message[0] += 'a' - 'A';
  return message;
}

class ServerImpl final : public HttpServer {
 public:
  explicit ServerImpl(std::shared_ptr<ServerCore> core)
      : core_(std::move(core)),
        acceptor_(net::make_strand(core_->ioc)),
        retry_timer_(acceptor_.get_executor()),
        work_(net::make_work_guard(core_->ioc)) {}
  ~ServerImpl() override { Stop(); }

  Status Listen(const std::string& host, int port);
  void Run(int threads);

  int port() const override { return port_; }
  void StopAccepting() override;
  size_t open_connections() const override { return core_->open_connections.load(); }
  size_t active_exchanges() const override { return core_->active_exchanges.load(); }
  AdmissionCounters admission() const override {
    std::lock_guard<std::mutex> lock(core_->mu);
    return core_->admission.counters();
  }
  void Stop() override;

 private:
  void Accept();
  void OnAccept(error_code ec, tcp::socket socket);
  void CloseAcceptor();
  void RunThread();

  std::shared_ptr<ServerCore> core_;  // first: the io_context outlives the objects below
  tcp::acceptor acceptor_;            // on its own strand
  net::steady_timer retry_timer_;     // pause after a failed accept (EMFILE) before retrying
  net::executor_work_guard<net::io_context::executor_type> work_;
  uint64_t next_id_ = 0;  // acceptor strand
  int port_ = 0;

  std::vector<std::thread> threads_;
  std::mutex threads_mu_;
  std::condition_variable threads_cv_;
  size_t running_ = 0;
};

Status ServerImpl::Listen(const std::string& host, int port) {
  const std::string where = host + ":" + std::to_string(port);
  if (port < 0 || port > 65535) return Status::Error(where + ": port out of range (0-65535)");
  error_code ec;
  tcp::resolver resolver(core_->ioc);
  auto results = resolver.resolve(host, std::to_string(port),
                                  tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec) return Status::Error(where + ": " + Reason(ec));
  error_code last = net::error::host_not_found;
  for (const auto& entry : results) {  // "localhost" may give ::1 and 127.0.0.1: first that binds
    tcp::endpoint ep = entry.endpoint();
    error_code ignored;
    acceptor_.open(ep.protocol(), last);
    if (last) continue;
    acceptor_.set_option(tcp::acceptor::reuse_address(true), ignored);
    acceptor_.bind(ep, last);
    if (!last) acceptor_.listen(net::socket_base::max_listen_connections, last);
    if (last) {
      acceptor_.close(ignored);
      continue;
    }
    port_ = acceptor_.local_endpoint(ignored).port();
    return Status::Ok();
  }
  return Status::Error(where + ": " + Reason(last));
}

void ServerImpl::Run(int threads) {
  net::post(acceptor_.get_executor(), [this] { Accept(); });
  running_ = static_cast<size_t>(threads);
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { RunThread(); });
}

void ServerImpl::RunThread() {
  for (;;) {
    try {
      core_->ioc.run();
      break;
    } catch (const std::exception& e) {  // keep serving: one failed handler is not fatal
      std::fprintf(stderr, "brisk: http thread: %s\n", e.what());
    }
  }
  std::lock_guard<std::mutex> lock(threads_mu_);
  --running_;
  threads_cv_.notify_all();
}

void ServerImpl::Accept() {
  if (!acceptor_.is_open()) return;
  // Each connection gets its own strand: its handlers never run concurrently.
  acceptor_.async_accept(net::make_strand(core_->ioc), [this](error_code ec, auto socket) {
    OnAccept(ec, tcp::socket(std::move(socket)));
  });
}

void ServerImpl::OnAccept(error_code ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
  if (ec) {  // out of file descriptors and the like: retry shortly instead of spinning
    retry_timer_.expires_after(std::chrono::milliseconds(100));
    retry_timer_.async_wait([this](error_code wait_ec) {
      if (!wait_ec) Accept();
    });
    return;
  }
  const std::string client = ClientAddress(socket);
  std::shared_ptr<Connection> conn;
  ConnectionAdmission::Decision decision;
  std::vector<std::shared_ptr<Connection>> evict;
  {
    std::lock_guard<std::mutex> lock(core_->mu);
    if (core_->stopped) return;  // `socket` closes as it goes out of scope
    const uint64_t id = ++next_id_;
    decision = core_->admission.Admit(id, client, NowSeconds());
    conn = std::make_shared<Connection>(core_, std::move(socket), id, client);
    core_->connections[id] = conn;
    core_->open_connections++;
    for (uint64_t victim : decision.evict) {
      auto it = core_->connections.find(victim);
      if (it == core_->connections.end()) continue;
      if (std::shared_ptr<Connection> c = it->second.lock()) evict.push_back(c);
    }
  }
  for (auto& c : evict) net::post(c->executor(), [c] { c->EvictIfIdle(); });
  if (decision.admit) {
    net::post(conn->executor(), [conn] { conn->Start(); });
  } else {
    net::post(conn->executor(), [conn, why = std::move(decision.refusal)]() mutable {
      conn->Refuse(std::move(why));
    });
  }
  Accept();
}

void ServerImpl::CloseAcceptor() {
  error_code ignored;
  acceptor_.close(ignored);
  retry_timer_.cancel();
}

void ServerImpl::StopAccepting() {
  core_->draining = true;
  net::post(acceptor_.get_executor(), [this] { CloseAcceptor(); });
}

void ServerImpl::Stop() {
  BRISK_CHECK_MSG(
      std::none_of(threads_.begin(), threads_.end(),
                   [](const std::thread& t) { return t.get_id() == std::this_thread::get_id(); }),
      "HttpServer::Stop() called on one of its own I/O threads");
  {
    std::lock_guard<std::mutex> lock(core_->mu);
    if (core_->stopped) return;
    // From here on exchanges post nothing; the closes below are the last work queued.
    core_->stopped = true;
    for (auto& [id, weak] : core_->connections) {
      if (std::shared_ptr<Connection> conn = weak.lock()) {
        net::post(conn->executor(), [conn] { conn->Close(); });
      }
    }
  }
  core_->draining = true;
  net::post(acceptor_.get_executor(), [this] { CloseAcceptor(); });
  work_.reset();
  {
    // The threads leave run() once every connection has closed and its aborted operations ran.
    std::unique_lock<std::mutex> lock(threads_mu_);
    if (!threads_cv_.wait_for(lock, kStopGrace, [this] { return running_ == 0; })) {
      std::fprintf(stderr, "brisk: http: connections did not close in time; stopping anyway\n");
      core_->ioc.stop();
    }
  }
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& host, int port,
                                                      int threads, const HttpLimits& limits,
                                                      HttpHandler handler,
                                                      HttpErrorBody error_body) {
  if (!handler) return Status::Error("HttpServer::Start: no request handler");
  threads = std::max(1, threads);
  auto core =
      std::make_shared<ServerCore>(limits, std::move(handler), std::move(error_body), threads);
  auto server = std::make_unique<ServerImpl>(std::move(core));
  BRISK_RETURN_IF_ERROR(server->Listen(host, port));
  server->Run(threads);
  return std::unique_ptr<HttpServer>(std::move(server));
}

}  // namespace brisk::server

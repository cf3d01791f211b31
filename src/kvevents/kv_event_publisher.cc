#include "kvevents/kv_event_publisher.h"

#include <zmq.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "util/clock.h"

namespace brisk {
namespace {

constexpr int kLingerMs = 1000;        // on close, time for the last batches to reach subscribers
constexpr double kPollSeconds = 0.02;  // replay requests wait at most this long for an answer
// On shutdown, the longest the queued batches may hold it up (a queue whose engine keeps pushing
// could otherwise keep the thread forever).
constexpr double kDrainSeconds = 1.0;

// vLLM's rule: bind a wildcard or local transport, connect anything else.
bool ShouldBind(const std::string& ep) {
  return ep.find('*') != std::string::npos || ep.find("::") != std::string::npos ||
         ep.starts_with("ipc://") || ep.starts_with("inproc://");
}

std::string SeqBytes(uint64_t seq) {
  std::string b(8, '\0');
  for (int i = 0; i < 8; ++i) b[size_t(i)] = char(uint8_t(seq >> (8 * (7 - i))));
  return b;
}

// Sends the frames of one message; false if the socket refused (the caller logs and goes on).
bool SendFrames(void* socket, const std::vector<std::string_view>& frames) {
  for (size_t i = 0; i < frames.size(); ++i) {
    const int more = i + 1 < frames.size() ? ZMQ_SNDMORE : 0;
    if (zmq_send(socket, frames[i].data(), frames[i].size(), more | ZMQ_DONTWAIT) < 0) return false;
  }
  return true;
}

// Receives every frame of the next message (non-blocking: none waiting -> empty).
std::vector<std::string> ReceiveFrames(void* socket) {
  std::vector<std::string> frames;
  for (;;) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, socket, frames.empty() ? ZMQ_DONTWAIT : 0) < 0) {
      zmq_msg_close(&msg);
      return frames;
    }
    frames.emplace_back(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
    const bool more = zmq_msg_more(&msg) != 0;
    zmq_msg_close(&msg);
    if (!more) return frames;
  }
}

Result<std::string> LastEndpoint(void* socket) {
  char buf[512];
  size_t len = sizeof(buf);
  if (zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, buf, &len) != 0)
    return Status::Internal(std::string("zmq_getsockopt: ") + zmq_strerror(errno));
  return std::string(buf, len > 0 && buf[len - 1] == '\0' ? len - 1 : len);
}

// Opens one socket on `endpoint` (bound or connected) and returns the endpoint as bound.
Result<std::string> Attach(void* socket, const std::string& endpoint, bool bind, const char* flag) {
  const int linger = kLingerMs;
  zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof(linger));
  if ((bind ? zmq_bind(socket, endpoint.c_str()) : zmq_connect(socket, endpoint.c_str())) != 0) {
    const int err = errno;
    std::string msg = std::string(flag) + " " + endpoint + ": cannot " +
                      (bind ? "bind" : "connect") + ": " + zmq_strerror(err);
    if (err == EADDRINUSE) return Status::Unavailable(msg + " (is another server on that port?)");
    return Status::InvalidArgument(msg, flag);
  }
  if (!bind) return endpoint;
  return LastEndpoint(socket);
}

}  // namespace

Status ValidateKvEventsEndpoint(const std::string& endpoint, const char* flag) {
  for (const char* scheme : {"tcp://", "ipc://", "inproc://"}) {
    const std::string s(scheme);
    if (endpoint.starts_with(s) && endpoint.size() > s.size()) {
      if (s == "tcp://" && endpoint.find(':', s.size()) == std::string::npos) break;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument(std::string(flag) + " " + endpoint +
                                     ": expected a ZeroMQ endpoint: tcp://*:PORT (binds every "
                                     "interface), tcp://HOST:PORT, ipc://PATH or inproc://NAME",
                                 flag);
}

Result<std::unique_ptr<KvEventPublisher>> KvEventPublisher::Open(
    const KvEventPublisherOptions& options) {
  BRISK_RETURN_IF_ERROR(ValidateKvEventsEndpoint(options.endpoint, "--kv-events"));
  if (!options.replay_endpoint.empty())
    BRISK_RETURN_IF_ERROR(ValidateKvEventsEndpoint(options.replay_endpoint, "--kv-events-replay"));
  std::unique_ptr<KvEventPublisher> p(new KvEventPublisher(options));
  p->ctx_ = zmq_ctx_new();
  if (p->ctx_ == nullptr) return Status::Internal("zmq_ctx_new failed");
  p->pub_ = zmq_socket(p->ctx_, ZMQ_PUB);
  const int hwm = options.send_hwm;
  zmq_setsockopt(p->pub_, ZMQ_SNDHWM, &hwm, sizeof(hwm));
  BRISK_ASSIGN_OR_RETURN(p->bound_endpoint_, Attach(p->pub_, options.endpoint,
                                                    ShouldBind(options.endpoint), "--kv-events"));
  if (!options.replay_endpoint.empty()) {
    p->replay_ = zmq_socket(p->ctx_, ZMQ_ROUTER);
    // A replay answers with up to replay_buffer messages at once: past ZeroMQ's default
    // high-water mark (1000) a ROUTER would silently drop the rest of the answer.
    const int unlimited = 0;
    zmq_setsockopt(p->replay_, ZMQ_SNDHWM, &unlimited, sizeof(unlimited));
    BRISK_ASSIGN_OR_RETURN(p->bound_replay_endpoint_,
                           Attach(p->replay_, options.replay_endpoint, true, "--kv-events-replay"));
  }
  return p;
}

KvEventPublisher::~KvEventPublisher() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (replay_ != nullptr) zmq_close(replay_);
  if (pub_ != nullptr) zmq_close(pub_);
  if (ctx_ != nullptr) zmq_ctx_term(ctx_);  // waits up to kLingerMs for unsent messages
}

void KvEventPublisher::Follow(std::shared_ptr<KvEventQueue> queue) {
  BRISK_CHECK_MSG(!thread_.joinable(), "KvEventPublisher::Follow called twice");
  queue_ = std::move(queue);
  thread_ = std::thread([this] { Run(); });
}

void KvEventPublisher::Run() {
  double deadline = -1;  // once stopping: what is still queued goes out until then
  for (;;) {
    const bool stopping = stop_.load();
    if (stopping && deadline < 0) deadline = NowSeconds() + kDrainSeconds;
    if (replay_ != nullptr) ServeReplay();
    std::optional<KvEventBatch> b = queue_->Pop(stopping ? 0 : kPollSeconds);
    if (b) Publish(*b);
    if (stopping && (!b || NowSeconds() >= deadline)) return;
  }
}

void KvEventPublisher::Publish(const KvEventBatch& batch) {
  const uint64_t seq = next_seq_.load();
  std::string payload = EncodeKvEventBatch(batch, o_.encoding);
  const std::string seq_bytes = SeqBytes(seq);
  // PUB never blocks: past the high-water mark a slow subscriber misses messages (it can ask the
  // replay socket for them by sequence).
  if (!SendFrames(pub_, {o_.topic, seq_bytes, payload}))
    std::fprintf(stderr, "brisk: KV events: send failed: %s\n", zmq_strerror(errno));
  next_seq_.store(seq + 1);
  if (o_.replay_buffer == 0) return;
  if (buffer_.size() >= o_.replay_buffer) buffer_.pop_front();
  buffer_.emplace_back(seq, std::move(payload));
}

void KvEventPublisher::ServeReplay() {
  for (;;) {
    const std::vector<std::string> req = ReceiveFrames(replay_);
    if (req.empty()) return;
    // [identity, empty delimiter, 8-byte start sequence]: what a REQ client's request looks like.
    if (req.size() != 3 || !req[1].empty() || req[2].size() != 8) {
      std::fprintf(stderr, "brisk: KV events: ignoring a malformed replay request (%zu frames)\n",
                   req.size());
      continue;
    }
    uint64_t start = 0;
    for (char c : req[2]) start = (start << 8) | uint8_t(c);
    const std::string& client = req[0];
    for (const auto& [seq, payload] : buffer_) {
      if (seq < start) continue;
      const std::string seq_bytes = SeqBytes(seq);
      SendFrames(replay_, {client, "", seq_bytes, payload});
    }
    SendFrames(replay_, {client, "", SeqBytes(~uint64_t(0)), ""});  // end marker: -1, empty
  }
}

}  // namespace brisk

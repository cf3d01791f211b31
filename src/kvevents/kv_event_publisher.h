// Publishes the engine's KV-cache events over ZeroMQ the way vLLM's ZmqEventPublisher does, so
// subscribers written for vLLM (llm-d's precise prefix-cache scorer, vLLM's example subscriber)
// follow brisk unchanged (docs/kv-events.md):
// - PUB socket: each batch is a 3-frame message [topic, sequence (8 bytes, big-endian, from 0,
//   +1 per batch), payload (kv_event_codec.h)].
// - Optional ROUTER replay socket: a request [start sequence (8 bytes, big-endian)] (from a REQ
//   socket, or a DEALER sending an empty delimiter first) is answered with every buffered batch
//   from that sequence on, each [sequence, payload], then the end marker [-1 as 8 bytes, ""].
// The engine hands batches over through a bounded KvEventQueue (it never waits on a socket); the
// sockets belong to this class's thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "engine/kv_events.h"
#include "kvevents/kv_event_codec.h"
#include "util/status.h"

namespace brisk {

struct KvEventPublisherOptions {
  // Like vLLM: an endpoint with '*' or "::", or an ipc:// / inproc:// one, is bound; any other
  // (tcp://router-host:5557) is connected to.
  std::string endpoint;         // --kv-events
  std::string replay_endpoint;  // --kv-events-replay ("" = none); always bound
  std::string topic;            // --kv-events-topic (vLLM's default: "")
  KvEventEncoding encoding;
  size_t replay_buffer = 10000;  // batches kept for replay (vLLM's buffer_steps)
  int send_hwm = 100000;         // PUB high-water mark in messages (vLLM's hwm)
};

// Checks the endpoint's form without opening anything (a flag error before the model loads).
Status ValidateKvEventsEndpoint(const std::string& endpoint, const char* flag);

class KvEventPublisher {
 public:
  // Opens and binds (or connects) the sockets: a bad or busy endpoint is an invalid_argument /
  // unavailable error naming the flag. Nothing is published until Follow.
  static Result<std::unique_ptr<KvEventPublisher>> Open(const KvEventPublisherOptions& options);
  // Publishes what is still queued (until the queue is closed and empty or for up to 1 s), then
  // closes the sockets.
  ~KvEventPublisher();
  KvEventPublisher(const KvEventPublisher&) = delete;
  KvEventPublisher& operator=(const KvEventPublisher&) = delete;

  // Starts the publisher thread on the engine's queue (once).
  void Follow(std::shared_ptr<KvEventQueue> queue);

  // The endpoints as bound, with the port a "*" port resolved to (ZMQ_LAST_ENDPOINT).
  const std::string& endpoint() const { return bound_endpoint_; }
  const std::string& replay_endpoint() const { return bound_replay_endpoint_; }
  uint64_t published() const { return next_seq_.load(); }  // batches sent so far

 private:
  explicit KvEventPublisher(KvEventPublisherOptions options) : o_(std::move(options)) {}
  void Run();
  void Publish(const KvEventBatch& batch);
  void ServeReplay();  // answers every replay request waiting on the ROUTER socket

  KvEventPublisherOptions o_;
  void* ctx_ = nullptr;
  void* pub_ = nullptr;
  void* replay_ = nullptr;
  std::string bound_endpoint_, bound_replay_endpoint_;
  std::shared_ptr<KvEventQueue> queue_;
  std::deque<std::pair<uint64_t, std::string>> buffer_;  // (sequence, payload), for replay
  std::atomic<uint64_t> next_seq_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace brisk

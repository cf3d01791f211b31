// KV-cache events (issue 31): what the prefix cache did, as plain data, for routers that follow
// each replica's cache (llm-d's precise prefix-cache scorer reads vLLM's KV events; the publisher
// in src/kvevents/ puts these on a ZMQ socket in vLLM's wire format). The engine only records;
// no socket or encoding lives in this layer.
//
// Block hashes are BlockManager's published chain hashes: a fixed function of the cache salt and
// the block's whole token prefix (docs/kv-events.md gives the formula), so two replicas that cache
// the same prefix publish the same hashes.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace brisk {

struct KvCacheEvent {
  enum class Kind : uint8_t {
    kBlockStored,       // full blocks entered the prefix cache (findable from now on)
    kBlockRemoved,      // cached blocks were evicted (their hash was dropped for reuse)
    kAllBlocksCleared,  // the whole prefix cache was reset
  };
  Kind kind = Kind::kBlockStored;
  // Stored: consecutive blocks of one chain, each the parent of the next. Removed: any blocks.
  std::vector<uint64_t> block_hashes;
  // Stored: the hash of the block before block_hashes[0]; none for a chain's first block.
  std::optional<uint64_t> parent_hash;
  std::vector<int32_t> token_ids;  // Stored: block_size tokens per hash, in order
};

// One engine step's events, in the order they happened.
struct KvEventBatch {
  double timestamp = 0;  // seconds since the Unix epoch
  std::vector<KvCacheEvent> events;
};

// The bounded hand-off from the engine thread to a publisher thread. The engine never waits on
// it: a push into a full queue drops the batch and counts it (a slow or stuck consumer must not
// stall generation). Thread-safe.
class KvEventQueue {
 public:
  explicit KvEventQueue(size_t capacity) : capacity_(capacity) {}

  // False (and counted in dropped()) when full or closed.
  bool TryPush(KvEventBatch batch);
  // The oldest batch, waiting up to timeout_s for one; none on timeout or once closed and empty.
  std::optional<KvEventBatch> Pop(double timeout_s);
  // Wakes Pop; later pushes are dropped, batches already queued can still be popped.
  void Close();
  int64_t dropped() const;
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable ready_;
  std::deque<KvEventBatch> batches_;
  int64_t dropped_ = 0;
  bool closed_ = false;
};

}  // namespace brisk

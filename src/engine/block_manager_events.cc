// BlockManager's KV-cache event recording (block_manager.h, "Events"; kv_events.h): kept apart
// from the cache itself, which calls RecordStored / RecordRemoved at its transitions.
#include <algorithm>

#include "engine/block_manager.h"
#include "util/check.h"

namespace brisk {

void BlockManager::EnableEvents() {
  BRISK_CHECK_MSG(by_key_.empty(), "EnableEvents after blocks were cached");
  record_events_ = true;
}

std::vector<KvCacheEvent> BlockManager::TakeEvents() {
  std::vector<KvCacheEvent> out;
  out.swap(events_);
  return out;
}

std::vector<uint64_t> BlockManager::CachedBlockHashes() const {
  std::vector<uint64_t> out;
  for (const Block& blk : blocks_)
    if (blk.cache_id != 0) out.push_back(blk.hash);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool BlockManager::RecordStored(uint64_t hash, std::optional<uint64_t> parent_hash,
                                std::span<const int32_t> tokens, bool extend) {
  if (!record_events_ || ++published_[hash] > 1) return false;
  if (!extend) events_.push_back({KvCacheEvent::Kind::kBlockStored, {}, parent_hash, {}});
  KvCacheEvent& e = events_.back();
  e.block_hashes.push_back(hash);
  e.token_ids.insert(e.token_ids.end(), tokens.begin(), tokens.end());
  return true;
}

void BlockManager::RecordRemoved(uint64_t hash) {
  if (!record_events_) return;
  auto it = published_.find(hash);
  BRISK_CHECK(it != published_.end());
  if (--it->second > 0) return;
  published_.erase(it);
  // Evictions of one step go into one event (vLLM sends one per block; both mean the same).
  if (events_.empty() || events_.back().kind != KvCacheEvent::Kind::kBlockRemoved)
    events_.push_back({KvCacheEvent::Kind::kBlockRemoved, {}, std::nullopt, {}});
  events_.back().block_hashes.push_back(hash);
}

}  // namespace brisk

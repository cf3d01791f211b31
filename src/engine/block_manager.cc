#include "engine/block_manager.h"

#include <algorithm>
#include <cstring>

#include "util/check.h"
#include "util/splitmix64.h"

namespace brisk {

namespace {

// Hash of the (non-existent) block before a sequence's first one. Published hashes depend on it:
// changing it (or ChainHash) changes every hash a router has indexed (docs/kv-events.md).
constexpr uint64_t kRootHash = 0x6a09e667f3bcc908ULL;

inline int CeilDiv(int a, int b) { return (a + b - 1) / b; }

// Siblings compared per partial-block lookup, newest first: bounds the admission cost when one
// parent (say the root) has many cached children; the shared prefixes that matter (system
// prompts of current traffic) are among the most recently registered.
constexpr int kMaxTailCandidates = 64;

}  // namespace

BlockManager::BlockManager(int n_blocks, int block_size, bool enable_prefix_cache)
    : n_blocks_(n_blocks), block_size_(block_size), enable_prefix_cache_(enable_prefix_cache) {
  BRISK_CHECK(n_blocks >= 0);
  BRISK_CHECK(block_size > 0);
  blocks_.resize(size_t(n_blocks));
  if (enable_prefix_cache_) {
    block_tokens_.resize(size_t(n_blocks) * size_t(block_size));
    by_key_.reserve(size_t(n_blocks));  // no rehash while the cache fills up
  }
  // Ascending ids from the head: a fresh manager hands out 0, 1, 2, ... (predictable in tests).
  for (int32_t b = 0; b < n_blocks; ++b) PushBack(uncached_free_, b);
}

double BlockManager::usage() const {
  if (n_blocks_ == 0) return 0.0;
  return double(n_blocks_ - num_free_blocks()) / double(n_blocks_);
}

int BlockManager::RefCount(int32_t block) const {
  BRISK_CHECK(block >= 0 && block < n_blocks_);
  return blocks_[size_t(block)].ref;
}

// ---- intrusive lists --------------------------------------------------------------------------

void BlockManager::PushBack(List& l, int32_t b) {
  Block& blk = blocks_[size_t(b)];
  blk.prev = l.tail;
  blk.next = -1;
  if (l.tail >= 0) {
    blocks_[size_t(l.tail)].next = b;
  } else {
    l.head = b;
  }
  l.tail = b;
  ++l.size;
}

void BlockManager::PushFront(List& l, int32_t b) {
  Block& blk = blocks_[size_t(b)];
  blk.prev = -1;
  blk.next = l.head;
  if (l.head >= 0) {
    blocks_[size_t(l.head)].prev = b;
  } else {
    l.tail = b;
  }
  l.head = b;
  ++l.size;
}

void BlockManager::Unlink(List& l, int32_t b) {
  Block& blk = blocks_[size_t(b)];
  if (blk.prev >= 0) {
    blocks_[size_t(blk.prev)].next = blk.next;
  } else {
    BRISK_CHECK(l.head == b);
    l.head = blk.next;
  }
  if (blk.next >= 0) {
    blocks_[size_t(blk.next)].prev = blk.prev;
  } else {
    BRISK_CHECK(l.tail == b);
    l.tail = blk.prev;
  }
  blk.prev = blk.next = -1;
  --l.size;
}

// ---- hashing and the key map ------------------------------------------------------------------

namespace {
// A chain's starting key and parent identity for a cache salt. Salted identities live above
// every cache_id the counter hands out (it starts at 1 and never reaches 2^63), so a first block
// registered under one salt never equals one registered under another.
constexpr uint64_t kSaltedIdBit = uint64_t(1) << 63;
uint64_t RootHash(uint64_t salt) { return kRootHash ^ (salt * 0x9e3779b97f4a7c15ULL); }
uint64_t RootId(uint64_t salt) {
  BRISK_CHECK(salt < kSaltedIdBit);
  return salt == 0 ? 0 : kSaltedIdBit | salt;
}
}  // namespace

uint64_t BlockManager::ChainRoot(uint64_t cache_salt) { return RootHash(cache_salt); }

uint64_t BlockManager::ChainHash(uint64_t parent_hash, std::span<const int32_t> tokens) {
  // Multiply-xorshift per token, seeded with the parent hash, then a full finalizer. Lookups
  // verify every hit against the stored tokens and parent identity, so quality only affects speed
  // here; routers comparing published hashes rely on 64 well-mixed bits. Fixed constants and
  // 64-bit wrap-around only: the same value on every machine and in every process.
  uint64_t h = Mix64(parent_hash ^ (uint64_t(tokens.size()) * 0x9e3779b97f4a7c15ULL));
  for (int32_t t : tokens) {
    h = (h ^ (uint64_t(uint32_t(t)) + 0x9e3779b97f4a7c15ULL)) * 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 29;
  }
  return Mix64(h);
}

int32_t BlockManager::FindIdentical(uint64_t key, uint64_t parent_cache_id,
                                    std::span<const int32_t> tokens) const {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return -1;
  const size_t bytes = size_t(block_size_) * sizeof(int32_t);
  for (int32_t b = it->second; b >= 0; b = blocks_[size_t(b)].next_same_key) {
    const Block& blk = blocks_[size_t(b)];
    if (blk.parent_cache_id == parent_cache_id &&
        std::memcmp(StoredTokens(b).data(), tokens.data(), bytes) == 0) {
      return b;
    }
  }
  return -1;
}

void BlockManager::Register(int32_t b, uint64_t hash, uint64_t parent_cache_id,
                            std::span<const int32_t> tokens) {
  const uint64_t key = KeyOf(hash);
  Block& blk = blocks_[size_t(b)];
  BRISK_CHECK(blk.cache_id == 0);
  BRISK_CHECK(tokens.size() == size_t(block_size_));
  blk.cache_id = next_cache_id_++;
  blk.hash = hash;
  blk.key = key;
  blk.parent_cache_id = parent_cache_id;
  std::memcpy(block_tokens_.data() + size_t(b) * size_t(block_size_), tokens.data(),
              size_t(block_size_) * sizeof(int32_t));
  auto [it, inserted] = by_key_.try_emplace(key, b);
  blk.next_same_key = inserted ? -1 : it->second;
  it->second = b;
  auto [sib, first] = first_child_.try_emplace(parent_cache_id, b);
  blk.prev_sibling = -1;
  blk.next_sibling = first ? -1 : sib->second;
  if (!first) blocks_[size_t(sib->second)].prev_sibling = b;
  sib->second = b;
}

void BlockManager::DropHash(int32_t b) {
  Block& blk = blocks_[size_t(b)];
  BRISK_CHECK(blk.cache_id != 0);
  auto it = by_key_.find(blk.key);
  BRISK_CHECK(it != by_key_.end());
  // Chains are one block long unless keys collide, so the walk is O(1) in practice.
  if (it->second == b) {
    if (blk.next_same_key >= 0) {
      it->second = blk.next_same_key;
    } else {
      by_key_.erase(it);
    }
  } else {
    int32_t p = it->second;
    while (blocks_[size_t(p)].next_same_key != b) {
      p = blocks_[size_t(p)].next_same_key;
      BRISK_CHECK(p >= 0);
    }
    blocks_[size_t(p)].next_same_key = blk.next_same_key;
  }
  if (blk.prev_sibling >= 0) {
    blocks_[size_t(blk.prev_sibling)].next_sibling = blk.next_sibling;
  } else {
    auto sib = first_child_.find(blk.parent_cache_id);
    BRISK_CHECK(sib != first_child_.end() && sib->second == b);
    if (blk.next_sibling >= 0) {
      sib->second = blk.next_sibling;
    } else {
      first_child_.erase(sib);
    }
  }
  if (blk.next_sibling >= 0) blocks_[size_t(blk.next_sibling)].prev_sibling = blk.prev_sibling;
  blk.prev_sibling = blk.next_sibling = -1;
  blk.cache_id = 0;
  blk.hash = 0;
  blk.key = 0;
  blk.parent_cache_id = 0;
  blk.next_same_key = -1;
}

void BlockManager::FindTail(uint64_t parent_cache_id, std::span<const int32_t> next, int max_tokens,
                            PrefixMatch* m) const {
  auto it = first_child_.find(parent_cache_id);
  if (it == first_child_.end() || max_tokens <= 0) return;
  int seen = 0;
  for (int32_t b = it->second; b >= 0 && seen < kMaxTailCandidates;
       b = blocks_[size_t(b)].next_sibling, ++seen) {
    const std::span<const int32_t> stored = StoredTokens(b);
    int k = 0;
    while (k < max_tokens && stored[size_t(k)] == next[size_t(k)]) ++k;
    if (k > m->tail_tokens) {
      m->tail_block = b;
      m->tail_cache_id = blocks_[size_t(b)].cache_id;
      m->tail_tokens = k;
      if (k == max_tokens) break;
    }
  }
}

void BlockManager::Pin(int32_t b) {
  Block& blk = blocks_[size_t(b)];
  if (blk.ref++ == 0) Unlink(blk.cache_id != 0 ? cached_free_ : uncached_free_, b);
}

void BlockManager::Unref(int32_t b) {
  Block& blk = blocks_[size_t(b)];
  BRISK_CHECK(blk.ref > 0);
  if (--blk.ref == 0) {
    if (blk.cache_id != 0) {
      PushBack(cached_free_, b);
    } else {
      PushFront(uncached_free_, b);  // LIFO: the next allocation reuses it first
    }
  }
}

int32_t BlockManager::TakeFreeBlock() {
  if (uncached_free_.size > 0) {
    const int32_t b = uncached_free_.head;
    Unlink(uncached_free_, b);
    return b;
  }
  BRISK_CHECK(cached_free_.size > 0);
  const int32_t b = cached_free_.head;  // least recently freed
  Unlink(cached_free_, b);
  RecordRemoved(blocks_[size_t(b)].hash);
  DropHash(b);
  ++stats_.evictions;
  return b;
}

// ---- public API -------------------------------------------------------------------------------

PrefixMatch BlockManager::FindCachedPrefix(std::span<const int32_t> tokens, uint64_t cache_salt) {
  PrefixMatch m;
  stats_.prefix_queries += int64_t(tokens.size());
  if (!enable_prefix_cache_ || tokens.empty()) return m;
  // The last token is never covered: its logits are what the request needs computed.
  const size_t max_blocks = (tokens.size() - 1) / size_t(block_size_);
  uint64_t hash = ChainRoot(cache_salt);
  uint64_t parent_cache_id = RootId(cache_salt);
  for (size_t i = 0; i < max_blocks; ++i) {
    const auto block_tokens = tokens.subspan(i * size_t(block_size_), size_t(block_size_));
    hash = ChainHash(hash, block_tokens);
    const int32_t b = FindIdentical(KeyOf(hash), parent_cache_id, block_tokens);
    if (b < 0) break;
    parent_cache_id = blocks_[size_t(b)].cache_id;
    m.blocks.push_back(b);
    m.cache_ids.push_back(parent_cache_id);
  }
  m.num_tokens = int(m.blocks.size()) * block_size_;
  // A full next block would have matched above unless it holds the last token, so the tail is
  // at most block_size - 1 tokens either way.
  const int max_tail = std::min(block_size_ - 1, int(tokens.size()) - 1 - m.num_tokens);
  FindTail(parent_cache_id, tokens.subspan(size_t(m.num_tokens)), max_tail, &m);
  stats_.prefix_hits += m.total_tokens();
  return m;
}

int BlockManager::BlocksNeeded(SeqId id, int num_tokens, const PrefixMatch* match) const {
  BRISK_CHECK(num_tokens >= 0);
  auto it = seqs_.find(id);
  int have = it == seqs_.end() ? 0 : int(it->second.table.size());
  int from_free = 0;
  if (match != nullptr) {
    for (int32_t b : match->blocks) {
      BRISK_CHECK(b >= 0 && b < n_blocks_);
      if (blocks_[size_t(b)].ref == 0) ++from_free;
    }
    if (match->tail_block >= 0) {
      BRISK_CHECK(match->tail_block < n_blocks_);
      if (blocks_[size_t(match->tail_block)].ref == 0) ++from_free;  // pinned out of the LRU
    }
    have += int(match->blocks.size());
  }
  return from_free + std::max(0, CeilDiv(num_tokens, block_size_) - have);
}

bool BlockManager::Allocate(SeqId id, int num_tokens, const PrefixMatch* match,
                            uint64_t cache_salt) {
  BRISK_CHECK(num_tokens >= 0);
  auto it = seqs_.find(id);
  const bool is_new = it == seqs_.end();
  if (match != nullptr && (!match->blocks.empty() || match->tail_block >= 0)) {
    BRISK_CHECK_MSG(is_new, "a prefix match is only for a sequence's first Allocate");
    BRISK_CHECK(enable_prefix_cache_);
    BRISK_CHECK(match->cache_ids.size() == match->blocks.size());
    BRISK_CHECK(match->num_tokens == int(match->blocks.size()) * block_size_);
    // Each block must still hold the identity it had when found; otherwise its KV may belong to
    // other tokens now.
    for (size_t i = 0; i < match->blocks.size(); ++i) {
      const int32_t b = match->blocks[i];
      BRISK_CHECK(b >= 0 && b < n_blocks_);
      BRISK_CHECK_MSG(blocks_[size_t(b)].cache_id == match->cache_ids[i],
                      "prefix match block was evicted between FindCachedPrefix and Allocate");
    }
    if (match->tail_block >= 0) {
      const int32_t t = match->tail_block;
      BRISK_CHECK(t < n_blocks_);
      BRISK_CHECK(match->tail_tokens >= 1 && match->tail_tokens < block_size_);
      BRISK_CHECK_MSG(blocks_[size_t(t)].cache_id == match->tail_cache_id,
                      "partial-block source was evicted between FindCachedPrefix and Allocate");
      BRISK_CHECK_MSG(num_tokens > match->total_tokens(),
                      "the block a partial match is copied into must be allocated too");
    } else {
      BRISK_CHECK(match->tail_tokens == 0);
    }
  } else {
    match = nullptr;
  }

  // Check first, then mutate: a failed Allocate must leave everything as it was.
  if (BlocksNeeded(id, num_tokens, match) > num_free_blocks()) return false;

  Seq& seq = is_new ? seqs_[id] : it->second;
  if (is_new) {
    seq.cache_salt = cache_salt;
    seq.parent_cache_id = RootId(cache_salt);
  }
  if (match != nullptr && match->tail_block >= 0) {
    Pin(match->tail_block);  // before any eviction below, like the matched blocks
    seq.copy_src = match->tail_block;
  }
  if (match != nullptr && !match->blocks.empty()) {
    // Matched blocks first: taking them out of the LRU before any eviction below protects them.
    seq.table.reserve(size_t(CeilDiv(std::max(num_tokens, match->num_tokens), block_size_)));
    for (int32_t b : match->blocks) {
      Pin(b);
      seq.table.push_back(b);
    }
    const int32_t last = match->blocks.back();
    seq.num_committed = int(match->blocks.size());
    seq.last_hash = blocks_[size_t(last)].hash;
    seq.parent = last;
    seq.parent_cache_id = blocks_[size_t(last)].cache_id;
  }
  const size_t want = size_t(CeilDiv(num_tokens, block_size_));
  while (seq.table.size() < want) {
    const int32_t b = TakeFreeBlock();
    BRISK_CHECK(blocks_[size_t(b)].ref == 0);
    blocks_[size_t(b)].ref = 1;
    seq.table.push_back(b);
  }
  return true;
}

void BlockManager::CommitFullBlocks(SeqId id, std::span<const int32_t> tokens, int num_computed) {
  auto it = seqs_.find(id);
  BRISK_CHECK_MSG(it != seqs_.end(), "CommitFullBlocks on an unknown sequence");
  Seq& seq = it->second;
  BRISK_CHECK(num_computed >= 0 && size_t(num_computed) <= tokens.size());
  BRISK_CHECK_MSG(size_t(num_computed) <= seq.table.size() * size_t(block_size_),
                  "KV computed beyond the sequence's block table");
  if (!enable_prefix_cache_) return;
  const int full = num_computed / block_size_;
  bool extend = false;  // the last event is a BlockStored that ends with block i - 1
  for (int i = seq.num_committed; i < full; ++i) {
    if (seq.chain_broken) break;
    // The parent's identity died (an identical block we chained off was evicted): no lookup can
    // reach this position any more, so registering further blocks would only fill the map.
    if (i > 0 && blocks_[size_t(seq.parent)].cache_id != seq.parent_cache_id) {
      seq.chain_broken = true;
      break;
    }
    const auto block_tokens = tokens.subspan(size_t(i) * size_t(block_size_), size_t(block_size_));
    const uint64_t hash =
        ChainHash(i == 0 ? ChainRoot(seq.cache_salt) : seq.last_hash, block_tokens);
    int32_t canonical = FindIdentical(KeyOf(hash), seq.parent_cache_id, block_tokens);
    if (canonical < 0) {
      canonical = seq.table[size_t(i)];
      // Our own block already holding another identity cannot be re-pointed without breaking
      // the chains that go through it; give up on this sequence's tail instead.
      if (blocks_[size_t(canonical)].cache_id != 0) {
        seq.chain_broken = true;
        break;
      }
      Register(canonical, hash, seq.parent_cache_id, block_tokens);
      extend = RecordStored(hash, i == 0 ? std::nullopt : std::optional<uint64_t>(seq.last_hash),
                            block_tokens, extend);
    } else {
      extend = false;
    }
    seq.last_hash = hash;
    seq.parent = canonical;
    seq.parent_cache_id = blocks_[size_t(canonical)].cache_id;
  }
  seq.num_committed = std::max(seq.num_committed, full);
}

void BlockManager::Free(SeqId id) {
  auto it = seqs_.find(id);
  if (it == seqs_.end()) return;
  ReleaseCopySource(id);
  const std::vector<int32_t>& table = it->second.table;
  // Reverse order: a prefix's tail reaches the LRU before its head, so it is evicted first and
  // the head (shared by more future requests) survives longer.
  for (auto b = table.rbegin(); b != table.rend(); ++b) Unref(*b);
  seqs_.erase(it);
}

int32_t BlockManager::CopySource(SeqId id) const {
  auto it = seqs_.find(id);
  return it == seqs_.end() ? -1 : it->second.copy_src;
}

void BlockManager::ReleaseCopySource(SeqId id) {
  auto it = seqs_.find(id);
  if (it == seqs_.end() || it->second.copy_src < 0) return;
  Unref(it->second.copy_src);
  it->second.copy_src = -1;
}

std::span<const int32_t> BlockManager::BlockTable(SeqId id) const {
  auto it = seqs_.find(id);
  if (it == seqs_.end()) return {};
  return it->second.table;
}

void BlockManager::ResetPrefixCache() {
  for (int32_t b = 0; b < n_blocks_; ++b) {
    Block& blk = blocks_[size_t(b)];
    if (blk.cache_id == 0) continue;
    if (blk.ref == 0) {
      Unlink(cached_free_, b);
      PushBack(uncached_free_, b);
    }
    DropHash(b);
  }
  BRISK_CHECK(by_key_.empty() && first_child_.empty());
  if (record_events_) {
    published_.clear();
    events_.push_back({KvCacheEvent::Kind::kAllBlocksCleared, {}, std::nullopt, {}});
  }
  // Live sequences start their chains over; their next commit registers their own blocks.
  for (auto& [id, seq] : seqs_) {
    seq.num_committed = 0;
    seq.last_hash = 0;
    seq.parent = -1;
    seq.parent_cache_id = RootId(seq.cache_salt);
    seq.chain_broken = false;
  }
}

void BlockManager::SetHashMaskForTesting(uint64_t mask) {
  BRISK_CHECK_MSG(by_key_.empty(), "SetHashMaskForTesting after blocks were cached");
  hash_mask_ = mask;
}

namespace {
std::string At(int32_t b) { return " (block " + std::to_string(b) + ")"; }
}  // namespace

std::string BlockManager::CheckInvariants() const {
  for (auto check : {&BlockManager::CheckRefCounts, &BlockManager::CheckFreeLists,
                     &BlockManager::CheckKeyMap, &BlockManager::CheckSiblingLists})
    if (std::string e = (this->*check)(); !e.empty()) return e;
  return {};
}

// Reference counts against the tables and pins.
std::string BlockManager::CheckRefCounts() const {
  const size_t n = size_t(n_blocks_);
  std::vector<int32_t> refs(n, 0);
  for (const auto& [id, seq] : seqs_) {
    const std::string who = "seq " + std::to_string(id);
    std::vector<bool> in_table(n, false);
    for (int32_t b : seq.table) {
      if (b < 0 || b >= n_blocks_) return who + " holds a bad block id";
      if (in_table[size_t(b)]) return who + " holds a block twice" + At(b);
      in_table[size_t(b)] = true;
      ++refs[size_t(b)];
    }
    if (seq.num_committed < 0 || size_t(seq.num_committed) > seq.table.size())
      return who + " committed blocks it does not hold";
    if (seq.copy_src >= 0) {
      if (seq.copy_src >= n_blocks_) return who + " pins a bad block id";
      if (in_table[size_t(seq.copy_src)])
        return who + " pins a block of its own table" + At(seq.copy_src);
      ++refs[size_t(seq.copy_src)];
    }
  }
  for (int32_t b = 0; b < n_blocks_; ++b) {
    if (refs[size_t(b)] != blocks_[size_t(b)].ref) {
      return "refcount " + std::to_string(blocks_[size_t(b)].ref) + " but held by " +
             std::to_string(refs[size_t(b)]) + " tables and pins" + At(b);
    }
  }
  return {};
}

// One free list's links; marks its blocks `which` in *list_of.
std::string BlockManager::CheckFreeList(const List& l, int which, const char* name,
                                        std::vector<int>* list_of) const {
  int count = 0;
  int32_t prev = -1;
  for (int32_t b = l.head; b >= 0; b = blocks_[size_t(b)].next) {
    if (b >= n_blocks_) return std::string(name) + " holds a bad block id";
    if ((*list_of)[size_t(b)] != 0) return std::string(name) + ": block listed twice" + At(b);
    (*list_of)[size_t(b)] = which;
    if (blocks_[size_t(b)].prev != prev) return std::string(name) + ": bad prev link" + At(b);
    if (++count > n_blocks_) return std::string(name) + " has a cycle";
    prev = b;
  }
  if (l.tail != prev) return std::string(name) + ": tail is not the last block";
  if (l.size != count) return std::string(name) + ": size does not match its length";
  return {};
}

// Free lists: exactly the blocks with refcount 0, each in the list matching its cached state.
std::string BlockManager::CheckFreeLists() const {
  std::vector<int> list_of(size_t(n_blocks_), 0);  // 0 none, 1 uncached, 2 cached
  if (auto e = CheckFreeList(uncached_free_, 1, "uncached free list", &list_of); !e.empty())
    return e;
  if (auto e = CheckFreeList(cached_free_, 2, "cached free LRU", &list_of); !e.empty()) return e;
  for (int32_t b = 0; b < n_blocks_; ++b) {
    const Block& blk = blocks_[size_t(b)];
    if ((blk.ref == 0) != (list_of[size_t(b)] != 0)) {
      return blk.ref == 0 ? "free block in no free list" + At(b)
                          : "referenced block in a free list" + At(b);
    }
    if (blk.ref == 0 && (blk.cache_id != 0) != (list_of[size_t(b)] == 2))
      return "free block in the wrong list for its cached state" + At(b);
    if (!enable_prefix_cache_ && blk.cache_id != 0) return "cached block while disabled" + At(b);
    if (blk.cache_id >= next_cache_id_) return "cache id from the future" + At(b);
  }
  return {};
}

// Hash map: every chain entry is cached under that key, each cached block in exactly one chain,
// no two identical entries.
std::string BlockManager::CheckKeyMap() const {
  const size_t n = size_t(n_blocks_);
  std::vector<bool> in_map(n, false);
  size_t mapped = 0;
  for (const auto& [key, head] : by_key_) {
    if (head < 0) return "empty chain in the key map";
    for (int32_t b = head; b >= 0; b = blocks_[size_t(b)].next_same_key) {
      if (b >= n_blocks_) return "key map holds a bad block id";
      const Block& blk = blocks_[size_t(b)];
      if (in_map[size_t(b)]) return "block in the key map twice" + At(b);
      in_map[size_t(b)] = true;
      if (++mapped > n) return "key map chain has a cycle";
      if (blk.cache_id == 0) return "key map points at an uncached block" + At(b);
      if (blk.key != key) return "key map entry does not match the block's key" + At(b);
      if ((blk.key & ~hash_mask_) != 0) return "key outside the hash mask" + At(b);
      for (int32_t o = blk.next_same_key; o >= 0; o = blocks_[size_t(o)].next_same_key) {
        if (blocks_[size_t(o)].parent_cache_id == blk.parent_cache_id &&
            std::equal(StoredTokens(b).begin(), StoredTokens(b).end(), StoredTokens(o).begin()))
          return "two identical cached blocks" + At(b) + At(o);
      }
    }
  }
  for (int32_t b = 0; b < n_blocks_; ++b)
    if ((blocks_[size_t(b)].cache_id != 0) != in_map[size_t(b)])
      return "cached block missing from the key map" + At(b);
  if (record_events_) {  // published counts = cached blocks per hash
    std::unordered_map<uint64_t, int32_t> count;
    for (const Block& blk : blocks_)
      if (blk.cache_id != 0) ++count[blk.hash];
    if (count != published_) return "published hashes differ from the cached blocks' hashes";
  }
  return {};
}

// Sibling lists: each cached block in exactly the list of its parent identity, links both ways.
std::string BlockManager::CheckSiblingLists() const {
  const size_t n = size_t(n_blocks_);
  std::vector<bool> in_siblings(n, false);
  size_t listed = 0;
  for (const auto& [parent, head] : first_child_) {
    int32_t prev = -1;
    for (int32_t b = head; b >= 0; b = blocks_[size_t(b)].next_sibling) {
      if (b >= n_blocks_) return "sibling list holds a bad block id";
      const Block& blk = blocks_[size_t(b)];
      if (in_siblings[size_t(b)]) return "block in the sibling lists twice" + At(b);
      in_siblings[size_t(b)] = true;
      if (++listed > n) return "sibling list has a cycle";
      if (blk.cache_id == 0) return "sibling list holds an uncached block" + At(b);
      if (blk.parent_cache_id != parent) return "block in another parent's sibling list" + At(b);
      if (blk.prev_sibling != prev) return "bad prev_sibling link" + At(b);
      prev = b;
    }
  }
  for (int32_t b = 0; b < n_blocks_; ++b)
    if ((blocks_[size_t(b)].cache_id != 0) != in_siblings[size_t(b)])
      return "cached block missing from the sibling lists" + At(b);
  return {};
}

}  // namespace brisk

// Bookkeeping of the paged KV cache (DESIGN §5 "KV cache", "Prefix cache"): which block ids in
// [0, n_blocks) each sequence owns, reference counts for blocks shared through the prefix cache,
// and the free-block LRU that keeps cached blocks reusable until they are evicted. It never
// touches KV memory (model/kv_store.h holds that); it only hands out block ids.
//
// Prefix cache: a full block whose tokens all have KV written is registered under
// key = hash(key of the previous block, its tokens). Hashes only narrow the search: a lookup
// accepts a block only if its tokens are equal AND its parent is exactly the block the lookup
// matched one step earlier (compared by a never-reused cache identity, see `cache_id` below).
// So a returned prefix always holds KV for exactly the queried tokens, even when hashes collide
// or a parent block was evicted and its id reused.
//
// Partial blocks: a prompt rarely ends its shared part on a block boundary (a chat template plus a
// system prompt is 14 tokens for Qwen), so after the full blocks a lookup also searches the
// cached blocks that continue the matched chain (same parent) for the longest run of leading
// tokens equal to the query's next ones. Their K/V rows are copied into the sequence's own next
// block (the caller copies, see PrefixMatch::tail_block) instead of being computed, like
// token-granular prefix caches do. The source block is pinned from Allocate until the caller
// releases it, so no eviction can reuse it before the copy.
//
// Events (EnableEvents): each block that enters the cache, each eviction and each reset is also
// recorded as a KvCacheEvent (kv_events.h) under a published hash: the chain hash of the block's
// salt and whole token prefix, never masked (SetHashMaskForTesting only narrows the lookup key).
// Two cached blocks can share a published hash (a chain whose parent was evicted and recomputed
// leaves an orphaned copy of the tail); the events describe the SET of hashes: BlockStored when a
// hash's first block is cached, BlockRemoved when its last one is evicted.
//
// Not thread-safe: the scheduler owns it and calls it from one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/kv_events.h"

namespace brisk {

using SeqId = uint64_t;

// Result of a lookup; holds no references yet (Allocate takes them).
struct PrefixMatch {
  std::vector<int32_t> blocks;  // cached blocks for tokens [0, num_tokens)
  int num_tokens = 0;           // multiple of block_size
  // The cache identity of each block when it was found: lets Allocate detect (BRISK_CHECK) a
  // block that was evicted in between, even if its id was re-cached with other tokens.
  std::vector<uint64_t> cache_ids;
  // Partial block: cached block tail_block continues the matched chain and its first tail_tokens
  // (1..block_size-1) tokens equal tokens [num_tokens, num_tokens + tail_tokens); copying its K/V
  // into the sequence's next block covers them. tail_block = -1 (tail_tokens 0): none.
  int32_t tail_block = -1;
  uint64_t tail_cache_id = 0;
  int tail_tokens = 0;
  int total_tokens() const { return num_tokens + tail_tokens; }
};

struct BlockManagerStats {
  int64_t prefix_queries = 0;  // tokens queried by FindCachedPrefix
  int64_t prefix_hits = 0;     // tokens found cached
  int64_t evictions = 0;       // cached free blocks whose hash was dropped to reuse the block
};

class BlockManager {
 public:
  BlockManager(int n_blocks, int block_size, bool enable_prefix_cache);

  int block_size() const { return block_size_; }
  int num_blocks() const { return n_blocks_; }
  bool prefix_cache_enabled() const { return enable_prefix_cache_; }
  // Blocks not referenced by any sequence (including cached-but-free ones).
  int num_free_blocks() const { return uncached_free_.size + cached_free_.size; }
  double usage() const;  // referenced / total (0 for an empty pool)
  int num_seqs() const { return int(seqs_.size()); }
  int RefCount(int32_t block) const;  // sequences holding `block`

  // Longest cached prefix of `tokens` made of FULL blocks, then the longest partial continuation
  // (PrefixMatch::tail_*), never covering the last token (a request must compute at least one
  // token to get logits). Counts the query in stats (prefix_queries += tokens.size(),
  // prefix_hits += total_tokens()). Disabled cache => empty match (the query is still counted).
  // cache_salt: an opaque namespace the chain starts in (blocks registered under one salt are
  // never found under another, even on hash collisions), below 2^63. Sequences whose KV is
  // computed differently for the same tokens use different salts (the caller's to choose).
  PrefixMatch FindCachedPrefix(std::span<const int32_t> tokens, uint64_t cache_salt = 0);

  // Makes sequence `id`'s block table cover positions [0, num_tokens) (a table already longer
  // stays as it is). On the sequence's first call pass the match from FindCachedPrefix: its blocks
  // are taken first (refcount++, removed from the free LRU if they were free); passing a non-empty
  // match for a known sequence is a bug. New blocks come from the free list: blocks holding no
  // hash first, then the least recently freed cached block (evicted: its hash is dropped).
  // Returns false and changes NOTHING if there are not enough free blocks (running out is a normal
  // outcome, not an error). A match whose blocks were evicted meanwhile is the caller's bug
  // (BRISK_CHECK): call FindCachedPrefix and Allocate with no allocation in between.
  // cache_salt (first call only): the namespace this sequence's blocks are registered under.
  // A match with a tail pins tail_block (it is not free, so not evictable) until
  // ReleaseCopySource or Free; num_tokens must then reach past match->total_tokens(), so that the
  // block the tail is copied into (table[match->blocks.size()]) is the sequence's own.
  bool Allocate(SeqId id, int num_tokens, const PrefixMatch* match = nullptr,
                uint64_t cache_salt = 0);

  // How many free blocks Allocate(id, num_tokens, match) would take: new blocks plus matched
  // blocks that are currently free. Allocate succeeds iff this is <= num_free_blocks().
  int BlocksNeeded(SeqId id, int num_tokens, const PrefixMatch* match = nullptr) const;

  // Registers the sequence's full blocks whose tokens are all computed: tokens = the sequence's
  // tokens (prompt + generated), num_computed = how many of them have KV written (BRISK_CHECK:
  // <= tokens.size() and covered by the block table). If an identical block (same key, same
  // tokens, same parent) is already cached, the existing entry is kept and the sequence's next
  // block chains off it. Idempotent; O(1) when no new block is full. No-op when disabled.
  void CommitFullBlocks(SeqId id, std::span<const int32_t> tokens, int num_computed);

  // The block pinned by the sequence's Allocate as its partial-block copy source (-1: none).
  int32_t CopySource(SeqId id) const;
  // Unpins it (after its K/V rows were copied); it becomes free again if nothing else holds it.
  // No-op if the sequence has none.
  void ReleaseCopySource(SeqId id);

  // Releases the sequence (and its copy-source pin): refcount-- on each block; blocks reaching 0
  // become free (cached ones go to the LRU tail and stay findable until evicted). Freed in reverse
  // table order so that a prefix's tail is evicted before its head. Unknown id: no-op.
  void Free(SeqId id);

  // Valid until the next Allocate/Free of that sequence. Empty span for an unknown id.
  std::span<const int32_t> BlockTable(SeqId id) const;
  bool HasSeq(SeqId id) const { return seqs_.count(id) != 0; }
  const BlockManagerStats& stats() const { return stats_; }

  // Drops every cached hash (e.g. after a model reload, when cached KV no longer matches what the
  // model would compute). Free cached blocks become plain free blocks; blocks in use stay with
  // their sequences but are no longer findable, and live sequences re-register their full blocks
  // on their next CommitFullBlocks (their KV is theirs, so it is still right for them).
  void ResetPrefixCache();

  // Full consistency check for tests: refcounts equal the number of tables holding each block,
  // free lists = blocks with refcount 0, every hash-map entry points at a block whose stored key
  // matches, no duplicates. Returns a description of the first violation, or empty. Slow
  // (O(n_blocks x sequences), more under hash collisions): tests only.
  std::string CheckInvariants() const;

  // Starts recording KvCacheEvents (TakeEvents drains them); off by default, so an engine without
  // a subscriber pays nothing. Only before anything is cached (BRISK_CHECK).
  void EnableEvents();
  bool events_enabled() const { return record_events_; }
  // The events since the last call, in order.
  std::vector<KvCacheEvent> TakeEvents();
  // The published hash of every block in the prefix cache now, sorted, without duplicates: what a
  // subscriber that saw every event since the start holds.
  std::vector<uint64_t> CachedBlockHashes() const;

  // The published hash chain (docs/kv-events.md): a block's hash is ChainHash(hash of the block
  // before it, its tokens), and the block before a chain's first one has hash ChainRoot(salt). A
  // fixed function of the salt and the whole token prefix: every process computes the same.
  static uint64_t ChainHash(uint64_t parent_hash, std::span<const int32_t> tokens);
  static uint64_t ChainRoot(uint64_t cache_salt);

  // Test hook: keys are masked with `mask` (0 = every block collides) to exercise verification.
  // Only before anything is cached (BRISK_CHECK).
  void SetHashMaskForTesting(uint64_t mask);

 private:
  // Intrusive doubly linked list over block ids (links in Block): O(1) push/pop/remove.
  struct List {
    int32_t head = -1, tail = -1;
    int size = 0;
  };
  struct Block {
    int32_t ref = 0;
    int32_t prev = -1, next = -1;  // links in the free list the block is in (ref == 0)
    // Cached identity: 0 = holds no hash. Each registration gets a fresh value from a 64-bit
    // counter, never reused, so "parent_cache_id == cache_id of block p" proves p still holds the
    // very prefix the child was computed after, even if p was evicted and re-cached since.
    uint64_t cache_id = 0;
    uint64_t hash = 0;             // the published chain hash (never masked)
    uint64_t key = 0;              // hash & hash_mask_: the key-map key
    uint64_t parent_cache_id = 0;  // 0: first block of a sequence
    int32_t next_same_key = -1;    // chain of cached blocks sharing `key` (collisions)
    // Siblings: cached blocks with the same parent_cache_id, most recently registered first
    // (the candidates of a partial-block match).
    int32_t prev_sibling = -1, next_sibling = -1;
  };
  struct Seq {
    std::vector<int32_t> table;
    // Commit progress: blocks [0, num_committed) were processed; the chain continues from the
    // published hash `last_hash` and the cached block `parent` (identity `parent_cache_id`) holding
    // block num_committed - 1's content, which may be another sequence's identical block (all three
    // unused while num_committed == 0).
    int num_committed = 0;
    uint64_t last_hash = 0;
    int32_t parent = -1;
    uint64_t parent_cache_id = 0;
    bool chain_broken = false;  // the parent's identity died: nothing further is findable
    uint64_t cache_salt = 0;    // namespace of the chain (FindCachedPrefix)
    int32_t copy_src = -1;      // pinned partial-block copy source (holds one reference)
  };

  uint64_t KeyOf(uint64_t hash) const { return hash & hash_mask_; }
  // The cached block with exactly this key, parent and tokens, or -1.
  int32_t FindIdentical(uint64_t key, uint64_t parent_cache_id,
                        std::span<const int32_t> tokens) const;
  void Register(int32_t b, uint64_t hash, uint64_t parent_cache_id,
                std::span<const int32_t> tokens);
  // Event recording (no-ops unless enabled). RecordStored returns whether it recorded (the hash
  // was not published yet); `extend` appends to the last event, the chain's previous block.
  bool RecordStored(uint64_t hash, std::optional<uint64_t> parent_hash,
                    std::span<const int32_t> tokens, bool extend);
  void RecordRemoved(uint64_t hash);
  void DropHash(int32_t b);  // unlinks b from the hash map; b keeps its place in any list
  // Longest partial continuation of the chain at parent_cache_id (see PrefixMatch::tail_*).
  void FindTail(uint64_t parent_cache_id, std::span<const int32_t> next, int max_tokens,
                PrefixMatch* m) const;
  void Pin(int32_t b);      // ref++, out of the free LRU if it was free
  void Unref(int32_t b);    // ref--, into the right free list at 0
  int32_t TakeFreeBlock();  // pops a free block (uncached first, else evicts the LRU head)
  std::span<const int32_t> StoredTokens(int32_t b) const {
    return {block_tokens_.data() + size_t(b) * size_t(block_size_), size_t(block_size_)};
  }

  void PushBack(List& l, int32_t b);
  void PushFront(List& l, int32_t b);
  void Unlink(List& l, int32_t b);

  // CheckInvariants' parts: each returns the first violation it finds, or "".
  std::string CheckRefCounts() const;
  std::string CheckFreeList(const List& l, int which, const char* name,
                            std::vector<int>* list_of) const;
  std::string CheckFreeLists() const;
  std::string CheckKeyMap() const;
  std::string CheckSiblingLists() const;

  int n_blocks_, block_size_;
  bool enable_prefix_cache_;
  uint64_t hash_mask_ = ~uint64_t(0);
  uint64_t next_cache_id_ = 1;
  std::vector<Block> blocks_;
  std::vector<int32_t> block_tokens_;  // n_blocks x block_size: tokens of cached blocks
  List uncached_free_;                 // free blocks holding no hash (LIFO)
  List cached_free_;                   // free cached blocks, least recently freed at the head
  std::unordered_map<uint64_t, int32_t> by_key_;       // key -> first block of its chain
  std::unordered_map<uint64_t, int32_t> first_child_;  // parent_cache_id -> newest child
  std::unordered_map<SeqId, Seq> seqs_;
  BlockManagerStats stats_;
  bool record_events_ = false;
  std::vector<KvCacheEvent> events_;                 // recorded, not yet taken
  std::unordered_map<uint64_t, int32_t> published_;  // published hash -> cached blocks holding it
};

}  // namespace brisk

#include "tokenizer/bpe.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <cstring>
#include <memory>
#include <queue>

#include "tokenizer/vocab.h"
#include "util/check.h"

namespace brisk::tok {

void MergeTable::Reserve(size_t n) {
  size_t cap = 16;
  while (cap < n + n / 2) cap <<= 1;  // load <= 2/3
  if (cap <= slots_.size()) return;
  std::vector<Entry> old = std::move(slots_);
  slots_.assign(cap, Entry{kEmpty, 0, 0});
  mask_ = cap - 1;
  shift_ = 64 - std::countr_zero(cap);
  size_ = 0;
  for (const Entry& e : old) {
    if (e.key != kEmpty) {
      Insert(static_cast<int32_t>(e.key >> 32), static_cast<int32_t>(e.key & 0xFFFFFFFFu), e.rank,
             e.merged);
    }
  }
}

void MergeTable::Grow() { Reserve(std::max<size_t>(16, 2 * (size_ + 1))); }

void MergeTable::Insert(int32_t left, int32_t right, int32_t rank, int32_t merged) {
  if (3 * (size_ + 1) > 2 * slots_.size()) Grow();
  const uint64_t key = Key(left, right);
  for (uint64_t s = Slot(key);; s = (s + 1) & mask_) {
    Entry& e = slots_[s];
    if (e.key == key) return;  // keep the earlier (lower) rank
    if (e.key == kEmpty) {
      e = Entry{key, rank, merged};
      ++size_;
      return;
    }
  }
}

namespace {

// Direct-mapped cache of piece -> ids, one per thread. An entry belongs to the model whose uid
// it carries, so several tokenizers can share a thread without mixing results.
struct CacheEntry {
  char key[24];
  uint8_t len;
  uint8_t n_ids;
  uint16_t unused;
  uint32_t owner;
  int32_t ids[8];
};
static_assert(sizeof(CacheEntry) == 64);
constexpr size_t kCacheEntries = 4096;  // 256 KiB
constexpr size_t kCacheMaxPiece = sizeof(CacheEntry::key);
constexpr size_t kCacheMaxIds = sizeof(CacheEntry::ids) / sizeof(int32_t);

struct PieceCache {
  CacheEntry entries[kCacheEntries];
};

PieceCache& ThreadCache() {
  thread_local std::unique_ptr<PieceCache> cache;
  if (!cache) cache = std::make_unique<PieceCache>();  // zeroed: owner 0 is nobody
  return *cache;
}

std::atomic<uint32_t> g_next_uid{1};

}  // namespace

void BpeModel::Init(const int32_t (&byte_ids)[256], MergeTable merges, bool monotone,
                    int32_t n_ranks) {
  std::memcpy(byte_ids_, byte_ids, sizeof(byte_ids_));
  merges_ = std::move(merges);
  monotone_ = monotone;
  n_ranks_ = n_ranks;
  uid_ = g_next_uid.fetch_add(1);
  if (uid_ == 0) uid_ = g_next_uid.fetch_add(1);  // after 2^32 models
}

void BpeModel::Encode(std::string_view piece, std::vector<int32_t>* out) const {
  if (piece.empty()) return;
  // Positions are int32: a piece over 1 GiB (text over 1 GiB of one character class) is
  // encoded in 1 GiB chunks, the one place where the result may differ from HF's.
  constexpr size_t kMaxPiece = size_t{1} << 30;
  while (piece.size() > kMaxPiece) {
    Encode(piece.substr(0, kMaxPiece), out);
    piece.remove_prefix(kMaxPiece);
  }
  if (piece.size() == 1) {
    const int32_t id = byte_ids_[static_cast<uint8_t>(piece[0])];
    if (id >= 0) out->push_back(id);
    return;
  }
  if (piece.size() <= kCacheMaxPiece) {
    CacheEntry& e =
        ThreadCache().entries[HashBytes(piece.data(), piece.size()) & (kCacheEntries - 1)];
    if (e.owner == uid_ && e.len == piece.size() &&
        std::memcmp(e.key, piece.data(), piece.size()) == 0) {
      out->insert(out->end(), e.ids, e.ids + e.n_ids);
      return;
    }
    const size_t before = out->size();
    EncodeArray(piece, out);
    const size_t n = out->size() - before;
    if (n <= kCacheMaxIds) {
      std::memcpy(e.key, piece.data(), piece.size());
      e.len = static_cast<uint8_t>(piece.size());
      e.n_ids = static_cast<uint8_t>(n);
      std::memcpy(e.ids, out->data() + before, n * sizeof(int32_t));
      e.owner = uid_;
    }
    return;
  }
  if (piece.size() <= kArrayMax) {
    EncodeArray(piece, out);
  } else if (piece.size() >= kBucketsMin && monotone_) {
    EncodeBuckets(piece, out);
  } else {
    EncodeHeap(piece, out);
  }
}

// Symbols in small arrays linked by `next`; each step scans the live pairs for the lowest rank
// (leftmost on ties), merges it and refreshes the two pairs around it.
void BpeModel::EncodeArray(std::string_view piece, std::vector<int32_t>* out) const {
  const size_t cap = std::max(piece.size(), kArrayMax);
  std::vector<int32_t> heap_buf;
  int32_t stack_buf[4 * kArrayMax];
  int32_t* buf = stack_buf;
  if (piece.size() > kArrayMax) {
    heap_buf.resize(4 * cap);
    buf = heap_buf.data();
  }
  int32_t* id = buf;
  int32_t* rank = buf + cap;  // rank[i]: rank of (id[i], id[next[i]]), INT_MAX if none
  int32_t* merged = buf + 2 * cap;
  int32_t* next = buf + 3 * cap;
  int32_t m = 0;
  for (char c : piece) {
    const int32_t t = byte_ids_[static_cast<uint8_t>(c)];
    if (t >= 0) id[m++] = t;  // HF drops characters missing from the vocabulary
  }
  if (m == 0) return;
  for (int32_t i = 0; i < m; ++i) next[i] = i + 1;
  next[m - 1] = -1;
  auto pair = [&](int32_t i) {
    if (!merges_.Find(id[i], id[next[i]], &rank[i], &merged[i])) rank[i] = INT_MAX;
  };
  for (int32_t i = 0; i + 1 < m; ++i) pair(i);
  while (true) {
    int32_t best = -1, best_prev = -1, best_rank = INT_MAX;
    for (int32_t i = 0, prev = -1; next[i] >= 0; prev = i, i = next[i]) {
      if (rank[i] < best_rank) {
        best_rank = rank[i];
        best = i;
        best_prev = prev;
      }
    }
    if (best < 0) break;
    id[best] = merged[best];
    next[best] = next[next[best]];
    if (best_prev >= 0) pair(best_prev);
    if (next[best] >= 0) pair(best);
  }
  for (int32_t i = 0; i >= 0; i = next[i]) out->push_back(id[i]);
}

namespace {

// One symbol of a piece being merged, in a doubly linked list over the original positions.
struct Sym {
  int32_t id;  // -1 once merged into its left neighbour
  int32_t prev;
  int32_t next;
};

// The piece's bytes as linked symbols (bytes without an id are dropped); the last has next -1.
std::vector<Sym> ByteSymbols(std::string_view piece, const int32_t (&byte_ids)[256]) {
  std::vector<Sym> sym;
  sym.reserve(piece.size());
  for (char c : piece) {
    const int32_t id = byte_ids[static_cast<uint8_t>(c)];
    if (id < 0) continue;
    const auto i = static_cast<int32_t>(sym.size());
    sym.push_back(Sym{id, i - 1, i + 1});
  }
  if (!sym.empty()) sym.back().next = -1;
  return sym;
}

}  // namespace

// Symbols in a doubly linked list over the original positions; candidate pairs in a binary
// min-heap of (rank << 32 | left position), so ties go to the leftmost pair. A rank names one
// merge, so a popped candidate is still valid exactly when the pair now at that position has
// the same rank.
void BpeModel::EncodeHeap(std::string_view piece, std::vector<int32_t>* out) const {
  std::vector<Sym> sym = ByteSymbols(piece, byte_ids_);
  if (sym.empty()) return;
  const auto n = static_cast<int32_t>(sym.size());

  auto key = [](int32_t rank, int32_t pos) {
    return (uint64_t{static_cast<uint32_t>(rank)} << 32) | static_cast<uint32_t>(pos);
  };
  std::vector<uint64_t> heap;
  heap.reserve(n);
  int32_t rank, merged;
  for (int32_t i = 0; i + 1 < n; ++i) {
    if (merges_.Find(sym[i].id, sym[i + 1].id, &rank, &merged)) heap.push_back(key(rank, i));
  }
  const std::greater<uint64_t> after;
  std::make_heap(heap.begin(), heap.end(), after);
  auto push = [&](int32_t left) {
    const int32_t right = sym[left].next;
    if (right >= 0 && merges_.Find(sym[left].id, sym[right].id, &rank, &merged)) {
      heap.push_back(key(rank, left));
      std::push_heap(heap.begin(), heap.end(), after);
    }
  };

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), after);
    const uint64_t top = heap.back();
    heap.pop_back();
    const auto pos = static_cast<int32_t>(top & 0xFFFFFFFFu);
    const auto want = static_cast<int32_t>(top >> 32);
    Sym& left = sym[pos];
    if (left.id < 0 || left.next < 0) continue;
    Sym& right = sym[left.next];
    if (!merges_.Find(left.id, right.id, &rank, &merged) || rank != want) continue;  // stale
    left.id = merged;
    right.id = -1;
    left.next = right.next;
    if (right.next >= 0) sym[right.next].prev = pos;
    if (left.prev >= 0) push(left.prev);
    push(pos);
  }
  for (int32_t i = 0; i >= 0; i = sym[i].next) out->push_back(sym[i].id);
}

// For monotone vocabularies. A merge of rank r only creates pairs of rank > r, so once the
// lowest rank present is r, every pair of rank r that will ever exist is already present, and
// HF's heap order (rank, then position) is: take the lowest rank, merge its pairs left to
// right, repeat. Pairs wait in one bucket per rank; only the ranks go through a (small) heap.
void BpeModel::EncodeBuckets(std::string_view piece, std::vector<int32_t>* out) const {
  BRISK_CHECK(monotone_);
  std::vector<Sym> sym = ByteSymbols(piece, byte_ids_);
  if (sym.empty()) return;
  const auto n = static_cast<int32_t>(sym.size());

  std::vector<int32_t> bucket_of_rank(static_cast<size_t>(n_ranks_), -1);
  std::vector<std::vector<int32_t>> buckets;
  std::vector<int32_t> free_buckets;
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> ranks;
  int32_t rank, merged;
  auto add = [&](int32_t left) {
    const int32_t right = sym[left].next;
    if (right < 0 || !merges_.Find(sym[left].id, sym[right].id, &rank, &merged)) return;
    int32_t& b = bucket_of_rank[static_cast<size_t>(rank)];
    if (b < 0) {
      if (free_buckets.empty()) {
        b = static_cast<int32_t>(buckets.size());
        buckets.emplace_back();
      } else {
        b = free_buckets.back();
        free_buckets.pop_back();
      }
      ranks.push(rank);
    }
    buckets[static_cast<size_t>(b)].push_back(left);
  };
  for (int32_t i = 0; i + 1 < n; ++i) add(i);

  std::vector<int32_t> todo;
  while (!ranks.empty()) {
    const int32_t r = ranks.top();
    ranks.pop();
    const int32_t b = bucket_of_rank[static_cast<size_t>(r)];
    bucket_of_rank[static_cast<size_t>(r)] = -1;
    todo.swap(buckets[static_cast<size_t>(b)]);
    free_buckets.push_back(b);
    if (!std::is_sorted(todo.begin(), todo.end())) std::sort(todo.begin(), todo.end());
    for (const int32_t pos : todo) {
      Sym& left = sym[pos];
      if (left.id < 0 || left.next < 0) continue;
      Sym& right = sym[left.next];
      if (!merges_.Find(left.id, right.id, &rank, &merged) || rank != r) continue;  // stale
      left.id = merged;
      right.id = -1;
      left.next = right.next;
      if (right.next >= 0) sym[right.next].prev = pos;
      if (left.prev >= 0) add(left.prev);
      add(pos);
    }
    todo.clear();
  }
  for (int32_t i = 0; i >= 0; i = sym[i].next) out->push_back(sym[i].id);
}

}  // namespace brisk::tok

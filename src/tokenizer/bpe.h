// Byte-level BPE over token ids: a piece's bytes start as one-byte tokens and adjacent pairs are
// merged lowest rank first (ties: leftmost first), as HF tokenizers' BPE does. Short pieces use
// an array scan; longer ones a binary heap over a linked list (O(n log n)); very long ones
// (kBucketsMin bytes and up) per-rank buckets processed in rank order, which is the same order
// when the vocabulary is monotone and avoids a heap of millions of entries. Nothing is
// quadratic in the piece length.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace brisk::tok {

// (left id, right id) -> (rank, merged id), open addressing.
class MergeTable {
 public:
  void Reserve(size_t n);
  // Keeps the first (lowest-rank) entry when a pair repeats.
  void Insert(int32_t left, int32_t right, int32_t rank, int32_t merged);
  size_t size() const { return size_; }
  // Hint that (left, right) is about to be inserted or looked up.
  void Prefetch(int32_t left, int32_t right) const {
    __builtin_prefetch(&slots_[Slot(Key(left, right))]);
  }

  // Calls f(left, right, rank, merged) for every merge, in no particular order.
  template <typename F>
  void ForEach(F&& f) const {
    for (const Entry& e : slots_)
      if (e.key != kEmpty)
        f(int32_t(uint32_t(e.key >> 32)), int32_t(uint32_t(e.key)), e.rank, e.merged);
  }

  // Returns true and fills rank/merged when (left, right) merges.
  bool Find(int32_t left, int32_t right, int32_t* rank, int32_t* merged) const {
    const uint64_t key = Key(left, right);
    for (uint64_t s = Slot(key);; s = (s + 1) & mask_) {
      const Entry& e = slots_[s];
      if (e.key == key) {
        *rank = e.rank;
        *merged = e.merged;
        return true;
      }
      if (e.key == kEmpty) return false;
    }
  }

 private:
  struct Entry {
    uint64_t key;
    int32_t rank;
    int32_t merged;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t Key(int32_t l, int32_t r) {
    return (uint64_t{static_cast<uint32_t>(l)} << 32) | static_cast<uint32_t>(r);
  }
  uint64_t Slot(uint64_t key) const { return ((key * 0x9E3779B97F4A7C15ull) >> shift_) & mask_; }
  void Grow();

  std::vector<Entry> slots_ = std::vector<Entry>(1, Entry{kEmpty, 0, 0});
  uint64_t mask_ = 0;
  int shift_ = 63;
  size_t size_ = 0;
};

class BpeModel {
 public:
  // byte_ids[b] is the id of the token for the single byte b (-1 if the vocabulary lacks it).
  // `monotone`: every merge ranks after all merges that create its two parts (true for any
  // vocabulary produced by BPE training); it enables the bucketed path for very long pieces.
  // n_ranks: one more than the largest rank in `merges`.
  void Init(const int32_t (&byte_ids)[256], MergeTable merges, bool monotone, int32_t n_ranks);

  // Appends the ids of one pre-tokenised piece (raw bytes). Results for short pieces are kept
  // in a small per-thread cache (no locks; a Tokenizer is shared by many threads).
  void Encode(std::string_view piece, std::vector<int32_t>* out) const;
  // The algorithms, exposed so tests can check they agree. EncodeBuckets requires monotone().
  void EncodeArray(std::string_view piece, std::vector<int32_t>* out) const;
  void EncodeHeap(std::string_view piece, std::vector<int32_t>* out) const;
  void EncodeBuckets(std::string_view piece, std::vector<int32_t>* out) const;
  bool monotone() const { return monotone_; }

  const MergeTable& merges() const { return merges_; }
  int32_t byte_id(uint8_t b) const { return byte_ids_[b]; }

  static constexpr size_t kArrayMax = 48;      // longest piece handled by the array scan
  static constexpr size_t kBucketsMin = 4096;  // shortest piece handled by EncodeBuckets

 private:
  uint32_t uid_ = 0;  // identifies this model's entries in the per-thread cache
  int32_t byte_ids_[256] = {};
  MergeTable merges_;
  bool monotone_ = false;
  int32_t n_ranks_ = 0;
};

}  // namespace brisk::tok

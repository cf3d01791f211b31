// The paged KV cache memory (DESIGN §5): a pool of fixed-size blocks, each holding K and V of
// `block_size` consecutive positions for every layer and KV head, in fp16 (default) or f32.
// Sequences address it through a block table (KvBlocks); who owns which block is decided by the
// engine's BlockManager, not here. q8_0 (--kv-type q8_0) stores int8 values with one f16 scale
// per 32 head dimensions of a position: 53% of f16's bytes, llama.cpp's q8_0 cache size.
//
// Layout: one chunk per (layer, block, K|V, KV head) of block_size x head_dim elements, position
// rows contiguous, so attention streams one chunk per block and converts it to fp32 in one go.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/attention.h"
#include "model/config.h"
#include "util/status.h"

namespace brisk {

class ThreadPool;

enum class KvType : uint8_t { kF16, kF32, kQ8_0 };
Result<KvType> ParseKvType(const std::string& name);  // "f16" | "f32" | "q8_0"
const char* KvTypeName(KvType t);
KvElem KvElemOf(KvType t);  // the attention kernel's name for the storage

inline constexpr int kDefaultKvBlockSize = 16;
inline constexpr int kMaxKvBlockSize = 64;

class KvStore {
 public:
  KvStore(const ModelConfig& c, int n_blocks, int block_size = kDefaultKvBlockSize,
          KvType type = KvType::kF16);
  // Bytes of one block (all layers, K and V) for a model: for sizing a memory budget.
  static size_t BlockBytes(const ModelConfig& c, int block_size, KvType type);

  // Touches every page now, so the whole budget is resident from the start: a server's memory
  // then stays flat under load instead of growing as new blocks are first written (and the
  // forward pass never takes those page faults). Split over `pool`'s threads: first touches
  // are the OS zeroing pages, which is slow on some VMs (seconds for a few GiB).
  void Prefault(ThreadPool& pool);

  // Copies block `src`'s K and V (every layer and head, all block_size positions) into block
  // `dst`: a partial prefix-cache hit reuses the first rows of a cached block this way.
  void CopyBlock(int src, int dst);

  int n_blocks() const { return n_blocks_; }
  int n_head_kv() const { return n_head_kv_; }
  int block_size() const { return block_size_; }
  KvType type() const { return type_; }
  int head_dim() const { return head_dim_; }
  size_t bytes() const { return bytes_; }

  // First element of the (layer, block, kv = 0 for K / 1 for V, head) chunk of block_size x
  // head_dim elements, laid out as the attention kernel reads them: K position-minor, V
  // position-major (KChunkIndex / VChunkIndex in kernels/cpu/attention.h).
  uint8_t* chunk(int layer, int block, int kv, int head) const {
    const size_t i =
        ((size_t(layer) * n_blocks_ + size_t(block)) * 2 + size_t(kv)) * n_head_kv_ + size_t(head);
    return base_ + i * chunk_bytes_;
  }
  size_t chunk_bytes() const { return chunk_bytes_; }
  // Bytes between the same (layer, kv, head) chunk of consecutive blocks.
  size_t block_stride() const { return 2 * size_t(n_head_kv_) * chunk_bytes_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  int n_layer_, n_head_kv_, head_dim_, n_blocks_, block_size_;
  KvType type_;
  size_t chunk_bytes_, bytes_;
  std::unique_ptr<uint8_t, Free> mem_;
  uint8_t* base_;
};

// One sequence's view: table[i] is the block holding positions [i * block_size, (i+1) *
// block_size).
struct KvBlocks {
  KvStore* store = nullptr;
  const int32_t* table = nullptr;
  int n_blocks = 0;
  int capacity() const { return store ? n_blocks * store->block_size() : 0; }
};

// A private store for one sequence with the identity block table (CLI tools, raw benchmarks,
// tests): positions [0, capacity).
class SeqKvCache {
 public:
  SeqKvCache(const ModelConfig& c, int capacity, KvType type = KvType::kF16,
             int block_size = kDefaultKvBlockSize);
  KvBlocks blocks() { return {&store_, table_.data(), int(table_.size())}; }
  int capacity() const { return capacity_; }

 private:
  int capacity_;
  KvStore store_;
  std::vector<int32_t> table_;
};

}  // namespace brisk

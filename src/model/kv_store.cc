#include "model/kv_store.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "runtime/huge_page_allocator.h"
#include "runtime/thread_pool.h"
#include "util/check.h"

namespace brisk {

Result<KvType> ParseKvType(const std::string& name) {
  if (name == "f16") return KvType::kF16;
  if (name == "f32") return KvType::kF32;
  if (name == "q8_0") return KvType::kQ8_0;
  return Status::Error("unknown KV cache type '" + name + "' (expected f16, f32 or q8_0)");
}

const char* KvTypeName(KvType t) {
  return t == KvType::kF16 ? "f16" : t == KvType::kQ8_0 ? "q8_0" : "f32";
}

KvElem KvElemOf(KvType t) {
  return t == KvType::kF16 ? KvElem::kF16 : t == KvType::kQ8_0 ? KvElem::kQ8_0 : KvElem::kF32;
}

void KvStore::Free::operator()(void* p) const { std::free(p); }

size_t KvStore::BlockBytes(const ModelConfig& c, int block_size, KvType type) {
  return size_t(c.n_layer) * 2 * size_t(c.n_head_kv) *
         KvChunkBytes(KvElemOf(type), block_size, c.head_dim);
}

KvStore::KvStore(const ModelConfig& c, int n_blocks, int block_size, KvType type)
    : n_layer_(c.n_layer),
      n_head_kv_(c.n_head_kv),
      head_dim_(c.head_dim),
      n_blocks_(n_blocks),
      block_size_(block_size),
      type_(type) {
  BRISK_CHECK(n_blocks >= 0 && block_size >= 1 && block_size <= kMaxKvBlockSize);
  BRISK_CHECK(type != KvType::kQ8_0 || head_dim_ % kKvQ8Group == 0);  // CheckKvType first
  chunk_bytes_ = KvChunkBytes(KvElemOf(type), block_size, head_dim_);
  bytes_ = BlockBytes(c, block_size, type) * size_t(n_blocks);
  // Transparent huge pages (HugePageAlloc: 2 MiB aligned, advised; zeroed lazily by the OS). A
  // decode step reads and writes a few KiB in each of thousands of (layer, block) chunks: on
  // 4 KiB pages nearly every chunk access missed the TLB (bench raw B=16: the KV writes alone
  // took ~3 us per token and layer, most of the bias/RoPE/KV-write op).
  mem_.reset(static_cast<uint8_t*>(HugePageAlloc(std::max<size_t>(bytes_, 1))));
  base_ = mem_.get();
}

void KvStore::Prefault(ThreadPool& pool) {
  constexpr int64_t kChunk = int64_t(2) << 20;  // one huge page
  const int64_t chunks = int64_t((bytes_ + kChunk - 1) / kChunk);
  pool.ParallelFor(chunks, 1, [this](int64_t c0, int64_t c1, int) {
    const size_t begin = size_t(c0 * kChunk), end = std::min(bytes_, size_t(c1 * kChunk));
    std::memset(base_ + begin, 0, end - begin);
  });
}

void KvStore::CopyBlock(int src, int dst) {
  BRISK_CHECK(src >= 0 && src < n_blocks_ && dst >= 0 && dst < n_blocks_ && src != dst);
  // A (layer, block)'s chunks (K and V of every head) are contiguous: one copy per layer.
  for (int l = 0; l < n_layer_; ++l)
    std::memcpy(chunk(l, dst, 0, 0), chunk(l, src, 0, 0), block_stride());
}

SeqKvCache::SeqKvCache(const ModelConfig& c, int capacity, KvType type, int block_size)
    : capacity_(capacity),
      store_(c, (std::max(capacity, 1) + block_size - 1) / block_size, block_size, type),
      table_(size_t(store_.n_blocks())) {
  for (size_t i = 0; i < table_.size(); ++i) table_[i] = int32_t(i);
}

}  // namespace brisk

// KvStore on its own: the prefault that makes the KV budget resident at start.
#include "model/kv_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "runtime/thread_pool.h"

namespace brisk {
namespace {

// Qwen2.5-0.5B's KV shape: 24 layers x 2 KV heads x 64 values, 196,608 bytes a block in f16.
ModelConfig KvShape() {
  ModelConfig c;
  c.n_layer = 24;
  c.n_head = 14;
  c.n_head_kv = 2;
  c.head_dim = 64;
  return c;
}

// Prefault splits the arena into 2 MiB pieces over the pool's threads: every byte must be
// covered, also the last, partial piece, whatever the thread count.
TEST(KvStore, PrefaultClearsEveryByteWithAnyThreadCount) {
  for (int threads : {1, 2, 3}) {
    for (int blocks : {1, 23, 64}) {  // 0.19 MiB, 4.3 MiB (a partial third piece), 12 MiB
      SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(blocks) + " blocks");
      ThreadPool pool(threads);
      KvStore kv(KvShape(), blocks);
      ASSERT_EQ(kv.bytes(), size_t(blocks) * 196608);
      uint8_t* base = kv.chunk(0, 0, 0, 0);
      std::memset(base, 0xAB, kv.bytes());
      kv.Prefault(pool);
      size_t nonzero = 0, first = kv.bytes();
      for (size_t i = 0; i < kv.bytes(); ++i)
        if (base[i] != 0) first = std::min(first, i), ++nonzero;
      EXPECT_EQ(nonzero, 0u) << "first at byte " << first;
    }
  }
}

}  // namespace
}  // namespace brisk

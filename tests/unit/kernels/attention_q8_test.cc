// The attention kernel over a q8_0 KV cache: widening a q8_0 element is exact, so attention over
// q8_0 chunks must give the bits of attention over f32 chunks holding the same values (scale x
// int8), on every ISA tier, for the AVX-512 tier's lockstep block-16 paths as well.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/attention.h"
#include "util/fp16.h"

namespace brisk {
namespace {

struct Pair {  // the same K/V values stored as q8_0 and as f32
  std::vector<uint8_t> q8, f32;
  size_t q8_chunk, f32_chunk;
};

Pair MakePair(int bs, int hd, int n_blocks, std::mt19937& rng) {
  Pair p;
  p.q8_chunk = KvChunkBytes(KvElem::kQ8_0, bs, hd);
  p.f32_chunk = KvChunkBytes(KvElem::kF32, bs, hd);
  EXPECT_EQ(p.q8_chunk, size_t(bs) * hd * 34 / 32);  // llama.cpp's q8_0 size
  p.q8.resize(2 * p.q8_chunk * n_blocks);
  p.f32.resize(2 * p.f32_chunk * n_blocks);
  std::uniform_int_distribution<int> qd(-127, 127);
  std::uniform_real_distribution<float> sd(0.001f, 0.05f);
  for (int b = 0; b < n_blocks; ++b) {
    for (int kv = 0; kv < 2; ++kv) {
      uint8_t* q8 = p.q8.data() + (2 * b + kv) * p.q8_chunk;
      float* f = reinterpret_cast<float*>(p.f32.data() + (2 * b + kv) * p.f32_chunk);
      uint16_t* scales = reinterpret_cast<uint16_t*>(q8 + size_t(bs) * hd);
      for (int i = 0; i < bs * hd / kKvQ8Group; ++i) scales[i] = Fp32ToFp16(sd(rng));
      for (int row = 0; row < bs; ++row) {
        for (int d = 0; d < hd; ++d) {
          const size_t i = kv == 0 ? KChunkIndex(bs, row, d) : VChunkIndex(hd, row, d);
          const size_t si = kv == 0 ? KScaleIndex(bs, row, d) : VScaleIndex(hd, row, d);
          const int8_t v = int8_t(qd(rng));
          q8[i] = uint8_t(v);
          f[i] = float(v) * Fp16ToFp32(scales[si]);
        }
      }
    }
  }
  return p;
}

std::vector<float> Attend(const std::vector<uint8_t>& mem, size_t chunk, KvElem elem, int bs,
                          int hd, int group, int n_ctx, int n_tokens,
                          const std::vector<int32_t>& table, const std::vector<float>& q, Isa isa) {
  std::vector<float> scratch(AttendScratchFloats(group, hd, bs));
  const int64_t stride = int64_t(group) * hd;
  std::vector<float> out(size_t(n_tokens) * stride, -1.0f);
  AttendArgs a;
  a.q = q.data();
  a.q_stride = stride;
  a.n_tokens = n_tokens;
  a.k0 = mem.data();
  a.v0 = mem.data() + chunk;
  a.block_stride = 2 * chunk;
  a.table = table.data();
  a.block_size = bs;
  a.elem = elem;
  a.n_ctx = n_ctx;
  a.group = group;
  a.head_dim = hd;
  a.scale = 1.0f / std::sqrt(float(hd));
  a.scratch = scratch.data();
  a.out = out.data();
  a.out_stride = stride;
  AttendGroup(a, isa);
  return out;
}

TEST(AttentionQ8, SameBitsAsF32HoldingTheDequantizedValuesOnEveryIsa) {
  std::mt19937 rng(11);
  struct Case {
    int group, hd, bs, n_ctx, n_tokens;
  };
  const Case cases[] = {{7, 64, 16, 1, 1},   {7, 64, 16, 300, 1},  {7, 64, 16, 200, 8},
                        {2, 128, 32, 77, 3}, {16, 128, 16, 70, 2}, {3, 32, 16, 1000, 1},
                        {4, 64, 64, 129, 4}, {5, 64, 1, 9, 1}};
  for (const Case& c : cases) {
    const int n_blocks = (c.n_ctx + c.n_tokens - 1 + c.bs - 1) / c.bs + 2;
    const Pair p = MakePair(c.bs, c.hd, n_blocks, rng);
    std::vector<int32_t> table(n_blocks);
    for (int i = 0; i < n_blocks; ++i) table[i] = i;
    std::shuffle(table.begin(), table.end(), rng);
    std::vector<float> q(size_t(c.n_tokens) * c.group * c.hd);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (float& v : q) v = nd(rng);
    const auto want = Attend(p.f32, p.f32_chunk, KvElem::kF32, c.bs, c.hd, c.group, c.n_ctx,
                             c.n_tokens, table, q, Isa::kScalar);
    for (Isa isa : AllIsas()) {
      if (!IsaSupported(isa)) continue;
      const auto got = Attend(p.q8, p.q8_chunk, KvElem::kQ8_0, c.bs, c.hd, c.group, c.n_ctx,
                              c.n_tokens, table, q, isa);
      ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)))
          << IsaName(isa) << " group " << c.group << " hd " << c.hd << " bs " << c.bs << " n_ctx "
          << c.n_ctx << " tokens " << c.n_tokens;
    }
  }
}

}  // namespace
}  // namespace brisk

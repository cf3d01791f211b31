// The paged attention kernel: every ISA tier gives the same bits as the scalar tier (f16 and f32
// caches, partial last blocks, scattered block tables), a token's result does not depend on how
// many tokens share the call, and the result is a softmax-weighted average of V within float
// rounding of a float64 reference.
#include "kernels/cpu/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "util/fp16.h"

namespace brisk {
namespace {

struct Case {
  int group, head_dim, block_size, n_ctx;
  bool f16;
};

// A store with `n_blocks` blocks of one (layer, head) chunk pair each: K chunk then V chunk.
struct Store {
  std::vector<uint8_t> mem;
  size_t chunk_bytes, block_stride;
};

Store MakeStore(const Case& c, int n_blocks, std::mt19937& rng) {
  Store s;
  const size_t elem = c.f16 ? 2 : 4;
  s.chunk_bytes = size_t(c.block_size) * c.head_dim * elem;
  s.block_stride = 2 * s.chunk_bytes;
  s.mem.resize(s.block_stride * n_blocks);
  std::normal_distribution<float> nd(0.0f, 1.5f);
  const size_t n = s.mem.size() / elem;
  for (size_t i = 0; i < n; ++i) {
    const float v = nd(rng);
    if (c.f16) {
      const uint16_t h = Fp32ToFp16(v);
      std::memcpy(&s.mem[i * 2], &h, 2);
    } else {
      std::memcpy(&s.mem[i * 4], &v, 4);
    }
  }
  return s;
}

float Elem(const Store& s, const Case& c, int block, int kv, int row, int d) {
  const uint8_t* p = s.mem.data() + size_t(block) * s.block_stride + kv * s.chunk_bytes;
  const size_t i = kv == 0 ? KChunkIndex(c.block_size, row, d) : VChunkIndex(c.head_dim, row, d);
  if (c.f16) {
    uint16_t h;
    std::memcpy(&h, p + i * 2, 2);
    return Fp16ToFp32(h);
  }
  float f;
  std::memcpy(&f, p + i * 4, 4);
  return f;
}

// Attends n_tokens query tokens (token i at context c.n_ctx + i) in one call.
std::vector<float> RunAttend(const Case& c, const Store& s, const std::vector<int32_t>& table,
                             const float* q, int n_tokens, Isa isa) {
  std::vector<float> scratch(AttendScratchFloats(c.group, c.head_dim, c.block_size));
  const int64_t stride = int64_t(c.group) * c.head_dim;
  std::vector<float> out(size_t(n_tokens) * stride, -1.0f);
  AttendArgs a;
  a.q = q;
  a.q_stride = stride;
  a.n_tokens = n_tokens;
  a.k0 = s.mem.data();
  a.v0 = s.mem.data() + s.chunk_bytes;
  a.block_stride = s.block_stride;
  a.table = table.data();
  a.block_size = c.block_size;
  a.elem = c.f16 ? KvElem::kF16 : KvElem::kF32;
  a.n_ctx = c.n_ctx;
  a.group = c.group;
  a.head_dim = c.head_dim;
  a.scale = 1.0f / std::sqrt(float(c.head_dim));
  a.scratch = scratch.data();
  a.out = out.data();
  a.out_stride = stride;
  AttendGroup(a, isa);
  return out;
}
std::vector<float> RunAttend(const Case& c, const Store& s, const std::vector<int32_t>& table,
                             const std::vector<float>& q, Isa isa) {
  return RunAttend(c, s, table, q.data(), 1, isa);
}

TEST(Attention, EveryIsaBitwiseEqualAndCloseToFloat64) {
  std::mt19937 rng(7);
  const Case cases[] = {{7, 64, 16, 1, true},
                        {7, 64, 16, 16, true},
                        {7, 64, 16, 17, false},
                        {7, 64, 16, 300, true},
                        {2, 128, 32, 77, true},
                        {1, 16, 1, 5, false},
                        {16, 64, 64, 129, true},
                        {3, 32, 16, 1000, false},
                        // Block 16 with head_dim 64 / 128: the AVX-512 tier's lockstep rows
                        // (4 at a time, then the rest; two whole blocks at once, then single
                        // ones) must give the scalar bits.
                        {5, 64, 16, 200, true},
                        {16, 128, 16, 70, true},
                        {6, 128, 16, 33, false}};
  for (const Case& c : cases) {
    const int n_blocks_used = (c.n_ctx + c.block_size - 1) / c.block_size;
    const int n_blocks = n_blocks_used + 3;
    Store s = MakeStore(c, n_blocks, rng);
    std::vector<int32_t> table(n_blocks);
    for (int i = 0; i < n_blocks; ++i) table[i] = i;
    std::shuffle(table.begin(), table.end(), rng);  // scattered pages
    std::vector<float> q(size_t(c.group) * c.head_dim);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (float& v : q) v = nd(rng);
    const auto want = RunAttend(c, s, table, q, Isa::kScalar);
    for (Isa isa : AllIsas(/*from=*/1)) {  // the SIMD tiers, x86 and ARM
      if (!IsaSupported(isa)) continue;
      const auto got = RunAttend(c, s, table, q, isa);
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)))
          << IsaName(isa) << " n_ctx " << c.n_ctx << " f16 " << c.f16;
    }
    // float64 reference: softmax(q k / sqrt(d)) v per head.
    const double scale = 1.0 / std::sqrt(double(c.head_dim));
    for (int h = 0; h < c.group; ++h) {
      std::vector<double> w(c.n_ctx);
      double mx = -1e300;
      for (int p = 0; p < c.n_ctx; ++p) {
        double dot = 0;
        for (int d = 0; d < c.head_dim; ++d)
          dot += double(q[size_t(h) * c.head_dim + d]) *
                 Elem(s, c, table[p / c.block_size], 0, p % c.block_size, d);
        w[p] = dot * scale;
        mx = std::max(mx, w[p]);
      }
      double sum = 0;
      for (double& x : w) sum += (x = std::exp(x - mx));
      for (int d = 0; d < c.head_dim; ++d) {
        double o = 0;
        for (int p = 0; p < c.n_ctx; ++p)
          o += w[p] / sum * Elem(s, c, table[p / c.block_size], 1, p % c.block_size, d);
        EXPECT_NEAR(want[size_t(h) * c.head_dim + d], o, 2e-5 * (1 + std::fabs(o)))
            << "head " << h << " dim " << d << " n_ctx " << c.n_ctx;
      }
    }
  }
}

// Prefill hands up to kAttendMaxTokens consecutive tokens to one call; each token's bits must be
// those of the token attended alone (batch invariance starts here), on every ISA.
TEST(Attention, TokensSharingACallMatchEachAlone) {
  std::mt19937 rng(11);
  const Case cases[] = {{7, 64, 16, 1, true},
                        {7, 64, 16, 13, true},
                        {2, 128, 16, 40, false},
                        {3, 32, 5, 9, true},
                        {1, 16, 1, 3, false},
                        {16, 64, 64, 60, true},
                        {7, 64, 32, 100, true},
                        // Several whole blocks before the tokens' own: the AVX-512 tier takes
                        // two at a time for all tokens of the call.
                        {7, 64, 16, 50, true},
                        {5, 128, 16, 97, false}};
  for (const Case& c : cases) {
    const int T = kAttendMaxTokens;
    const int n_max = c.n_ctx + T - 1;
    const int n_blocks = (n_max + c.block_size - 1) / c.block_size + 2;
    Store s = MakeStore(c, n_blocks, rng);
    std::vector<int32_t> table(n_blocks);
    for (int i = 0; i < n_blocks; ++i) table[i] = i;
    std::shuffle(table.begin(), table.end(), rng);
    const size_t stride = size_t(c.group) * c.head_dim;
    std::vector<float> q(T * stride);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (float& v : q) v = nd(rng);
    for (Isa isa : AllIsas()) {  // every tier, x86 and ARM
      if (!IsaSupported(isa)) continue;
      for (int n_tokens : {2, 3, T}) {
        const auto together = RunAttend(c, s, table, q.data(), n_tokens, isa);
        for (int i = 0; i < n_tokens; ++i) {
          Case alone = c;
          alone.n_ctx = c.n_ctx + i;
          const auto one = RunAttend(alone, s, table, q.data() + i * stride, 1, isa);
          EXPECT_EQ(0,
                    std::memcmp(one.data(), together.data() + i * stride, stride * sizeof(float)))
              << IsaName(isa) << " token " << i << " of " << n_tokens << " n_ctx " << c.n_ctx
              << " block " << c.block_size;
        }
      }
    }
  }
}

}  // namespace
}  // namespace brisk

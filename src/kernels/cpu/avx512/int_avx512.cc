// AVX-512 VNNI integer matmul kernels (compiled with -mavx512f/bw/vl/dq/vnni; see isa_kernels.h
// for why this file includes nothing that common code also instantiates).
//
// A 16-row group's 32-value block is unpacked into 8 registers of unsigned bytes: register o
// holds values 4o..4o+3 of each row in that row's lane, so vpdpbusd against the broadcast
// activation chunk o accumulates every row's block dot in its own lane. The integer result is
// exact; the float epilogue follows the canonical formulas of scalar_kernels.cc bit for bit.
#include <immintrin.h>

#include <array>
#include <cstring>
#include <utility>

#include "kernels/cpu/avx512/exp_avx512.h"
#include "kernels/cpu/avx512/unpack_avx512.h"
#include "kernels/cpu/isa_kernels.h"

namespace brisk::kern {

// amx_avx512.cc: 16 tokens of a group from the GEMM scratch with AMX tiles.
void AmxTile16(const IntArgs& a, int t0, int cls, int neg_field, size_t next_block_bytes);

namespace {

template <int Kind>
inline int32_t NegOffset(const ActMeta& m) {
  return Kind == 0 ? m.neg8 : Kind == 2 ? m.neg16 : (Kind == 4 || Kind >= 8) ? m.neg128 : 0;
}

inline __m512i Bc(const int8_t* x, int o) {
  int32_t v;
  std::memcpy(&v, x + 4 * o, 4);
  return _mm512_set1_epi32(v);
}

// One token's contribution of one block to the 16 row accumulators f.
template <int Kind>
inline __m512 Dot(const Unpacked& u, const int8_t* x, const ActMeta& m, __m512 f) {
  constexpr int kClass = ClassOf(Kind);
  const __m512 da = _mm512_set1_ps(m.d);
  if constexpr (kClass == 2) {
    __m512i a0 = _mm512_set1_epi32(m.neg32h[0]), a1 = _mm512_set1_epi32(m.neg32h[1]);
    for (int o = 0; o < 4; ++o) {
      a0 = _mm512_dpbusd_epi32(a0, u.w[o], Bc(x, o));
      a1 = _mm512_dpbusd_epi32(a1, u.w[4 + o], Bc(x, 4 + o));
    }
    f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a0), _mm512_mul_ps(u.s0, da), f);
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(a1), _mm512_mul_ps(u.s1, da), f);
  } else {
    // Two chains (integer sums are exact, so the split is free) halve the dependency latency.
    __m512i a0 = _mm512_set1_epi32(NegOffset<Kind>(m)), a1 = _mm512_setzero_si512();
    for (int o = 0; o < 4; ++o) {
      a0 = _mm512_dpbusd_epi32(a0, u.w[o], Bc(x, o));
      a1 = _mm512_dpbusd_epi32(a1, u.w[4 + o], Bc(x, 4 + o));
    }
    const __m512i acc = _mm512_add_epi32(a0, a1);
    f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), _mm512_mul_ps(u.s0, da), f);
    if constexpr (kClass == 1) f = _mm512_fmadd_ps(u.s1, _mm512_set1_ps(m.dsum), f);
    return f;
  }
}

// Dot for NT >= 4 tokens at once, in operand-major order: the NT integer chains are adjacent in
// program order, so the vpdpbusd of different tokens overlap (one chain per token needs no
// merging add; the token-major order of Dot measured 20% slower with a single chain per token,
// latency-bound). Same integers and the same float epilogue as Dot: same bits.
template <int Kind, int NT>
inline void DotTokens(const Unpacked& u, const int8_t* x, int64_t x_stride, const ActMeta* m,
                      int64_t m_stride, __m512* f) {
  constexpr int kClass = ClassOf(Kind);
  if constexpr (kClass == 2) {
    __m512i a0[NT], a1[NT];
    for (int t = 0; t < NT; ++t) {
      a0[t] = _mm512_set1_epi32(m[t * m_stride].neg32h[0]);
      a1[t] = _mm512_set1_epi32(m[t * m_stride].neg32h[1]);
    }
    for (int o = 0; o < 4; ++o)
      for (int t = 0; t < NT; ++t) {
        a0[t] = _mm512_dpbusd_epi32(a0[t], u.w[o], Bc(x + t * x_stride, o));
        a1[t] = _mm512_dpbusd_epi32(a1[t], u.w[4 + o], Bc(x + t * x_stride, 4 + o));
      }
    for (int t = 0; t < NT; ++t) {
      const __m512 da = _mm512_set1_ps(m[t * m_stride].d);
      f[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a0[t]), _mm512_mul_ps(u.s0, da), f[t]);
      f[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a1[t]), _mm512_mul_ps(u.s1, da), f[t]);
    }
  } else {
    __m512i acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm512_set1_epi32(NegOffset<Kind>(m[t * m_stride]));
    for (int o = 0; o < 8; ++o)
      for (int t = 0; t < NT; ++t)
        acc[t] = _mm512_dpbusd_epi32(acc[t], u.w[o], Bc(x + t * x_stride, o));
    for (int t = 0; t < NT; ++t) {
      const ActMeta& mt = m[t * m_stride];
      f[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[t]), _mm512_mul_ps(u.s0, _mm512_set1_ps(mt.d)),
                             f[t]);
      if constexpr (kClass == 1) f[t] = _mm512_fmadd_ps(u.s1, _mm512_set1_ps(mt.dsum), f[t]);
    }
  }
}

// NT > 8 tokens (Q8_0's GEMV tiles, see Gemv): ceil(NT / 4) groups of near-equal size, each an
// operand-major DotTokens, so the live registers stay at NT accumulators + 8 operands + 4 chains.
// Each token's formula is DotTokens' (same bits).
template <int Kind, int NT>
inline void DotTokenGroups(const Unpacked& u, const int8_t* x, int64_t x_stride, const ActMeta* m,
                           int64_t m_stride, __m512* f) {
  constexpr int kGroups = (NT + 3) / 4, kBase = NT / kGroups, kRem = NT % kGroups;
  [&]<int... I>(std::integer_sequence<int, I...>) {
    (DotTokens<Kind, kBase + (I < kRem ? 1 : 0)>(
         u, x + (I * kBase + (I < kRem ? I : kRem)) * x_stride, x_stride,
         m + (I * kBase + (I < kRem ? I : kRem)) * m_stride, m_stride,
         f + I * kBase + (I < kRem ? I : kRem)),
     ...);
  }
  (std::make_integer_sequence<int, kGroups>{});
}

inline void Store(const IntArgs& a, int t, __m512 f) {
  float* y = a.y + t * a.ldy;
  if (a.valid_rows == 16)
    _mm512_storeu_ps(y, f);
  else
    _mm512_mask_storeu_ps(y, __mmask16((1u << a.valid_rows) - 1), f);
}

template <int Kind>
inline void PrefetchBlock(const uint8_t* group, int64_t b) {
  PrefetchLines(group + b * kBlockBytes[Kind] + kPrefetchBytes, kBlockBytes[Kind]);
}

// NT tokens starting at t0; blocks either unpacked from the packed group in registers (GEMV) or
// loaded from the scratch the GEMM path filled.
template <int Kind, int NT, bool kScratch>
void Tile(const IntArgs& a, int t0, const uint8_t* next = nullptr) {
  const int64_t nb = a.cols / 32;
  __m512 f[NT];
  for (int t = 0; t < NT; ++t) f[t] = _mm512_setzero_ps();
  const int8_t* x0 = a.aq + t0 * a.aq_stride;
  const ActMeta* m0 = a.am + t0 * a.am_stride;
  for (int64_t b = 0; b < nb; ++b) {
    Unpacked u;
    if constexpr (kScratch) {
      // The same block of the group computed next (IntArgs::next_group; first token tile only).
      if (next) PrefetchLines(next + b * kBlockBytes[Kind], kBlockBytes[Kind]);
      const uint8_t* rec = a.scratch + b * kUnpackedBlockBytes;
      for (int o = 0; o < 8; ++o) u.w[o] = Load(rec + 64 * o);
      u.s0 = _mm512_load_ps(reinterpret_cast<const float*>(rec + kUnpackedS0));
      u.s1 = _mm512_load_ps(reinterpret_cast<const float*>(rec + kUnpackedS1));
    } else {
      PrefetchBlock<Kind>(a.group, b);
      Unpack<Kind>(a.group, b, &u);
    }
    if constexpr (NT > 8) {
      DotTokenGroups<Kind, NT>(u, x0 + 32 * b, a.aq_stride, m0 + b, a.am_stride, f);
    } else if constexpr (NT >= 4) {
      DotTokens<Kind, NT>(u, x0 + 32 * b, a.aq_stride, m0 + b, a.am_stride, f);
    } else {
      for (int t = 0; t < NT; ++t)
        f[t] = Dot<Kind>(u, x0 + t * a.aq_stride + 32 * b, m0[t * a.am_stride + b], f[t]);
    }
  }
  for (int t = 0; t < NT; ++t) Store(a, t0 + t, f[t]);
}

template <int Kind, bool kScratch, int... NT>
constexpr auto TileTable(std::integer_sequence<int, NT...>) {
  return std::array<void (*)(const IntArgs&, int, const uint8_t*), sizeof...(NT)>{
      &Tile<Kind, NT + 1, kScratch>...};
}

// Tokens [t, t + n) in ceil(n / max) tiles of near-equal size: 17 tokens with max 8 are
// 6 + 6 + 5, not 8 + 8 + 1, whose one-token tile is latency-bound (Dot) yet pays a whole pass
// over the weights. fn(i, tiles, t0, size) per tile. A token's bits do not depend on its tile
// (Dot and DotTokens compute the same formula).
template <typename Fn>
void ForEachTile(int t, int n, int max, Fn&& fn) {
  if (n <= 0) return;
  const int tiles = (n + max - 1) / max;
  for (int i = 0; i < tiles; ++i) {
    const int size = n / tiles + (i < n % tiles ? 1 : 0);
    fn(i, tiles, t, size);
    t += size;
  }
}

// Tokens [t, n_tokens) in ForEachTile's tiles; next: prefetched during the first tile (see
// IntArgs::next_group), if any.
template <size_t Max>
void RunTiles(const std::array<void (*)(const IntArgs&, int, const uint8_t*), Max>& tile,
              const IntArgs& a, int t, const uint8_t* next) {
  ForEachTile(t, a.n_tokens - t, int(Max), [&](int i, int, int t0, int size) {
    tile[size - 1](a, t0, i == 0 ? next : nullptr);
  });
}

template <int Kind, int Max, bool kScratch>
void Tiles(const IntArgs& a, int t = 0, const uint8_t* next = nullptr) {
  static constexpr auto kTile = TileTable<Kind, kScratch>(std::make_integer_sequence<int, Max>{});
  RunTiles(kTile, a, t, next);
}

// Up to 8 tokens share each in-register unpack. With the operand-major DotTokens this beat
// unpacking once into the scratch up to ~24 tokens (kernel_bench --gemm, 2 threads: Q5_0
// ffn_down at 8 tokens 0.20 -> 0.13 ms, gate+up 0.33 -> 0.25-0.28; at 32 the gemm path wins
// about as often as it loses), hence gemm_min_tokens = 25 below (the kinds with a GemvPair keep
// the GEMV path longer: gemm_min_tokens_kind). Q8_0 has no unpack to share
// but streams the most bytes per block, and each further tile rereads them: one tile of up to
// 16 tokens measured ~20% faster there at 16 tokens (kernel_bench --gemm, 2 threads, Zen 4),
// while the other types lost with it (their 8-chain DotTokens beats 4-token groups).
template <int Kind>
void Gemv(const IntArgs& a) {
  Tiles<Kind, Kind == 4 ? 16 : 8, false>(a);
}

// Unpacks every block of one packed group into scratch records (kUnpackedBlockBytes each).
template <int Kind>
void UnpackToScratch(const uint8_t* group, int64_t nb, uint8_t* scratch) {
  for (int64_t b = 0; b < nb; ++b) {
    Unpacked u;
    PrefetchBlock<Kind>(group, b);
    Unpack<Kind>(group, b, &u);
    uint8_t* rec = scratch + b * kUnpackedBlockBytes;
    for (int o = 0; o < 8; ++o) _mm512_store_si512(rec + 64 * o, u.w[o]);
    _mm512_store_ps(reinterpret_cast<float*>(rec + kUnpackedS0), u.s0);
    _mm512_store_ps(reinterpret_cast<float*>(rec + kUnpackedS1),
                    ClassOf(Kind) ? u.s1 : _mm512_setzero_ps());
  }
}

template <int Kind>
void Gemm(const IntArgs& a) {
  UnpackToScratch<Kind>(a.group, a.cols / 32, a.scratch);
  int t = 0;
  const uint8_t* next = a.next_group;
  // Q6_K's per-16 scales need two tile products and two epilogues per block: slower than VNNI.
  if (a.amx && ClassOf(Kind) != 2) {
    constexpr int kNeg = Kind == 0 ? 8 : Kind == 2 ? 16 : 128;
    for (; t + 16 <= a.n_tokens; t += 16, next = nullptr)
      AmxTile16(a, t, ClassOf(Kind), kNeg, next ? kBlockBytes[Kind] : 0);
  }
  Tiles<Kind, 8, true>(a, t, next);
}

// Block b of both groups of the next pair into L2. A pair kernel's token tile `tile` of `tiles`
// fetches the blocks with b % tiles == tile: one pair ahead, spread evenly over the tiles, so the
// memory stream runs while every tile computes (kernel_bench --gemm, Q5_0 gate+up at 16 tokens:
// GemvPair 0.36 ms when the first tile alone fetched the pair, 0.30 spread; GemmPair at 16-32
// tokens 0.35-0.39 -> 0.33-0.34 / 0.58-0.62 -> 0.53-0.55).
template <int Kind>
inline void PrefetchNextPair(const IntArgs& a, const uint8_t* next, int64_t b) {
  const uint8_t* n0 = next + b * kBlockBytes[Kind];
  for (size_t l = 0; l < kBlockBytes[Kind]; l += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(n0 + l), _MM_HINT_T1);
    _mm_prefetch(reinterpret_cast<const char*>(n0 + a.group_bytes + l), _MM_HINT_T1);
  }
}

// The min terms of class-1 kinds for both groups of a pair: f += s1 * dsum per token (after
// the block's scaled integer sum, as in DotTokens).
template <int NT>
inline void AddPairMinTerms(__m512 s01, __m512 s11, const ActMeta* m, int64_t m_stride, __m512* f0,
                            __m512* f1) {
  for (int t = 0; t < NT; ++t) {
    const __m512 dsum = _mm512_set1_ps(m[t * m_stride].dsum);
    f0[t] = _mm512_fmadd_ps(s01, dsum, f0[t]);
    f1[t] = _mm512_fmadd_ps(s11, dsum, f1[t]);
  }
}

// Stores a pair tile's outputs. Group 0 is full whenever a group 1 exists; group 1 may be the
// matrix's last, partial one. With a.glu (gate and up rows, both full), silu(gate) * up instead:
// a.glu is this tier's silu_mul (misc_avx512.cc), whose 16-value step SiluMul16 runs inline here.
template <int NT>
inline void StorePair(const IntArgs& a, int t0, const __m512* f0, const __m512* f1) {
  if (a.glu) {
    for (int t = 0; t < NT; ++t) _mm512_storeu_ps(a.y + (t0 + t) * a.ldy, SiluMul16(f0[t], f1[t]));
    return;
  }
  const __mmask16 mask1 = __mmask16((1u << (a.valid_rows - 16)) - 1);
  for (int t = 0; t < NT; ++t) {
    float* y = a.y + (t0 + t) * a.ldy;
    _mm512_storeu_ps(y, f0[t]);
    _mm512_mask_storeu_ps(y + 16, mask1, f1[t]);
  }
}

// Both groups' operand chunk o (w0, w1) against chunk o of NT tokens' activations.
template <int NT>
[[gnu::always_inline]] inline void DotPairChunk(__m512i w0, __m512i w1, const int8_t* x,
                                                int64_t x_stride, int o, __m512i* acc0,
                                                __m512i* acc1) {
  for (int t = 0; t < NT; ++t) {
    const __m512i xb = Bc(x + t * x_stride, o);
    acc0[t] = _mm512_dpbusd_epi32(acc0[t], w0, xb);
    acc1[t] = _mm512_dpbusd_epi32(acc1[t], w1, xb);
  }
}

// Closes a block (Q6_K: a half block) for both groups: f += float(acc) * (scale * token scale),
// DotTokens' float epilogue.
template <int NT>
[[gnu::always_inline]] inline void FoldPairSums(const __m512i* acc0, const __m512i* acc1, __m512 s0,
                                                __m512 s1, const ActMeta* m, int64_t m_stride,
                                                __m512* f0, __m512* f1) {
  for (int t = 0; t < NT; ++t) {
    const __m512 da = _mm512_set1_ps(m[t * m_stride].d);
    f0[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc0[t]), _mm512_mul_ps(s0, da), f0[t]);
    f1[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc1[t]), _mm512_mul_ps(s1, da), f1[t]);
  }
}

// The loop both pair tiles share: NT tokens from t0 over every block of the pair, tile `tile` of
// `tiles` prefetching its share of the next pair (IntArgs::next_group) as it goes.
// add_block(b, x, m, f0, f1) adds block b's terms for tokens x (activations) and m (their meta).
template <int Kind, int NT, typename AddBlock>
[[gnu::always_inline]] inline void PairTileLoop(const IntArgs& a, int t0, int tile, int tiles,
                                                AddBlock add_block) {
  const int64_t nb = a.cols / 32;
  __m512 f0[NT], f1[NT];
  for (int t = 0; t < NT; ++t) f0[t] = f1[t] = _mm512_setzero_ps();
  const int8_t* x0 = a.aq + t0 * a.aq_stride;
  const ActMeta* m0 = a.am + t0 * a.am_stride;
  const uint8_t* next = a.next_group;  // a local: the compiler can split the loop on it
  for (int64_t b = 0; b < nb; ++b) {
    if (next && b % tiles == tile) PrefetchNextPair<Kind>(a, next, b);
    add_block(b, x0 + 32 * b, m0 + b, f0, f1);
  }
  StorePair<NT>(a, t0, f0, f1);
}

// GEMM tile over two groups' scratch records (group 1's at scratch + nb records) and NT tokens.
// Each broadcast activation chunk feeds both groups' operands, and each loaded operand NT tokens:
// per block 2 NT x 8 vpdpbusd against 8 NT broadcasts and 16 operand loads, where the one-group
// tile of 8 tokens pays 8 broadcasts per 8 vpdpbusd. The one-group tile was bound by those loads
// on Zen 5 (two vpdpbusd per cycle); /tmp microbench, one thread, Q5_0 records in L2: 1 x 8
// tokens 470-505 GOPS, 2 x 4 600-620, 2 x 5 560-630, 2 x 6 525-585, 3 x 4 530-570.
// Per (row, token) the formula is DotTokens' (exact integer sum, then the same float epilogue):
// same bits as the one-group paths.
template <int Kind, int NT>
void PairTile(const IntArgs& a, int t0, int tile, int tiles) {
  const uint8_t* rec1 = a.scratch + a.cols / 32 * kUnpackedBlockBytes;
  PairTileLoop<Kind, NT>(
      a, t0, tile, tiles,
      [&](int64_t b, const int8_t* x, const ActMeta* m, __m512* f0, __m512* f1) {
        const uint8_t* r0 = a.scratch + b * kUnpackedBlockBytes;
        const uint8_t* r1 = rec1 + b * kUnpackedBlockBytes;
        // Q6_K: two halves (chunks 0-3 with scale s0, 4-7 with s1), each closed by its epilogue
        // before the next starts, in DotTokens' order; the others: one pass over the 8 chunks.
        constexpr int kHalves = ClassOf(Kind) == 2 ? 2 : 1;
        for (int h = 0; h < kHalves; ++h) {
          __m512i acc0[NT], acc1[NT];
          for (int t = 0; t < NT; ++t) {
            const ActMeta& mt = m[t * a.am_stride];
            acc0[t] = acc1[t] =
                _mm512_set1_epi32(kHalves == 2 ? mt.neg32h[h] : NegOffset<Kind>(mt));
          }
          for (int o = 8 / kHalves * h; o < 8 / kHalves * (h + 1); ++o) {
            DotPairChunk<NT>(Load(r0 + 64 * o), Load(r1 + 64 * o), x, a.aq_stride, o, acc0, acc1);
          }
          const size_t scale = h == 0 ? kUnpackedS0 : kUnpackedS1;
          FoldPairSums<NT>(acc0, acc1, _mm512_load_ps(reinterpret_cast<const float*>(r0 + scale)),
                           _mm512_load_ps(reinterpret_cast<const float*>(r1 + scale)), m,
                           a.am_stride, f0, f1);
        }
        if constexpr (ClassOf(Kind) == 1) {
          AddPairMinTerms<NT>(_mm512_load_ps(reinterpret_cast<const float*>(r0 + kUnpackedS1)),
                              _mm512_load_ps(reinterpret_cast<const float*>(r1 + kUnpackedS1)), m,
                              a.am_stride, f0, f1);
        }
      });
}

// A pair kernel's token tile: (args, first token, tile index, tile count).
using PairTileFn = void (*)(const IntArgs&, int, int, int);

// Runs tile[size - 1] on each of ForEachTile's token tiles (tile i of `tiles`).
template <size_t Max>
void RunPairTiles(const std::array<PairTileFn, Max>& tile, const IntArgs& a) {
  ForEachTile(0, a.n_tokens, int(Max),
              [&](int i, int tiles, int t0, int size) { tile[size - 1](a, t0, i, tiles); });
}

template <int Kind, int... NT>
constexpr auto PairTileTable(std::integer_sequence<int, NT...>) {
  return std::array<PairTileFn, sizeof...(NT)>{&PairTile<Kind, NT + 1>...};
}

// Two consecutive groups (IntArgs::n_groups == 2) on the GEMM path: both unpacked into the
// scratch, then token tiles of up to 5 (2 x 5 x 2 accumulators + 2 operands + 1 broadcast fit
// the 32 registers).
template <int Kind>
void GemmPair(const IntArgs& a) {
  const int64_t nb = a.cols / 32;
  UnpackToScratch<Kind>(a.group, nb, a.scratch);
  UnpackToScratch<Kind>(a.group + a.group_bytes, nb, a.scratch + nb * kUnpackedBlockBytes);
  static constexpr auto kTile = PairTileTable<Kind>(std::make_integer_sequence<int, 5>{});
  RunPairTiles(kTile, a);
}

// Two groups (a.group and the next, a.group_bytes on) x NT tokens on the GEMV path, unpacked in
// registers one operand at a time, so only the current operand of each group is live beside the
// 2 NT integer and 2 NT float accumulators. Each broadcast activation chunk feeds both groups
// (PairTile's point); each token tile unpacks the pair again. Tile `tile` of `tiles` also
// prefetches its share of the next pair (IntArgs::next_group) into L2: one pair ahead, spread
// evenly over the tiles, so the memory stream runs while every tile computes (without it the
// first tile alone streamed the pair, at one tile's pace: kernel_bench --gemm, Q5_0 gate+up at
// 16 tokens 0.36 ms without, 0.30 with).
// Per (row, token): DotTokens' exact integer sum and float epilogue (same bits as the one-group
// paths).
template <int Kind, int NT>
void GemvPairTile(const IntArgs& a, int t0, int tile, int tiles) {
  // Legacy kinds and IQ4: operands o and 4 + o come from one 64-byte chunk, so take them together.
  constexpr bool kChunkPairs = Kind <= 3 || Kind >= 8;
  const uint8_t* g0 = a.group;
  const uint8_t* g1 = a.group + a.group_bytes;
  PairTileLoop<Kind, NT>(a, t0, tile, tiles,
                         [&](int64_t b, const int8_t* x, const ActMeta* m, __m512* f0, __m512* f1) {
                           __m512i acc0[NT], acc1[NT];
                           for (int t = 0; t < NT; ++t)
                             acc0[t] = acc1[t] =
                                 _mm512_set1_epi32(NegOffset<Kind>(m[t * a.am_stride]));
#pragma GCC unroll 8
                           for (int i = 0; i < 8; ++i) {
                             const int o = kChunkPairs ? i / 2 + 4 * (i % 2) : i;
                             DotPairChunk<NT>(Operand<Kind>(g0, b, o), Operand<Kind>(g1, b, o), x,
                                              a.aq_stride, o, acc0, acc1);
                           }
                           __m512 s00, s01, s10, s11;
                           Scales<Kind>(g0, b, &s00, &s01);
                           Scales<Kind>(g1, b, &s10, &s11);
                           FoldPairSums<NT>(acc0, acc1, s00, s10, m, a.am_stride, f0, f1);
                           if constexpr (ClassOf(Kind) == 1)
                             AddPairMinTerms<NT>(s01, s11, m, a.am_stride, f0, f1);
                         });
}

template <int Kind, int... NT>
constexpr auto GemvPairTileTable(std::integer_sequence<int, NT...>) {
  return std::array<PairTileFn, sizeof...(NT)>{&GemvPairTile<Kind, NT + 1>...};
}

// Two consecutive groups on the GEMV path: token tiles of near-equal size, at most 6 where the
// operands cost the most to unpack (fifth bits: Q5_0, Q5_1, Q5_K; Q4_K's sub-block addressing),
// each unpack then feeding more tokens, else 4 (2 x 6 x 2 accumulators + 2 operands + 1
// broadcast + constants just fit the 32 registers). kernel_bench --gemm --quick, 2 threads, 5
// alternating runs, medians, max 4 -> 6 (ms): Q5_0 fused gate+up 16 tokens 0.335 -> 0.311,
// ffn_down 16 0.176 -> 0.166, 32 0.321 -> 0.304, attn_q/o 32 0.061 -> 0.058; Q4_K ffn_down 16
// 0.189 -> 0.175, 32 0.352 -> 0.323; Q5_K ffn_down 24 0.356 -> 0.294. Q8_0 (operands are plain
// loads) lost with 6 (gate+up 16 0.302 -> 0.324), Q4_0 about even.
template <int Kind>
void GemvPair(const IntArgs& a) {
  constexpr int kMax = (Kind == 2 || Kind == 3 || Kind == 5 || Kind == 6) ? 6 : 4;
  static constexpr auto kTile = GemvPairTileTable<Kind>(std::make_integer_sequence<int, kMax>{});
  RunPairTiles(kTile, a);
}

}  // namespace

// Defined in misc_avx512.cc and amx_bf16_avx512.cc.
void FillAvx512Misc(IsaKernels* k);
void FillAvx512Wide(IsaKernels* k);

const IsaKernels& Avx512Kernels() {
  static const IsaKernels k = [] {
    IsaKernels t{};
    t.gemv[0] = Gemv<0>, t.gemv[1] = Gemv<1>, t.gemv[2] = Gemv<2>, t.gemv[3] = Gemv<3>;
    t.gemv[4] = Gemv<4>, t.gemv[5] = Gemv<5>, t.gemv[6] = Gemv<6>, t.gemv[7] = Gemv<7>;
    t.gemm[0] = Gemm<0>, t.gemm[1] = Gemm<1>, t.gemm[2] = Gemm<2>, t.gemm[3] = Gemm<3>;
    t.gemm[4] = Gemm<4>, t.gemm[5] = Gemm<5>, t.gemm[6] = Gemm<6>, t.gemm[7] = Gemm<7>;
    t.gemv[8] = Gemv<8>, t.gemv[9] = Gemv<9>, t.gemm[8] = Gemm<8>, t.gemm[9] = Gemm<9>;
    t.gemm_pair[8] = GemmPair<8>, t.gemm_pair[9] = GemmPair<9>;
    t.gemm_pair[0] = GemmPair<0>, t.gemm_pair[1] = GemmPair<1>, t.gemm_pair[2] = GemmPair<2>;
    t.gemm_pair[3] = GemmPair<3>, t.gemm_pair[4] = GemmPair<4>, t.gemm_pair[5] = GemmPair<5>;
    t.gemm_pair[6] = GemmPair<6>, t.gemm_pair[7] = GemmPair<7>;
    // Measured with kernel_bench --gemm, 2 threads, Zen 5 (one-group GEMV -> GemvPair, ms):
    // Q5_0 gate+up 12 tokens 0.29 -> 0.25, 16 0.34 -> 0.29, 24 0.49 -> 0.40 but 8 0.185 ->
    // 0.195; Q4_K ffn_down 16 0.17 -> 0.15; Q8_0 gate+up 16 0.33 -> 0.29 but 12 0.26 -> 0.27;
    // Q6_K slower at every count (its operands cost the most to unpack, now once per tile).
    // At 9 tokens the one-group tiles are 5 + 4 (two passes over the weights) and lose clearly
    // (--quick, 4 alternating runs, medians: Q5_0 ffn_down 0.142 -> 0.108, gate+up 0.279 ->
    // 0.211, attn_q/o 0.027 -> 0.022, Q4_K ffn_down 0.124 -> 0.119), while at 7-8 they still win.
    for (int kind = 0; kind < 7; ++kind) t.gemv_pair_min_tokens[kind] = kind == 4 ? 16 : 9;
    t.gemv_pair[0] = GemvPair<0>, t.gemv_pair[1] = GemvPair<1>, t.gemv_pair[2] = GemvPair<2>;
    t.gemv_pair[3] = GemvPair<3>, t.gemv_pair[4] = GemvPair<4>, t.gemv_pair[5] = GemvPair<5>;
    t.gemv_pair[6] = GemvPair<6>;
    // IQ4_NL / IQ4_XS: Q4_0's operands plus one shuffle each; Q4_0's thresholds.
    t.gemv_pair[8] = GemvPair<8>, t.gemv_pair[9] = GemvPair<9>;
    t.gemv_pair_min_tokens[8] = t.gemv_pair_min_tokens[9] = 9;
    FillAvx512Misc(&t);
    FillAvx512Wide(&t);
    t.gemm_min_tokens = 25;
    // Q8_0's gemm path only copies its blocks into the scratch, and GemvPair (operands
    // straight from the packed groups) beat it up to 128 tokens
    // (kernel_bench --gemm, 2 threads, Zen 5: gate+up 32 tokens 0.69 -> 0.56 ms, 64 1.17 ->
    // 1.06, 128 1.84 -> 1.81, 512 7.64 -> 7.78).
    t.gemm_min_tokens_kind[4] = 129;
    // The other GemvPair kinds: up to 32 tokens (Q5_0 ffn_down 28 tokens 0.283 -> 0.252 ms,
    // 32 0.316 -> 0.284, 40 0.372 -> 0.353; Q4_K 32 0.319 -> 0.300, 40 about even; Q5_0
    // gate+up 32 0.574 -> 0.558, 48 0.794 -> 0.812).
    for (int kind : {0, 1, 2, 3, 5, 6, 8, 9}) t.gemm_min_tokens_kind[kind] = 33;
    // Q6_K (no GemvPair): the GEMM pair kernel from 13 tokens (kernel_bench --gemm --quick,
    // ffn_down, 3 alternating runs, GEMV -> GEMM ms: 8 tokens 0.133 -> 0.171, 12 0.206 -> 0.205,
    // 16 0.249 -> 0.240, 20 0.330 -> 0.277, 24 0.365-0.391 -> 0.311-0.316).
    t.gemm_min_tokens_kind[7] = 13;
    t.glu_min_tokens = 25;
    // kernel_bench --gemm, 2 threads, gate+up, Gemv + SiLU pass -> fused GemvPair (ms): Q5_0 8
    // tokens ~0.215 -> 0.187-0.191 (6 tokens about even), Q4_0 8 ~0.20 -> 0.157-0.159, Q8_0 8
    // ~0.245 -> 0.232-0.238, 12 ~0.28 -> 0.263.
    t.glu_gemv_min_tokens = 8;
    return t;
  }();
  return k;
}

}  // namespace brisk::kern

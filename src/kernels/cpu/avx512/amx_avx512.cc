// AMX-INT8 register tiles for the avx512 GEMM path: one TDPBSUD computes the exact int32 block
// sums of 16 tokens x 16 weight rows x 32 values (signed activations x unsigned weights), i.e.
// the same integers the VNNI loop produces, then the float epilogue applies the canonical
// per-block formula (scalar_kernels.cc) with AVX-512, so results are bit-identical with or
// without AMX. The unpacked GEMM scratch is already in the tile "VNNI" layout: operand o of a
// block is row o of the B tile (16 weight rows x 4 bytes).
//
// Measured ceiling (2-core Sapphire Rapids VM, kernel_bench --gemm --threads 1 --cputime --best):
// per block x 16 tokens x 16 rows the tile unit needs ~15-20 ns (A/B loads, product, and the
// 1 KiB C store that the per-block scales force; C cannot accumulate over blocks) and the
// epilogue reading C back ~10-15 ns, and the two barely overlap, so AMX stays ~1.1-1.4x VNNI.
// A rewrite with signed operands (no offset add), AMX remainder tiles (per-height tile configs)
// and zero-padded Q6_K halves measured the same as this kernel, and Q6_K on AMX the same as VNNI.
// Why no schedule fixes it (standalone loop, data in L1): tile work alone ~12.7 ns per block,
// the epilogue alone ~13 ns, both together 26-32 ns, also when the epilogue reads a buffer the
// tile stores never touch: on this CPU the tile loads/stores/products and the AVX-512 epilogue
// contend, they do not overlap. Only fewer epilogue ops per multiply would move the ceiling.
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/avx512/amx_config_avx512.h"
#include "kernels/cpu/isa_kernels.h"

namespace brisk::kern {

void UseTileConfig(const TileConfig* cfg) {
  static thread_local const TileConfig* loaded = nullptr;
  if (loaded == cfg) return;
  _tile_loadconfig(cfg);
  loaded = cfg;
}

namespace {

// Tile registers: two sets {A = 16 tokens x 32 B, B = 8 x 64 B, C = 16 x 16 int32} = {0, 1, 2}
// and {3, 4, 5}, so the tile work of block b + 1 overlaps the float epilogue of block b (tile
// registers are not renamed); Q6_K halves: 6 = A (16 x 16 B), 7 = B (4 x 64 B), C in 2 and 5.
TileConfig MakeConfig() {
  TileConfig c;
  const uint16_t colsb[8] = {32, 64, 64, 32, 64, 64, 16, 64};
  const uint8_t rows[8] = {16, 8, 16, 16, 8, 16, 16, 4};
  for (int i = 0; i < 8; ++i) c.colsb[i] = colsb[i], c.rows[i] = rows[i];
  return c;
}

void EnsureConfigured() {
  static const TileConfig cfg = MakeConfig();
  UseTileConfig(&cfg);
}

// Block b's int32 sums (16 tokens x 16 rows) into c, with tile set {A, B, C}. (The tile
// intrinsics paste the register number into the asm text, hence a macro, not a template.)
#define BRISK_AMX_ISSUE(A, B, C, a, x, b, c)                   \
  do {                                                         \
    _tile_loadd(A, (x) + 32 * (b), (a).aq_stride);             \
    _tile_loadd(B, (a).scratch + (b)*kUnpackedBlockBytes, 64); \
    _tile_zero(C);                                             \
    _tile_dpbsud(C, A, B);                                     \
    _tile_stored(C, (c), 64);                                  \
  } while (0)

inline __m512 Fma(__m512i i, __m512 s, float da, __m512 f) {
  return _mm512_fmadd_ps(_mm512_cvtepi32_ps(i), _mm512_mul_ps(s, _mm512_set1_ps(da)), f);
}

}  // namespace

// Tokens [t0, t0 + 16) of a group whose blocks were unpacked into a.scratch. Class 0 adds the
// per-token offset (neg_off selects the ActMeta field), class 1 the min term, class 2 is Q6_K.
// next_block_bytes > 0: prefetch a.next_group's block b while computing block b.
void AmxTile16(const IntArgs& a, int t0, int cls, int neg_field, size_t next_block_bytes) {
  EnsureConfigured();
  const int64_t nb = a.cols / 32;
  __m512 f[16];
  for (int m = 0; m < 16; ++m) f[m] = _mm512_setzero_ps();
  alignas(64) int32_t c0[256], c1[256];
  int32_t* cb[2] = {c0, c1};
  const int8_t* x = a.aq + t0 * a.aq_stride;
  const ActMeta* meta = a.am + t0 * a.am_stride;
  if (cls != 2) BRISK_AMX_ISSUE(0, 1, 2, a, x, 0, c0);
  for (int64_t b = 0; b < nb; ++b) {
    if (next_block_bytes) {
      const uint8_t* pf = a.next_group + b * next_block_bytes;
      for (size_t l = 0; l < next_block_bytes; l += 64)
        _mm_prefetch(reinterpret_cast<const char*>(pf + l), _MM_HINT_T0);
    }
    const uint8_t* rec = a.scratch + b * kUnpackedBlockBytes;
    const __m512 s0 = _mm512_load_ps(reinterpret_cast<const float*>(rec + kUnpackedS0));
    const __m512 s1 = _mm512_load_ps(reinterpret_cast<const float*>(rec + kUnpackedS1));
    if (cls == 2) {
      _tile_loadd(6, x + 32 * b, a.aq_stride);
      _tile_loadd(7, rec, 64);
      _tile_zero(2);
      _tile_dpbsud(2, 6, 7);
      _tile_loadd(6, x + 32 * b + 16, a.aq_stride);
      _tile_loadd(7, rec + 256, 64);
      _tile_zero(5);
      _tile_dpbsud(5, 6, 7);
      _tile_stored(2, c0, 64);
      _tile_stored(5, c1, 64);
      for (int m = 0; m < 16; ++m) {
        const ActMeta& am = meta[m * a.am_stride + b];
        const __m512i i0 =
            _mm512_add_epi32(_mm512_load_si512(c0 + 16 * m), _mm512_set1_epi32(am.neg32h[0]));
        const __m512i i1 =
            _mm512_add_epi32(_mm512_load_si512(c1 + 16 * m), _mm512_set1_epi32(am.neg32h[1]));
        f[m] = Fma(i0, s0, am.d, f[m]);
        f[m] = Fma(i1, s1, am.d, f[m]);
      }
      continue;
    }
    if (b + 1 < nb) {  // next block's tiles first, so they run under this block's epilogue
      if ((b + 1) & 1)
        BRISK_AMX_ISSUE(3, 4, 5, a, x, b + 1, c1);
      else
        BRISK_AMX_ISSUE(0, 1, 2, a, x, b + 1, c0);
    }
    const int32_t* c = cb[b & 1];
    for (int m = 0; m < 16; ++m) {
      const ActMeta& am = meta[m * a.am_stride + b];
      __m512i i = _mm512_load_si512(c + 16 * m);
      if (cls == 0) {
        const int32_t off = neg_field == 8 ? am.neg8 : neg_field == 16 ? am.neg16 : am.neg128;
        i = _mm512_add_epi32(i, _mm512_set1_epi32(off));
      }
      f[m] = Fma(i, s0, am.d, f[m]);
      if (cls == 1) f[m] = _mm512_fmadd_ps(s1, _mm512_set1_ps(am.dsum), f[m]);
    }
  }
  for (int m = 0; m < 16; ++m) {
    float* y = a.y + (t0 + m) * a.ldy;
    if (a.valid_rows == 16)
      _mm512_storeu_ps(y, f[m]);
    else
      _mm512_mask_storeu_ps(y, __mmask16((1u << a.valid_rows) - 1), f[m]);
  }
}

}  // namespace brisk::kern

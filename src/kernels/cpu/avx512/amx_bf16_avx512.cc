// The prefill ("wide") matmul path with AMX-BF16 tiles (matmul.h: numerics classes).
//
// Why: the int8 path must apply a float epilogue per 32-value block (the weight and activation
// scales change every block), and on this CPU that vector work and the AMX tile work contend
// (amx_avx512.cc), capping prefill at ~1.3x VNNI. Here the scales are folded into the weights
// once per group instead: each block is dequantised to bf16 (w = bf16(fma(u, scale, offset))),
// so one fp32 tile accumulator runs over the whole row and the only vector work is the dequant,
// paid once per group for all tokens. Measured alone: one 16 x 16 x 32 TDPBF16PS per ~6.5 ns
// per core (~1.2 TMAC/s), against ~28 ns for the int8 tile plus its epilogue.
//
// Layout: block b of the group becomes one B tile (16 rows of 64 bytes) at scratch + 512 b:
// tile row p holds, for each weight row n, the pair (w[n][32b + 2p], w[n][32b + 2p + 1]) - the
// pairing TDPBF16PS expects against an A tile of 16 tokens x 32 consecutive bf16 values.
#include <immintrin.h>

#include "kernels/cpu/avx512/amx_config_avx512.h"
#include "kernels/cpu/avx512/unpack_avx512.h"
#include "kernels/cpu/isa_kernels.h"

namespace brisk::kern {
namespace {

// Tiles 0-3: C (16 tokens x 16 rows fp32) for token tiles i and groups j at 2 j + i; 4, 5: the
// two token tiles' A; 6, 7: the two groups' B. All 16 rows of 64 bytes.
TileConfig MakeWideConfig() {
  TileConfig c;
  for (int i = 0; i < 8; ++i) c.colsb[i] = 64, c.rows[i] = 16;
  return c;
}
const TileConfig& WideConfig() {
  static const TileConfig cfg = MakeWideConfig();
  return cfg;
}

// Byte-permute indices (zero-masked to byte 0 of each dword) that spread one unpacked operand
// (row r's values 4o..4o+3 at bytes 4r..4r+3) into dword lanes in B-tile order: kSpread[h][s]
// gives lanes (row 8s + i / 2, value 2h + i % 2) for i = 0..15.
struct Spread {
  __m512i idx[2][2];
  __m512i row_lo, row_hi;  // lane i -> row i / 2 (and 8 + i / 2): scale vectors in tile order
};
const Spread& Spreads() {
  static const Spread s = [] {
    Spread t;
    alignas(64) uint8_t b[64];
    for (int h = 0; h < 2; ++h)
      for (int half = 0; half < 2; ++half) {
        for (int i = 0; i < 64; ++i) b[i] = 0;
        for (int i = 0; i < 16; ++i) b[4 * i] = uint8_t(4 * (8 * half + i / 2) + 2 * h + i % 2);
        t.idx[h][half] = _mm512_load_si512(b);
      }
    alignas(64) int32_t r[16];
    for (int i = 0; i < 16; ++i) r[i] = i / 2;
    t.row_lo = _mm512_load_si512(r);
    for (int i = 0; i < 16; ++i) r[i] = 8 + i / 2;
    t.row_hi = _mm512_load_si512(r);
    return t;
  }();
  return s;
}

constexpr __mmask64 kByte0 = 0x1111111111111111ull;

// Scale/offset pair in tile lane order for rows 0-7 (lo) and 8-15 (hi).
struct Affine {
  __m512 a_lo, a_hi, b_lo, b_hi;
};
inline Affine Spread2(const Spread& sp, __m512 a, __m512 b) {
  return {_mm512_permutexvar_ps(sp.row_lo, a), _mm512_permutexvar_ps(sp.row_hi, a),
          _mm512_permutexvar_ps(sp.row_lo, b), _mm512_permutexvar_ps(sp.row_hi, b)};
}

// Operand o of an unpacked block -> B-tile rows 2o and 2o + 1 (64 bytes each) at out.
inline void ConvertOperand(const Spread& sp, __m512i u, const Affine& f, uint16_t* out) {
  for (int h = 0; h < 2; ++h) {
    const __m512 lo = _mm512_fmadd_ps(
        _mm512_cvtepi32_ps(_mm512_maskz_permutexvar_epi8(kByte0, sp.idx[h][0], u)), f.a_lo, f.b_lo);
    const __m512 hi = _mm512_fmadd_ps(
        _mm512_cvtepi32_ps(_mm512_maskz_permutexvar_epi8(kByte0, sp.idx[h][1], u)), f.a_hi, f.b_hi);
    _mm512_store_si512(out + 32 * h, __m512i(_mm512_cvtne2ps_pbh(hi, lo)));
  }
}

// Dequantises every block of the group into B tiles (w = fma(u, scale, offset) per the class:
// offset kinds u - off, min kinds u * s0 + s1, Q6_K halves (u - 32) * s_half).
template <int Kind>
void DequantGroup(const uint8_t* group, int64_t cols, uint16_t* scratch) {
  const Spread& sp = Spreads();
  const int64_t nb = cols / 32;
  constexpr int kClass = ClassOf(Kind);
  constexpr float kOff = Kind == 0                  ? 8.0f
                         : Kind == 2                ? 16.0f
                         : (Kind == 4 || Kind >= 8) ? 128.0f
                                                    : 32.0f;
  for (int64_t b = 0; b < nb; ++b) {
    Unpacked u;
    PrefetchLines(group + b * kBlockBytes[Kind] + kPrefetchBytes, kBlockBytes[Kind]);
    Unpack<Kind>(group, b, &u);
    uint16_t* out = scratch + b * 512;
    if constexpr (kClass == 1) {
      const Affine f = Spread2(sp, u.s0, u.s1);
      for (int o = 0; o < 8; ++o) ConvertOperand(sp, u.w[o], f, out + 64 * o);
    } else {
      const __m512 neg = _mm512_set1_ps(-kOff);
      const Affine f0 = Spread2(sp, u.s0, _mm512_mul_ps(u.s0, neg));
      const Affine f1 = kClass == 2 ? Spread2(sp, u.s1, _mm512_mul_ps(u.s1, neg)) : f0;
      for (int o = 0; o < 8; ++o) ConvertOperand(sp, u.w[o], o < 4 ? f0 : f1, out + 64 * o);
    }
  }
}

// C tiles 0-3 = the products over all nb blocks of token tiles x0, x1 (A-tile order) with the
// Block b of the group at b0: C0 += A(x0) B, C1 += A(x1) B, with x0 and x1 left in tiles 4, 5.
inline void FirstGroupStep(const uint16_t* x0, const uint16_t* x1, const uint16_t* b0, int64_t b) {
  _tile_loadd(4, x0 + b * 512, 64);
  _tile_loadd(6, b0 + b * 512, 64);
  _tile_dpbf16ps(0, 4, 6);
  _tile_loadd(5, x1 + b * 512, 64);
  _tile_dpbf16ps(1, 5, 6);
}

// B tiles of one group at b0 (C 0, 1) and, unless b1 is null, another at b1 (C 2, 3).
inline void TileProducts(const uint16_t* x0, const uint16_t* x1, const uint16_t* b0,
                         const uint16_t* b1, int64_t nb) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  if (b1) {
    for (int64_t b = 0; b < nb; ++b) {
      FirstGroupStep(x0, x1, b0, b);  // leaves x0, x1 in tiles 4, 5
      _tile_loadd(7, b1 + b * 512, 64);
      _tile_dpbf16ps(2, 4, 7);
      _tile_dpbf16ps(3, 5, 7);
    }
  } else {
    for (int64_t b = 0; b < nb; ++b) FirstGroupStep(x0, x1, b0, b);
  }
}

// Copies the valid part of a 16 x 16 fp32 tile (tokens from t0 x rows of group g) to y.
inline void StoreTile(const WideArgs& a, const float* c, int t0, int g) {
  const int rows = a.valid_rows - 16 * g;
  if (rows <= 0) return;
  const __mmask16 m = __mmask16(rows >= 16 ? 0xFFFF : (1u << rows) - 1);
  const int nt = a.n_tokens - t0 < 16 ? a.n_tokens - t0 : 16;
  for (int t = 0; t < nt; ++t)
    _mm512_mask_storeu_ps(a.y + (t0 + t) * a.ldy + 16 * g, m, _mm512_load_ps(c + 16 * t));
}

// 2 token tiles x 2 groups per pass: each A and B tile load feeds two products (with one of each
// per product the loads, not the products, set the pace); a single group, 2 x 1.
template <int Kind>
void WideGemm(const WideArgs& a) {
  const int64_t nb = a.cols / 32;
  const bool g2 = a.n_groups == 2;
  DequantGroup<Kind>(a.group, a.cols, a.scratch);
  if (g2) DequantGroup<Kind>(a.group + a.group_bytes, a.cols, a.scratch + nb * 512);
  const uint16_t* b1 = a.scratch + nb * 512;
  UseTileConfig(&WideConfig());
  alignas(64) float c[256];
  // Tiles past n_tokens read (readable) padding.
  for (int t0 = 0; t0 < a.n_tokens; t0 += 32) {
    const uint16_t* x0 = a.xb + (t0 / 16) * nb * 512;
    const uint16_t* x1 = x0 + nb * 512;
    TileProducts(x0, x1, a.scratch, g2 ? b1 : nullptr, nb);
    // Full tiles go straight to y (one tile store); partial ones through c.
    const bool full0 = t0 + 16 <= a.n_tokens, full1 = t0 + 32 <= a.n_tokens;
    const bool rows0 = a.valid_rows >= 16, rows1 = a.valid_rows >= 32;
    float* y0 = a.y + t0 * a.ldy;
    float* y1 = y0 + 16 * a.ldy;
    const int64_t ys = a.ldy * 4;
    if (full0 && rows0) {
      _tile_stored(0, y0, ys);
    } else {
      _tile_stored(0, c, 64);
      StoreTile(a, c, t0, 0);
    }
    if (t0 + 16 < a.n_tokens) {
      if (full1 && rows0) {
        _tile_stored(1, y1, ys);
      } else {
        _tile_stored(1, c, 64);
        StoreTile(a, c, t0 + 16, 0);
      }
    }
    if (g2) {
      if (full0 && rows1) {
        _tile_stored(2, y0 + 16, ys);
      } else {
        _tile_stored(2, c, 64);
        StoreTile(a, c, t0, 1);
      }
      if (t0 + 16 < a.n_tokens) {
        if (full1 && rows1) {
          _tile_stored(3, y1 + 16, ys);
        } else {
          _tile_stored(3, c, 64);
          StoreTile(a, c, t0 + 16, 1);
        }
      }
    }
  }
}

// The gate/up tile loop of WideGemm with the SwiGLU and the bf16 conversion as its epilogue: the
// 16 x 16 gate and up results of a token tile never leave L1 as floats.
template <int Kind>
void WideGlu(const WideGluArgs& a) {
  const int64_t nb = a.cols / 32, nb_out = a.out_cols / 32;
  DequantGroup<Kind>(a.gate, a.cols, a.scratch);
  DequantGroup<Kind>(a.up, a.cols, a.scratch + nb * 512);
  const uint16_t* bu = a.scratch + nb * 512;
  UseTileConfig(&WideConfig());
  alignas(64) float g[256], u[256], h[256];
  const int64_t half = (a.col0 % 32) / 16 * 16, block = a.col0 / 32;
  const __mmask16 m = __mmask16(a.valid_rows >= 16 ? 0xFFFF : (1u << a.valid_rows) - 1);
  auto emit = [&](int t_tile) {  // g, u: the token tile's gate and up results
    const int nt = a.n_tokens - t_tile < 16 ? a.n_tokens - t_tile : 16;
    a.silu_mul(g, u, 16 * nt, h);
    uint16_t* o = a.out + ((t_tile / 16) * nb_out + block) * 512 + half;
    for (int t = 0; t < nt; ++t) {
      const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_setzero_ps(), _mm512_load_ps(h + 16 * t));
      _mm256_mask_storeu_epi16(o + 32 * t, m, _mm512_castsi512_si256(__m512i(v)));
    }
  };
  for (int t0 = 0; t0 < a.n_tokens; t0 += 32) {
    const uint16_t* x0 = a.xb + (t0 / 16) * nb * 512;
    const uint16_t* x1 = x0 + nb * 512;
    TileProducts(x0, x1, a.scratch, bu, nb);
    _tile_stored(0, g, 64);
    _tile_stored(2, u, 64);
    emit(t0);
    if (t0 + 16 < a.n_tokens) {
      _tile_stored(1, g, 64);
      _tile_stored(3, u, 64);
      emit(t0 + 16);
    }
  }
}

void ToBf16(const float* x, int64_t n, uint16_t* out, int64_t stride) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32, out += stride) {
    const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
    _mm512_storeu_si512(out, __m512i(v));
  }
  if (i < n) {
    const __mmask16 m0 = __mmask16(n - i >= 16 ? 0xFFFF : (1u << (n - i)) - 1);
    const __mmask16 m1 = __mmask16(n - i > 16 ? (1u << (n - i - 16)) - 1 : 0);
    const __m512bh v = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(m1, x + i + 16),
                                           _mm512_maskz_loadu_ps(m0, x + i));
    _mm512_mask_storeu_epi16(out, __mmask32(m0) | (__mmask32(m1) << 16), __m512i(v));
  }
}

}  // namespace

void FillAvx512Wide(IsaKernels* k) {
  k->wide[0] = WideGemm<0>, k->wide[1] = WideGemm<1>, k->wide[2] = WideGemm<2>;
  k->wide[3] = WideGemm<3>, k->wide[4] = WideGemm<4>, k->wide[5] = WideGemm<5>;
  k->wide[6] = WideGemm<6>, k->wide[7] = WideGemm<7>;
  k->wide[8] = WideGemm<8>, k->wide[9] = WideGemm<9>;
  k->wide_glu[0] = WideGlu<0>, k->wide_glu[1] = WideGlu<1>, k->wide_glu[2] = WideGlu<2>;
  k->wide_glu[3] = WideGlu<3>, k->wide_glu[4] = WideGlu<4>, k->wide_glu[5] = WideGlu<5>;
  k->wide_glu[6] = WideGlu<6>, k->wide_glu[7] = WideGlu<7>;
  k->wide_glu[8] = WideGlu<8>, k->wide_glu[9] = WideGlu<9>;
  k->to_bf16 = ToBf16;
}

}  // namespace brisk::kern

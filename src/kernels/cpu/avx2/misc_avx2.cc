// AVX2 activation quantisation and float-weight kernels; formulas of scalar_kernels.cc.
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/isa_kernels.h"

namespace brisk::kern {
namespace {

inline __m256 Abs(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }
inline float HMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}
inline int HSum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

inline void QuantizeBlock(const __m256 x[4], int8_t* qs, ActMeta* m) {
  const __m256 mx =
      _mm256_max_ps(_mm256_max_ps(Abs(x[0]), Abs(x[1])), _mm256_max_ps(Abs(x[2]), Abs(x[3])));
  const float amax = HMax(mx);
  const float d = amax / 127.0f;
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  const __m256 idv = _mm256_set1_ps(id);
  __m256i q[4];
  for (int i = 0; i < 4; ++i) {
    q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(x[i], idv));  // round half to even
    q[i] =
        _mm256_max_epi32(_mm256_min_epi32(q[i], _mm256_set1_epi32(127)), _mm256_set1_epi32(-127));
  }
  // packs interleave 128-bit lanes; the permute restores value order.
  const __m256i p16a = _mm256_packs_epi32(q[0], q[1]), p16b = _mm256_packs_epi32(q[2], q[3]);
  const __m256i p8 = _mm256_packs_epi16(p16a, p16b);
  const __m256i ordered =
      _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), ordered);
  const int h0 = HSum(_mm256_add_epi32(q[0], q[1]));
  const int sum = h0 + HSum(_mm256_add_epi32(q[2], q[3]));
  FillActMeta(d, sum, h0, m);
}

void QuantizeRow(const float* x, int64_t cols, int8_t* qs, ActMeta* meta) {
  for (int64_t b = 0; b < cols / 32; ++b) {
    __m256 v[4];
    for (int i = 0; i < 4; ++i) v[i] = _mm256_loadu_ps(x + 32 * b + 8 * i);
    QuantizeBlock(v, qs + 32 * b, meta + b);
  }
}

float SumSquares(const float* x, int64_t cols) {
  __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();  // lanes 0-7 and 8-15
  for (int64_t i = 0; i < cols; i += 16) {
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    lo = _mm256_add_ps(lo, _mm256_mul_ps(a, a));
    hi = _mm256_add_ps(hi, _mm256_mul_ps(b, b));
  }
  const __m256 a8 = _mm256_add_ps(lo, hi);
  const __m128 a4 = _mm_add_ps(_mm256_castps256_ps128(a8), _mm256_extractf128_ps(a8, 1));
  const __m128 a2 = _mm_add_ps(a4, _mm_movehl_ps(a4, a4));
  const __m128 a1 = _mm_add_ss(a2, _mm_shuffle_ps(a2, a2, 1));
  return _mm_cvtss_f32(a1);
}

void NormQuantizeRow(const float* x, float scale, const float* w, int64_t cols, float* xn,
                     int8_t* qs, ActMeta* meta) {
  const __m256 s = _mm256_set1_ps(scale);
  for (int64_t b = 0; b < cols / 32; ++b) {
    __m256 v[4];
    for (int i = 0; i < 4; ++i) {
      v[i] = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + 32 * b + 8 * i), s),
                           _mm256_loadu_ps(w + 32 * b + 8 * i));
      if (xn) _mm256_storeu_ps(xn + 32 * b + 8 * i, v[i]);
    }
    QuantizeBlock(v, qs + 32 * b, meta + b);
  }
}

template <int Kind>
inline __m256 LoadCol(const uint8_t* g, int64_t i, int h) {
  if constexpr (Kind == 0) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(g) + i * 16 + 8 * h);
  } else {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(g + i * 32 + 16 * h));
    if constexpr (Kind == 1) return _mm256_cvtph_ps(v);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
  }
}

template <int Kind, int G, int NT>
void FTile(const FloatArgs& a, int g0, int t0) {
  __m256 f[G][2][NT];
  for (int g = 0; g < G; ++g)
    for (int h = 0; h < 2; ++h)
      for (int t = 0; t < NT; ++t) f[g][h][t] = _mm256_setzero_ps();
  const float* x = a.x + t0 * a.ldx;
  constexpr int64_t kColBytes = Kind == 0 ? 64 : 32;  // one column of 16 rows
  for (int64_t i = 0; i < a.cols; ++i) {
    // Software prefetch ahead of each group's stream (see misc_avx512.cc).
    if ((i * kColBytes) % 64 == 0)
      for (int g = 0; g < G; ++g)
        _mm_prefetch(reinterpret_cast<const char*>(a.groups + (g0 + g) * a.group_bytes +
                                                   i * kColBytes + layout::kPrefetchBytes),
                     _MM_HINT_T0);
    for (int g = 0; g < G; ++g)
      for (int h = 0; h < 2; ++h) {
        const __m256 w = LoadCol<Kind>(a.groups + (g0 + g) * a.group_bytes, i, h);
        for (int t = 0; t < NT; ++t)
          f[g][h][t] = _mm256_fmadd_ps(w, _mm256_set1_ps(x[t * a.ldx + i]), f[g][h][t]);
      }
  }
  for (int g = 0; g < G; ++g) {
    const int64_t row0 = int64_t(g0 + g) * 16;
    const int64_t valid = a.valid_rows - row0;
    if (valid <= 0) break;
    for (int t = 0; t < NT; ++t) {
      alignas(32) float tmp[16];
      _mm256_store_ps(tmp, f[g][0][t]);
      _mm256_store_ps(tmp + 8, f[g][1][t]);
      const int n = valid >= 16 ? 16 : int(valid);
      std::memcpy(a.y + (t0 + t) * a.ldy + row0, tmp, sizeof(float) * n);
    }
  }
}

template <int Kind, int G>
void FTokens(const FloatArgs& a, int g0, int t0, int nt) {
  switch (nt) {
    case 1:
      FTile<Kind, G, 1>(a, g0, t0);
      break;
    case 2:
      FTile<Kind, G, 2>(a, g0, t0);
      break;
    case 3:
      FTile<Kind, G, 3>(a, g0, t0);
      break;
    default:
      break;
  }
}

template <int Kind>
void FloatKernel(const FloatArgs& a) {
  if (a.n_tokens >= 4) {
    for (int g = 0; g < a.n_groups; ++g) {
      int t = 0;
      for (; t + 4 <= a.n_tokens; t += 4) FTile<Kind, 1, 4>(a, g, t);
      if (t < a.n_tokens) FTokens<Kind, 1>(a, g, t, a.n_tokens - t);
    }
    return;
  }
  int g = 0;
  for (; g + 2 <= a.n_groups; g += 2) FTokens<Kind, 2>(a, g, 0, a.n_tokens);
  for (; g < a.n_groups; ++g) FTokens<Kind, 1>(a, g, 0, a.n_tokens);
}

#include "kernels/cpu/elementwise_impl.inc"

}  // namespace

void FillAvx2Misc(IsaKernels* k) {
  k->fmat[0] = FloatKernel<0>;
  k->fmat[1] = FloatKernel<1>;
  k->fmat[2] = FloatKernel<2>;
  k->quantize_row = QuantizeRow;
  k->sum_squares = SumSquares;
  k->norm_quantize_row = NormQuantizeRow;
  k->silu_mul = SiluMulImpl;
}

}  // namespace brisk::kern

// AVX-512 activation quantisation, float-weight (F32/F16/BF16) kernels, SiLU * up and the argmax
// row scan. Same formulas as scalar_kernels.cc / elementwise_impl.inc, so the same bits.
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/avx512/exp_avx512.h"
#include "kernels/cpu/isa_kernels.h"

namespace brisk::kern {
namespace {

// ---- activations ----

inline void QuantizeBlock(__m512 x0, __m512 x1, int8_t* qs, ActMeta* m) {
  const __m512 amax_v = _mm512_max_ps(_mm512_abs_ps(x0), _mm512_abs_ps(x1));
  const float amax = _mm512_reduce_max_ps(amax_v);  // max is exact in any order
  const float d = amax / 127.0f;
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  const __m512 idv = _mm512_set1_ps(id);
  const __m512i lim = _mm512_set1_epi32(127), nlim = _mm512_set1_epi32(-127);
  // cvtps2dq rounds half to even under the default MXCSR, like nearbyint.
  __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(x0, idv));
  __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(x1, idv));
  q0 = _mm512_max_epi32(_mm512_min_epi32(q0, lim), nlim);
  q1 = _mm512_max_epi32(_mm512_min_epi32(q1, lim), nlim);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), _mm512_cvtepi32_epi8(q0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16), _mm512_cvtepi32_epi8(q1));
  const int h0 = _mm512_reduce_add_epi32(q0);
  const int sum = h0 + _mm512_reduce_add_epi32(q1);
  FillActMeta(d, sum, h0, m);
}

void QuantizeRow(const float* x, int64_t cols, int8_t* qs, ActMeta* meta) {
  for (int64_t b = 0; b < cols / 32; ++b)
    QuantizeBlock(_mm512_loadu_ps(x + 32 * b), _mm512_loadu_ps(x + 32 * b + 16), qs + 32 * b,
                  meta + b);
}

float SumSquares(const float* x, int64_t cols) {
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < cols; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    acc = _mm512_add_ps(acc, _mm512_mul_ps(v, v));
  }
  // Canonical tree: lanes k + (k + 8), then k + (k + 4), k + (k + 2), k + (k + 1).
  const __m256 a8 = _mm256_add_ps(_mm512_castps512_ps256(acc), _mm512_extractf32x8_ps(acc, 1));
  const __m128 a4 = _mm_add_ps(_mm256_castps256_ps128(a8), _mm256_extractf128_ps(a8, 1));
  const __m128 a2 = _mm_add_ps(a4, _mm_movehl_ps(a4, a4));
  const __m128 a1 = _mm_add_ss(a2, _mm_shuffle_ps(a2, a2, 1));
  return _mm_cvtss_f32(a1);
}

void NormQuantizeRow(const float* x, float scale, const float* w, int64_t cols, float* xn,
                     int8_t* qs, ActMeta* meta) {
  const __m512 s = _mm512_set1_ps(scale);
  for (int64_t b = 0; b < cols / 32; ++b) {
    const __m512 v0 =
        _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(x + 32 * b), s), _mm512_loadu_ps(w + 32 * b));
    const __m512 v1 = _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(x + 32 * b + 16), s),
                                    _mm512_loadu_ps(w + 32 * b + 16));
    if (xn) {
      _mm512_storeu_ps(xn + 32 * b, v0);
      _mm512_storeu_ps(xn + 32 * b + 16, v1);
    }
    QuantizeBlock(v0, v1, qs + 32 * b, meta + b);
  }
}

// ---- float weights: [col][16 rows] per group; f = fma(w, x, f) over columns in order ----

template <int Kind>
inline __m512 LoadCol(const uint8_t* g, int64_t i) {
  if constexpr (Kind == 0) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(g) + i * 16);
  } else {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g + i * 32));
    if constexpr (Kind == 1) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
}

template <int Kind, int G, int NT>
void FTile(const FloatArgs& a, int g0, int t0) {
  __m512 f[G][NT];
  for (int g = 0; g < G; ++g)
    for (int t = 0; t < NT; ++t) f[g][t] = _mm512_setzero_ps();
  const float* x = a.x + t0 * a.ldx;
  constexpr int64_t kColBytes = Kind == 0 ? 64 : 32;  // one column of 16 rows
  for (int64_t i = 0; i < a.cols; ++i) {
    // Each group is a sequential stream; software prefetch ahead of it, a line at a time (as in
    // the integer kernels: hardware prefetch alone left the F16 GEMV at ~45% of the bandwidth).
    if ((i * kColBytes) % 64 == 0)
      for (int g = 0; g < G; ++g)
        _mm_prefetch(reinterpret_cast<const char*>(a.groups + (g0 + g) * a.group_bytes +
                                                   i * kColBytes + layout::kPrefetchBytes),
                     _MM_HINT_T0);
    for (int g = 0; g < G; ++g) {
      const __m512 w = LoadCol<Kind>(a.groups + (g0 + g) * a.group_bytes, i);
      for (int t = 0; t < NT; ++t)
        f[g][t] = _mm512_fmadd_ps(w, _mm512_set1_ps(x[t * a.ldx + i]), f[g][t]);
    }
  }
  for (int g = 0; g < G; ++g) {
    const int64_t row0 = int64_t(g0 + g) * 16;
    const int64_t valid = a.valid_rows - row0;
    if (valid <= 0) break;
    const __mmask16 mask = valid >= 16 ? __mmask16(0xffff) : __mmask16((1u << valid) - 1);
    for (int t = 0; t < NT; ++t)
      _mm512_mask_storeu_ps(a.y + (t0 + t) * a.ldy + row0, mask, f[g][t]);
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
    // Prefill: one group x 8 tokens = 8 independent FMA chains per weight load.
    for (int g = 0; g < a.n_groups; ++g) {
      int t = 0;
      for (; t + 8 <= a.n_tokens; t += 8) FTile<Kind, 1, 8>(a, g, t);
      const int rest = a.n_tokens - t;
      if (rest >= 4) FTile<Kind, 1, 4>(a, g, t), t += 4;
      if (t < a.n_tokens) FTokens<Kind, 1>(a, g, t, a.n_tokens - t);
    }
    return;
  }
  // Decode: 4 groups at once so 4+ FMA chains hide the FMA latency.
  int g = 0;
  for (; g + 4 <= a.n_groups; g += 4) FTokens<Kind, 4>(a, g, 0, a.n_tokens);
  for (; g < a.n_groups; ++g) FTokens<Kind, 1>(a, g, 0, a.n_tokens);
}

// SiluMulImpl (elementwise_impl.inc) 16 values at a time (SiluMul16: the same bits).
void SiluMul(const float* g, const float* u, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, SiluMul16(_mm512_loadu_ps(g + i), _mm512_loadu_ps(u + i)));
  if (i < n) {
    const __mmask16 k = __mmask16((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(
        out + i, k, SiluMul16(_mm512_maskz_loadu_ps(k, g + i), _mm512_maskz_loadu_ps(k, u + i)));
  }
}

// IsaKernels::row_max: vmaxps(x, m) is x > m ? x : m, m when x is NaN, so NaNs never enter m.
void RowMax(const float* y, int64_t ldy, int n_tokens, int n, float* out) {
  const __m512 neg_inf = _mm512_set1_ps(-__builtin_inff());
  for (int t = 0; t < n_tokens; ++t) {
    const float* r = y + t * ldy;
    __m512 m = neg_inf;
    int i = 0;
    for (; i + 16 <= n; i += 16) m = _mm512_max_ps(_mm512_loadu_ps(r + i), m);
    if (i < n)
      m = _mm512_max_ps(_mm512_mask_loadu_ps(neg_inf, __mmask16((1u << (n - i)) - 1), r + i), m);
    out[t] = _mm512_reduce_max_ps(m);
  }
}

}  // namespace

void FillAvx512Misc(IsaKernels* k) {
  k->row_max = RowMax;
  k->fmat[0] = FloatKernel<0>;
  k->fmat[1] = FloatKernel<1>;
  k->fmat[2] = FloatKernel<2>;
  k->quantize_row = QuantizeRow;
  k->sum_squares = SumSquares;
  k->norm_quantize_row = NormQuantizeRow;
  k->silu_mul = SiluMul;
}

}  // namespace brisk::kern

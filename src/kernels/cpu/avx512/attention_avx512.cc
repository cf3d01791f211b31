// The attention kernel compiled for the avx512 tier (same source as every tier:
// attention_impl.inc), with fp16 K/V widened by vcvtph2ps (exact, like the scalar conversion) and
// the 16-position row block written with intrinsics: one register holds a block's 16 scores,
// and several query rows run in lockstep. Rows16 performs RowBlock's operations in RowBlock's
// order for each row, so the bits are the same as every other tier's.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/avx512/exp_avx512.h"

namespace brisk::attention_avx512 {
namespace {
#define BRISK_ATTN_HAVE_HALF_ROW 1
inline void HalfRowToFloat(const uint16_t* h, float* f, int n) {
  int i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(f + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(h + i))));
  for (; i < n; ++i) f[i] = _cvtsh_ss(h[i]);
}

// ExpNonPositive (attention_impl.inc) on 16 lanes, operation for operation. vmaxps(a, b) is
// a > b ? a : b and vminps(a, b) a < b ? a : b (b when either is NaN): the clamps x < -87 ? -87 : x
// and x > 0 ? 0 : x exactly, NaN passing through as there.
inline __m512 ExpNonPositive16(__m512 x) {
  x = _mm512_min_ps(_mm512_setzero_ps(), _mm512_max_ps(_mm512_set1_ps(-87.0f), x));
  return kern::ExpInRange16(x);
}

inline float ExpNonPositiveScalar(float x);  // the .inc's ExpNonPositive, declared below

// The scores of NR rows (query heads of one token, head_dim apart) against NB consecutive blocks
// (K chunks kt[b]): each row's two partial sums (even / odd d) per block, all blocks in one pass
// so that each broadcast query element feeds NB multiply-adds (broadcasts cost more than the
// multiply-adds they feed on Zen 5: one per multiply-add bound the kernel).
template <int NH, int NR, int NB>
inline void ScoresN(const float* q, const float* const* kt, __m512 (*s0)[NR], __m512 (*s1)[NR]) {
  constexpr int hd = 16 * NH;
  for (int b = 0; b < NB; ++b) {
    for (int r = 0; r < NR; ++r) s0[b][r] = s1[b][r] = _mm512_setzero_ps();
  }
  // Unrolled: the rolled loop (8 multiply-adds and 2 loads per pass) lost about a tenth of the
  // kernel's time to loop overhead (attention_bench, 4096 context x 8 tokens, alternating: 3.43 ->
  // 3.04 ns per row-position, Zen 5).
#pragma GCC unroll 8
  for (int d = 0; d < hd; d += 2) {
    __m512 k0[NB], k1[NB];
    for (int b = 0; b < NB; ++b)
      k0[b] = _mm512_loadu_ps(kt[b] + d * 16), k1[b] = _mm512_loadu_ps(kt[b] + (d + 1) * 16);
    for (int r = 0; r < NR; ++r) {
      const __m512 q0 = _mm512_set1_ps(q[r * hd + d]), q1 = _mm512_set1_ps(q[r * hd + d + 1]);
      for (int b = 0; b < NB; ++b) {
        s0[b][r] = _mm512_fmadd_ps(q0, k0[b], s0[b][r]);
        s1[b][r] = _mm512_fmadd_ps(q1, k1[b], s1[b][r]);
      }
    }
  }
}

// The rest of RowBlock for NR rows given their partial scores: block max, online-softmax update,
// e * v sums.
template <int NH, int NR>
inline void FinishN(const __m512* s0, const __m512* s1, const float* vf, int nv, float scale,
                    bool first, float* m, float* l, float* o) {
  constexpr int hd = 16 * NH;
  const __mmask16 valid = __mmask16((1u << nv) - 1);  // nv in 1..16
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512 s[NR], t[NR];
  for (int r = 0; r < NR; ++r) {
    s[r] = _mm512_mul_ps(_mm512_add_ps(s0[r], s1[r]), _mm512_set1_ps(scale));
    // t[p] = p < nv ? s[p] : s[0]
    t[r] = _mm512_mask_blend_ps(valid, _mm512_permutexvar_ps(_mm512_setzero_si512(), s[r]), s[r]);
  }
  for (int w = 8; w > 0; w /= 2) {  // t[p] = t[p + w] > t[p] ? t[p + w] : t[p]
    const __m512i idx = _mm512_add_epi32(lane, _mm512_set1_epi32(w));
    for (int r = 0; r < NR; ++r) {
      // vmaxps(a, b) is a > b ? a : b (b when either is NaN): that expression exactly.
      t[r] = _mm512_max_ps(_mm512_permutexvar_ps(idx, t[r]), t[r]);
    }
  }
  __m512 ev[NR];
  for (int r = 0; r < NR; ++r) {
    const float mb = _mm512_cvtss_f32(t[r]);
    float* lr = l + 16 * r;
    float* orow = o + 2 * hd * r;
    if (first) {
      m[r] = mb;
    } else if (mb > m[r]) {  // rescale what was summed so far
      const __m512 c = _mm512_set1_ps(ExpNonPositiveScalar(m[r] - mb));
      _mm512_storeu_ps(lr, _mm512_mul_ps(_mm512_loadu_ps(lr), c));
      for (int k = 0; k < 2 * NH; ++k)
        _mm512_storeu_ps(orow + 16 * k, _mm512_mul_ps(_mm512_loadu_ps(orow + 16 * k), c));
      m[r] = mb;
    }
    ev[r] = _mm512_sub_ps(s[r], _mm512_set1_ps(m[r]));
  }
  for (int r = 0; r < NR; ++r) {
    ev[r] = _mm512_maskz_mov_ps(valid, ExpNonPositive16(ev[r]));
    _mm512_storeu_ps(l + 16 * r, _mm512_add_ps(_mm512_loadu_ps(l + 16 * r), ev[r]));
  }
  for (int r = 0; r < NR; ++r) {
    alignas(64) float es[16];
    _mm512_store_ps(es, ev[r]);
    float* orow = o + 2 * hd * r;
    __m512 e0[NH], e1[NH];
    for (int k = 0; k < NH; ++k)
      e0[k] = _mm512_loadu_ps(orow + 16 * k), e1[k] = _mm512_loadu_ps(orow + hd + 16 * k);
    int p = 0;
    for (; p + 1 < nv; p += 2) {
      const __m512 a = _mm512_set1_ps(es[p]), b = _mm512_set1_ps(es[p + 1]);
      const float* v = vf + p * hd;
      for (int k = 0; k < NH; ++k) {
        e0[k] = _mm512_fmadd_ps(a, _mm512_loadu_ps(v + 16 * k), e0[k]);
        e1[k] = _mm512_fmadd_ps(b, _mm512_loadu_ps(v + hd + 16 * k), e1[k]);
      }
    }
    if (p < nv) {
      const __m512 a = _mm512_set1_ps(es[p]);
      for (int k = 0; k < NH; ++k)
        e0[k] = _mm512_fmadd_ps(a, _mm512_loadu_ps(vf + p * hd + 16 * k), e0[k]);
    }
    for (int k = 0; k < NH; ++k)
      _mm512_storeu_ps(orow + 16 * k, e0[k]), _mm512_storeu_ps(orow + hd + 16 * k, e1[k]);
  }
}

// RowBlock<16, 16 * NH> with intrinsics for NR rows in lockstep, over NB consecutive blocks
// (kt[b], vf[b]; all but the last whole, the last with nv positions) in sequence order, the
// scores of all blocks computed in one pass. The scores, max trees and exponentials of different
// rows are independent chains, so interleaving them hides the latencies that bound a single row.
// Each row still gets exactly RowBlock's operations in RowBlock's order.
template <int NH, int NR, int NB>
inline void RowsN(const float* q, const float* const* kt, const float* const* vf, int nv,
                  float scale, bool first, float* m, float* l, float* o) {
  __m512 s0[NB][NR], s1[NB][NR];
  ScoresN<NH, NR, NB>(q, kt, s0, s1);
  for (int b = 0; b < NB; ++b)
    FinishN<NH, NR>(s0[b], s1[b], vf[b], b + 1 < NB ? 16 : nv, scale, first && b == 0, m, l, o);
}

// All G rows of one token over NB blocks (RowsN), at most 4 rows in lockstep (with NB = 2 blocks,
// 16 score accumulators: enough chains to hide the latencies, while more would spill). Row r's
// state: m[r], l + 16 r, o + 2 hd r.
template <int NH, int NB>
inline void Rows16(const float* q, int G, const float* const* kt, const float* const* vf, int nv,
                   float scale, bool first, float* m, float* l, float* o) {
  constexpr int hd = 16 * NH;
  int r = 0;
  for (; r + 4 <= G; r += 4)
    RowsN<NH, 4, NB>(q + r * hd, kt, vf, nv, scale, first, m + r, l + 16 * r, o + 2 * hd * r);
  const float* qr = q + r * hd;
  switch (G - r) {
    case 3:
      RowsN<NH, 3, NB>(qr, kt, vf, nv, scale, first, m + r, l + 16 * r, o + 2 * hd * r);
      break;
    case 2:
      RowsN<NH, 2, NB>(qr, kt, vf, nv, scale, first, m + r, l + 16 * r, o + 2 * hd * r);
      break;
    case 1:
      RowsN<NH, 1, NB>(qr, kt, vf, nv, scale, first, m + r, l + 16 * r, o + 2 * hd * r);
      break;
    default:
      break;
  }
}
// Blocks Rows16 takes at once where they are whole for every token of the call: 2 measured
// 8-10% faster than 1 and than 3 (attention_bench, alternating runs, Zen 5).
inline constexpr int kRows16Blocks = 2;
#define BRISK_ATTN_HAVE_ROWS16 1

#include "kernels/cpu/attention_impl.inc"
#undef BRISK_ATTN_HAVE_HALF_ROW
#undef BRISK_ATTN_HAVE_ROWS16

inline float ExpNonPositiveScalar(float x) { return ExpNonPositive(x); }
}  // namespace
void Attend(const AttendArgs& a) { AttendImpl(a); }
}  // namespace brisk::attention_avx512

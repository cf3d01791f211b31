// exp_impl.inc's ExpInRange and elementwise_impl.inc's SiLU on 16 lanes with intrinsics,
// operation for operation (the same IEEE operations in the same order, no contraction), so the
// same bits as every tier's plain-float version: the compiler's vectorisation of that version
// runs a generic loop per call, which is 2.5x slower on the 16-value calls of the fused
// gate/up kernels. Included only by avx512 kernel files (see isa_kernels.h).
#pragma once

#include <immintrin.h>

namespace brisk::kern {
namespace {

// ExpInRange(x) for x in [-87, 88] (callers clamp).
inline __m512 ExpInRange16(__m512 x) {
  const __m512 big = _mm512_set1_ps(12582912.0f);
  const __m512 t = _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)), big);
  const __m512 n = _mm512_sub_ps(t, big);
  __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(0.693145752f)));
  r = _mm512_sub_ps(r, _mm512_mul_ps(n, _mm512_set1_ps(1.42860677e-6f)));
  __m512 p = _mm512_set1_ps(1.0f / 720.0f);
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(0.5f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.0f));
  const __m512i e =
      _mm512_add_epi32(_mm512_sub_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(0x4b400000)),
                       _mm512_set1_epi32(127));
  return _mm512_mul_ps(p, _mm512_castsi512_ps(_mm512_slli_epi32(e, 23)));
}

// silu(g) * u = g / (1 + e^-g) * u with -g clamped to [-87, 88] (SiluMulImpl). vmaxps(a, b) is
// a > b ? a : b and vminps(a, b) a < b ? a : b (b when either is NaN): the clamp's comparisons
// exactly, NaN passing through as there; negation flips the sign bit, as -x does.
inline __m512 SiluMul16(__m512 g, __m512 u) {
  __m512 x = _mm512_castsi512_ps(
      _mm512_xor_si512(_mm512_castps_si512(g), _mm512_set1_epi32(int(0x80000000u))));
  x = _mm512_max_ps(_mm512_set1_ps(-87.0f), _mm512_min_ps(_mm512_set1_ps(88.0f), x));
  const __m512 e = ExpInRange16(x);
  return _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e)), u);
}

}  // namespace
}  // namespace brisk::kern

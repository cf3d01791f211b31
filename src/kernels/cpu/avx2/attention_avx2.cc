// The attention kernel compiled for the avx2 tier (same source as every tier: attention_impl.inc),
// with fp16 K/V widened by F16C vcvtph2ps (exact, like the scalar conversion).
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "kernels/cpu/attention.h"

namespace brisk::attention_avx2 {
namespace {
#define BRISK_ATTN_HAVE_HALF_ROW 1
inline void HalfRowToFloat(const uint16_t* h, float* f, int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(f + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(h + i))));
  for (; i < n; ++i) f[i] = _cvtsh_ss(h[i]);
}
#include "kernels/cpu/attention_impl.inc"
#undef BRISK_ATTN_HAVE_HALF_ROW
}  // namespace
void Attend(const AttendArgs& a) { AttendImpl(a); }
}  // namespace brisk::attention_avx2

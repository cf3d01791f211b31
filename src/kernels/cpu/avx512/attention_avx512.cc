// The attention kernel compiled for the avx512 tier (same source as every tier:
// attention_impl.inc), with fp16 K/V widened by vcvtph2ps (exact, like the scalar conversion).
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/attention.h"

namespace brisk::attention_avx512 {
namespace {
#define BRISK_ATTN_HAVE_HALF_ROW 1
inline void HalfRowToFloat(const uint16_t* h, float* f, int n) {
  int i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(f + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(h + i))));
  for (; i < n; ++i) f[i] = _cvtsh_ss(h[i]);
}
#include "kernels/cpu/attention_impl.inc"
#undef BRISK_ATTN_HAVE_HALF_ROW
}  // namespace
void Attend(const AttendArgs& a) { AttendImpl(a); }
}  // namespace brisk::attention_avx512

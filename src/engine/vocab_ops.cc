#include "engine/vocab_ops.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>

#include "runtime/cpu_features.h"
#include "util/check.h"

// Vocabulary-wide passes for the sampler (vocab_ops.h). SSE2 (part of x86-64) for the exact
// passes (max, comparisons); an AVX2 variant, chosen at run time, for the exps. Every variant
// performs the same IEEE float operations per element (no FMA: the "avx2" target below does not
// enable it) and sums in an order fixed independently of the vector width, so all tiers give the
// same bits (tested).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define BRISK_SAMPLER_AVX2 1
#define BRISK_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define BRISK_SAMPLER_AVX2 0
#endif

namespace brisk::vocab {
namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
}  // namespace

#if BRISK_SAMPLER_AVX2
BRISK_TARGET_AVX2 inline __m256 ExpNonPositive8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.0f);
  const __m256 underflow = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  x = _mm256_max_ps(x, lo);
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256 t = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)), magic);
  const __m256 n = _mm256_sub_ps(t, magic);
  const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(magic));
  const __m256 r = _mm256_sub_ps(_mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(0.693359375f))),
                                 _mm256_mul_ps(n, _mm256_set1_ps(-2.12194440e-4f)));
  const __m256 r2 = _mm256_mul_ps(r, r);
  const __m256 r4 = _mm256_mul_ps(r2, r2);
  const __m256 p01 = _mm256_add_ps(_mm256_set1_ps(1.0f), r);
  const __m256 p23 =
      _mm256_add_ps(_mm256_set1_ps(0.5f), _mm256_mul_ps(r, _mm256_set1_ps(1.0f / 6.0f)));
  const __m256 p45 =
      _mm256_add_ps(_mm256_set1_ps(1.0f / 24.0f), _mm256_mul_ps(r, _mm256_set1_ps(1.0f / 120.0f)));
  const __m256 p67 = _mm256_add_ps(_mm256_set1_ps(1.0f / 720.0f),
                                   _mm256_mul_ps(r, _mm256_set1_ps(1.0f / 5040.0f)));
  const __m256 p = _mm256_add_ps(_mm256_add_ps(p01, _mm256_mul_ps(r2, p23)),
                                 _mm256_mul_ps(r4, _mm256_add_ps(p45, _mm256_mul_ps(r2, p67))));
  const __m256 scale =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(ni, _mm256_set1_epi32(127)), 23));
  return _mm256_andnot_ps(underflow, _mm256_mul_ps(p, scale));
}

// out[j] = e^((in[j] - m) * scale) for the first len & ~7 elements; returns how many it did.
BRISK_TARGET_AVX2 int ExpShiftedAvx2(const float* in, int len, float m, float scale, float* out) {
  const __m256 mv = _mm256_set1_ps(m);
  const __m256 sv = _mm256_set1_ps(scale);
  int j = 0;
  for (; j + 8 <= len; j += 8) {
    const __m256 x = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(in + j), mv), sv);
    _mm256_storeu_ps(out + j, ExpNonPositive8(x));
  }
  return j;
}

// Buckets (see BinsAndExp) and, when e is not null, e^(x - m), for the first len & ~7 elements.
BRISK_TARGET_AVX2 int BinsAndExpAvx2(const float* x, int len, float m, int32_t* bins, float* e) {
  const __m256 mv = _mm256_set1_ps(m);
  const __m256 range = _mm256_set1_ps(kBinRange);
  const __m256 per_unit = _mm256_set1_ps(kBinsPerUnit);
  const __m256 neg_inf = _mm256_set1_ps(-kInf);
  const __m256 dummy = _mm256_castsi256_ps(_mm256_set1_epi32(kNumBins));
  int j = 0;
  for (; j + 8 <= len; j += 8) {
    const __m256 v = _mm256_loadu_ps(x + j);
    // min(d, 64) * 32 truncated: int(d * 32) below 64 and kLastBin from 64 on, as BinOf.
    const __m256 b = _mm256_castsi256_ps(
        _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_min_ps(_mm256_sub_ps(mv, v), range), per_unit)));
    const __m256 is_neg_inf = _mm256_cmp_ps(v, neg_inf, _CMP_EQ_OQ);
    _mm256_storeu_ps(reinterpret_cast<float*>(bins + j), _mm256_blendv_ps(b, dummy, is_neg_inf));
    if (e != nullptr) _mm256_storeu_ps(e + j, ExpNonPositive8(_mm256_sub_ps(v, mv)));
  }
  return j;
}
#endif

// Whether this call may use the AVX2 kernels (BRISK_ISA=scalar selects the portable code).
bool UseAvx2() {
#if BRISK_SAMPLER_AVX2
  return ActiveIsa() != Isa::kScalar;
#else
  return false;
#endif
}

// out[j] = e^((in[j] - m) * scale).
void ExpShifted(const float* in, int len, float m, float scale, float* out, bool avx2) {
  int j = 0;
#if BRISK_SAMPLER_AVX2
  if (avx2) j = ExpShiftedAvx2(in, len, m, scale, out);
#endif
  for (; j < len; ++j) out[j] = ExpNonPositive((in[j] - m) * scale);
}

// bins[j] = BinOf(m - x[j]), or the extra slot kNumBins for -inf; e[j] = e^(x[j] - m) if e.
void BinsAndExp(const float* x, int len, float m, int32_t* bins, float* e, bool avx2) {
  int j = 0;
#if BRISK_SAMPLER_AVX2
  if (avx2) j = BinsAndExpAvx2(x, len, m, bins, e);
#endif
  for (; j < len; ++j) {
    bins[j] = x[j] == -kInf ? kNumBins : BinOf(m - x[j]);
    if (e != nullptr) e[j] = ExpNonPositive(x[j] - m);
  }
}

// Max over the non-NaN logits. Rewrites NaN as -inf and +inf as FLT_MAX (both rare: the fixes are
// separate passes) so later passes see ordered, subtractable values. -inf when nothing is finite.
float MaxAndSanitize(float* logits, int n) {
  float m = -kInf;
  bool nan = false;
  int i = 0;
#if BRISK_VOCAB_SSE2
  {
    // Four accumulators hide the latency of maxps; maxps(x, acc) returns acc when x is NaN.
    __m128 m0 = _mm_set1_ps(-kInf), m1 = m0, m2 = m0, m3 = m0;
    __m128 bad = _mm_setzero_ps();
    for (; i + 16 <= n; i += 16) {
      const __m128 x0 = _mm_loadu_ps(logits + i), x1 = _mm_loadu_ps(logits + i + 4);
      const __m128 x2 = _mm_loadu_ps(logits + i + 8), x3 = _mm_loadu_ps(logits + i + 12);
      m0 = _mm_max_ps(x0, m0);
      m1 = _mm_max_ps(x1, m1);
      m2 = _mm_max_ps(x2, m2);
      m3 = _mm_max_ps(x3, m3);
      bad = _mm_or_ps(bad, _mm_or_ps(_mm_cmpunord_ps(x0, x1), _mm_cmpunord_ps(x2, x3)));
    }
    alignas(16) float lanes[4];
    _mm_store_ps(lanes, _mm_max_ps(_mm_max_ps(m0, m1), _mm_max_ps(m2, m3)));
    for (const float x : lanes) m = x > m ? x : m;
    nan = _mm_movemask_ps(bad) != 0;
  }
#endif
  for (; i < n; ++i) {
    const float x = logits[i];
    if (x > m) {
      m = x;
    } else if (x != x) {
      nan = true;
    }
  }
  if (nan) {
    for (int j = 0; j < n; ++j) {
      if (logits[j] != logits[j]) logits[j] = -kInf;
    }
  }
  if (m == kInf) {
    for (int j = 0; j < n; ++j) {
      if (logits[j] == kInf) logits[j] = FLT_MAX;
    }
    m = FLT_MAX;
  }
  return m;
}

// The first index holding `m` (which must be present).
int FirstIndexOf(const float* logits, int n, float m) {
  int i = 0;
#if BRISK_VOCAB_SSE2
  const __m128 mv = _mm_set1_ps(m);
  for (; i + 4 <= n; i += 4) {
    const int mask = _mm_movemask_ps(_mm_cmpeq_ps(_mm_loadu_ps(logits + i), mv));
    if (mask != 0) return i + __builtin_ctz(unsigned(mask));
  }
#endif
  for (; i < n; ++i) {
    if (logits[i] == m) return i;
  }
  BRISK_CHECK_MSG(false, "max logit not found");
  return -1;
}

// Sum of e^(l - m) over the vocabulary in a fixed order: element i goes to partial sum i % 4,
// combined as (s0 + s1) + (s2 + s3).
double SumExp(const float* logits, int n, float m, bool avx2) {
  double acc[4] = {0, 0, 0, 0};
  alignas(32) float e[kChunk];
  for (int base = 0; base < n; base += kChunk) {
    const int len = std::min(kChunk, n - base);
    ExpShifted(logits + base, len, m, 1.0f, e, avx2);
    for (int j = 0; j < len; ++j) acc[j & 3] += e[j];  // kChunk is a multiple of 4
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// Histogram of the logits by bucket of max - logit: count, and with kMass the sum of e^(l - m).
// -inf goes to the extra slot kNumBins. The scatter runs in index order whatever the SIMD width.
template <bool kMass>
void CountBins(const float* logits, int n, float m, bool avx2, int32_t* count, double* mass) {
  alignas(32) int32_t bins[kChunk];
  alignas(32) float e[kChunk];
  for (int base = 0; base < n; base += kChunk) {
    const int len = std::min(kChunk, n - base);
    BinsAndExp(logits + base, len, m, bins, kMass ? e : nullptr, avx2);
    for (int j = 0; j < len; ++j) {
      ++count[bins[j]];
      if constexpr (kMass) mass[bins[j]] += e[j];
    }
  }
}

// A logit below which no token can be in a bucket <= last: such a token has
// fl(m - x) < (last + 1) / 32, and the margin (far above the float rounding of either side) keeps
// the bound conservative; the exact bucket test follows.
float LowerBoundForBin(float m, int last) {
  if (last >= kLastBin) return -FLT_MAX;
  const float span = float(last + 1) / kBinsPerUnit;
  return (m - span) - 1e-5f * (std::fabs(m) + span);
}

#if BRISK_SAMPLER_AVX2
// The AVX2 part of SumExpAndGather (whole groups of 8; returns how many elements it did).
BRISK_TARGET_AVX2 int SumExpAndGatherAvx2(const float* x, int n, float m, float dist, size_t limit,
                                          double* z, std::vector<LogitId>& out) {
  const __m256 mv = _mm256_set1_ps(m);
  const __m256 dv = _mm256_set1_ps(dist);
  __m256d zv = _mm256_setzero_pd();
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 e = ExpNonPositive8(_mm256_sub_ps(v, mv));
    zv = _mm256_add_pd(zv, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
    zv = _mm256_add_pd(zv, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    unsigned mask =
        unsigned(_mm256_movemask_ps(_mm256_cmp_ps(_mm256_sub_ps(mv, v), dv, _CMP_LT_OQ)));
    while (mask != 0 && out.size() < limit) {
      const int j = i + __builtin_ctz(mask);
      out.push_back({x[j], j});
      mask &= mask - 1;
    }
  }
  _mm256_storeu_pd(z, zv);
  return i;
}
#endif

// Returns Z = sum of e^(l - m) over the vocabulary (element i into partial sum i % 4, combined
// as (s0 + s1) + (s2 + s3), as SumExp) and appends to `out`, in index order, the tokens with
// m - l < dist (a ranked prefix), stopping at `limit` entries (then `out` is incomplete).
double SumExpAndGather(const float* logits, int n, float m, float dist, size_t limit, bool avx2,
                       std::vector<LogitId>& out) {
  double z[4] = {0, 0, 0, 0};
  int i = 0;
#if BRISK_SAMPLER_AVX2
  if (avx2) i = SumExpAndGatherAvx2(logits, n, m, dist, limit, z, out);
#endif
  for (; i < n; ++i) {
    z[i & 3] += ExpNonPositive(logits[i] - m);
    if (m - logits[i] < dist && out.size() < limit) out.push_back({logits[i], i});
  }
  return (z[0] + z[1]) + (z[2] + z[3]);
}

template void CountBins<true>(const float*, int, float, bool, int32_t*, double*);
template void CountBins<false>(const float*, int, float, bool, int32_t*, double*);

}  // namespace brisk::vocab

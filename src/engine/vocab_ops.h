// Vocabulary-wide passes of the sampler: max, first index, sums of exps, histograms of logits by
// distance from the max, gathering the tokens near the max. Every variant (SSE2, AVX2 chosen at
// run time, portable) performs the same IEEE float operations per element (no FMA) and sums in an
// order fixed independently of the vector width, so all give the same bits (tested through the
// sampler), and a seeded request draws the same token everywhere.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#define BRISK_VOCAB_SSE2 1
#else
#define BRISK_VOCAB_SSE2 0
#endif

namespace brisk::vocab {

// A candidate token: its logit and id.
struct LogitId {
  float logit;
  int32_t id;
};

// Histogram over d = max_logit - logit: 32 buckets per logit unit up to d = 64, then one bucket
// for the rest. Beyond d = 64 a token weighs < e^-64 of the max at temperature 1, so top_p never
// cuts there; only a very high temperature or a huge top_k reaches that bucket, and then it is
// merely slower (that bucket gets sorted), never wrong.
constexpr float kBinsPerUnit = 32.0f;
constexpr float kBinRange = 64.0f;
constexpr int kLastBin = static_cast<int>(kBinRange * kBinsPerUnit);
constexpr int kNumBins = kLastBin + 1;

inline int BinOf(float d) { return d < kBinRange ? static_cast<int>(d * kBinsPerUnit) : kLastBin; }

// Elements per chunk in the two-step loops (SIMD into a small array, then scalar sums/scatter).
constexpr int kChunk = 256;

struct RankOrder {
  // Most likely first; equal logits: lower id first.
  template <typename C>
  bool operator()(const C& a, const C& b) const {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  }
};

// e^x for x <= 0 (or -inf), to about 1 ulp. Our own polynomial rather than std::exp: it is several
// times faster than a libm call in these vocabulary-sized loops, it vectorises (ExpNonPositive8
// performs the very same float operations, so both give the same bits), and it does not depend on
// the platform's libm, so a seeded request draws the same token everywhere.
inline float ExpNonPositive(float x) {
  // Below -87 the result is < 2^-125 of the max term (which is 1): dropping it changes no sum.
  const bool underflow = x < -87.0f;
  x = underflow ? -87.0f : x;
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float t = x * 1.44269504088896341f + kMagic;
  const float n = t - kMagic;  // round(x / ln 2), in [-126, 0]
  const int32_t ni = std::bit_cast<int32_t>(t) - std::bit_cast<int32_t>(kMagic);
  // r = x - n ln2 with ln2 split in two so that n * kLn2Hi is exact.
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  // e^r for |r| <= ln2/2 + a little: Taylor to degree 7 (truncation < 1e-8 relative), in
  // Estrin's form, whose short dependency chains keep the vector loops busy.
  const float r2 = r * r;
  const float r4 = r2 * r2;
  const float p01 = 1.0f + r;
  const float p23 = 0.5f + r * (1.0f / 6.0f);
  const float p45 = 1.0f / 24.0f + r * (1.0f / 120.0f);
  const float p67 = 1.0f / 720.0f + r * (1.0f / 5040.0f);
  const float p = (p01 + r2 * p23) + r4 * (p45 + r2 * p67);
  const float result = p * std::bit_cast<float>((ni + 127) << 23);
  return underflow ? 0.0f : result;
}

// Whether this call may use the AVX2 kernels (BRISK_ISA=scalar selects the portable code).
bool UseAvx2();
// out[j] = e^((in[j] - m) * scale).
void ExpShifted(const float* in, int len, float m, float scale, float* out, bool avx2);
// bins[j] = BinOf(m - x[j]), or the extra slot kNumBins for -inf; e[j] = e^(x[j] - m) if e.
void BinsAndExp(const float* x, int len, float m, int32_t* bins, float* e, bool avx2);
// Max over the non-NaN logits. Rewrites NaN as -inf and +inf as FLT_MAX so later passes see
// ordered, subtractable values. -inf when nothing is finite.
float MaxAndSanitize(float* logits, int n);
// The first index holding `m` (which must be present).
int FirstIndexOf(const float* logits, int n, float m);
// Sum of e^(l - m) over the vocabulary in a fixed order (element i into partial sum i % 4,
// combined as (s0 + s1) + (s2 + s3)).
double SumExp(const float* logits, int n, float m, bool avx2);
// Histogram of the logits by bucket of max - logit: count, and with kMass the sum of e^(l - m).
// -inf goes to the extra slot kNumBins.
template <bool kMass>
void CountBins(const float* logits, int n, float m, bool avx2, int32_t* count, double* mass);
// A logit below which no token can be in a bucket <= last (conservative; test the bucket after).
float LowerBoundForBin(float m, int last);
// Z = sum of e^(l - m) (in SumExp's order) and, appended to `out` in index order, the tokens with
// m - l < dist, stopping at `limit` entries (then `out` is incomplete).
double SumExpAndGather(const float* logits, int n, float m, float dist, size_t limit, bool avx2,
                       std::vector<LogitId>& out);

// Calls fn(i) for every i whose logit is >= lo (in index order); SIMD skips the rest four at a
// time, which is most of the vocabulary for a tight `lo`.
template <typename Fn>
void ForEachAtLeast(const float* logits, int n, float lo, Fn&& fn) {
  int i = 0;
#if BRISK_VOCAB_SSE2
  const __m128 lov = _mm_set1_ps(lo);
  for (; i + 4 <= n; i += 4) {
    unsigned mask = unsigned(_mm_movemask_ps(_mm_cmpge_ps(_mm_loadu_ps(logits + i), lov)));
    while (mask != 0) {
      fn(i + __builtin_ctz(mask));
      mask &= mask - 1;
    }
  }
#endif
  for (; i < n; ++i) {
    if (logits[i] >= lo) fn(i);
  }
}

}  // namespace brisk::vocab

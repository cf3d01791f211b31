#include "quant/fit.h"

#include <atomic>
#include <cmath>
#include <cstring>

#include "util/check.h"
#include "util/fp16.h"

// x86-64 builds carry a second copy of the passes compiled for AVX2 (8-float vectors), chosen at
// run time. Both copies perform the same IEEE operations on every value in the same order, so
// they produce the same bits (QuantizeTest checks this); AVX2 only does twice as many per
// instruction. FMA is deliberately not enabled: contracting a*b+c would change the rounding.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BRISK_QUANT_AVX2 1
#else
#define BRISK_QUANT_AVX2 0
#endif

// Helpers returning 32-byte vectors would have a different ABI without AVX; they are only ever
// inlined into the AVX2 copy, so the compilers' warnings about it are noise.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#define BRISK_INLINE [[gnu::always_inline]] inline
// Loops over the 1-2 vectors of a chunk or sweep must be unrolled so their accumulators stay in
// registers (rolled, GCC keeps them in memory and the passes become store-forwarding bound).
#define BRISK_UNROLL _Pragma("GCC unroll 8")

namespace brisk::quant_internal {
namespace {

// ---- vectors ---------------------------------------------------------------------------------
//
// Passes over a group take kLanes = 8 values at a time into 8 partial sums, held as two 4-float
// vectors (portable: SSE2 on x86-64, NEON on arm64, scalar code elsewhere) or one 8-float vector
// (AVX2); lane k always holds the values i with i % 8 == k, and the partial sums are added in a
// fixed order at the end. The *RoundTripErrors sweeps put one candidate per lane instead.

typedef float V4 __attribute__((vector_size(16)));
typedef int32_t I4 __attribute__((vector_size(16)));
#if BRISK_QUANT_AVX2
typedef float V8 __attribute__((vector_size(32)));
typedef int32_t I8 __attribute__((vector_size(32)));
#endif

template <typename V>
struct VecInfo;
template <>
struct VecInfo<V4> {
  static constexpr int kWidth = 4;
  using Int = I4;
  // Written as 0 + f: GCC builds {f, f, ...} element by element inside the AVX2 copy, but turns
  // this into one broadcast. (It maps -0 to +0, in both copies alike; no quant or error changes.)
  BRISK_INLINE static V4 Splat(float f) { return V4{} + f; }
};
#if BRISK_QUANT_AVX2
template <>
struct VecInfo<V8> {
  static constexpr int kWidth = 8;
  using Int = I8;
  BRISK_INLINE static V8 Splat(float f) { return V8{} + f; }
};
#endif

template <typename V>
BRISK_INLINE V Splat(float f) {
  return VecInfo<V>::Splat(f);
}
template <typename V>
BRISK_INLINE V Load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Clamp to [lo, hi], then round half to even by the float adder itself: adding 1.5 * 2^23 leaves
// no fraction bits and the default rounding mode is to nearest even (exact for |v| < 2^22, which
// the clamp ensures). NaN maps to lo: the selects are exactly SSE's maxps / minps.
template <typename V>
BRISK_INLINE V RoundClampV(const V& x, const V& lo, const V& hi) {
  V v = x > lo ? x : lo;
  v = v < hi ? v : hi;
  const V magic = Splat<V>(12582912.0f);
  return (v + magic) - magic;
}

// The 8 partial sums held in 8 / width vectors, added in a fixed order.
template <typename V>
BRISK_INLINE float Sum8(const V* acc) {
  float l[kLanes];
  std::memcpy(l, acc, sizeof(l));
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

// Stores a vector of quants (small integers held as floats) as bytes.
template <typename T, typename V>
BRISK_INLINE void StoreQuants(const V& l, T* q) {
  using I = typename VecInfo<V>::Int;
  const I li = __builtin_convertvector(l, I);
  BRISK_UNROLL
  for (int k = 0; k < VecInfo<V>::kWidth; ++k) q[k] = T(li[k]);
}

// ---- scoring (scalar) ------------------------------------------------------------------------

// How well the least-squares fit for fixed quants does: its squared error is sum x^2 - num / den,
// so a higher num / den is better. A fraction, so that the searches compare candidates by
// cross-multiplying instead of dividing.
struct Score {
  double num = -1, den = 1;  // den > 0
  BRISK_INLINE bool BetterThan(const Score& o) const { return num * o.den > o.num * den; }
};

// The two best-scoring candidates of a search (ties with the best are not kept: they are almost
// always the same quants). Both are polished: a Lloyd polish of the runner-up often ends lower.
template <typename Sums>
struct Best2 {
  Score score[2];
  Sums sums[2];
  int count = 0;
  BRISK_INLINE void Offer(const Score& sc, const Sums& su) {
    if (count == 0 || sc.BetterThan(score[0])) {
      score[1] = score[0];
      sums[1] = sums[0];
      score[0] = sc;
      sums[0] = su;
      count = count < 2 ? count + 1 : 2;
    } else if ((count == 1 || sc.BetterThan(score[1])) && score[0].BetterThan(sc)) {
      score[1] = sc;
      sums[1] = su;
      count = 2;
    }
  }
};

// The best scale for fixed quants is qx / qq, with error sum x^2 - qx^2 / qq.
BRISK_INLINE Score SymScore(const SymmetricSums& s) {
  if (!(s.qq > 0)) return {0, 1};
  return {double(s.qx) * double(s.qx), double(s.qq)};
}

// Score of the least-squares (scale, offset) for quants with sums s; false when degenerate (all
// quants zero, or a negative slope, which rounding a monotone map never produces but a constraint
// could). sx = sum x. The fit itself (FitAffine) is formed for the winner only.
BRISK_INLINE bool AffineLsScore(const AffineSums& s, int n, double sx, bool offset_nonpositive,
                                Score* score) {
  if (!(s.qq > 0)) return false;
  const double sq = s.q, sqq = s.qq, sqx = s.qx;
  const double det = n * sqq - sq * sq;  // exact: the sums of quants are small integers
  if (det > 0 && !(offset_nonpositive && sqq * sx - sq * sqx > 0)) {
    const double num_a = n * sqx - sq * sx;  // n * det * scale
    if (!(num_a >= 0)) return false;
    // Error: sum x^2 - (sum x)^2 / n - (centred sum q x)^2 / (centred sum q^2).
    *score = {sx * sx * det + num_a * num_a, n * det};
    return true;
  }
  if (!(sqx >= 0)) return false;  // optimum on the boundary offset = 0: scale = sqx / sqq
  *score = {sqx * sqx, sqq};
  return true;
}

// The least-squares (scale, offset) that AffineLsScore scored (same case split).
BRISK_INLINE AffineFit FitAffine(const AffineSums& s, int n, double sx, bool offset_nonpositive) {
  const double sq = s.q, sqq = s.qq, sqx = s.qx;
  const double det = n * sqq - sq * sq;
  AffineFit f;
  if (det > 0 && !(offset_nonpositive && sqq * sx - sq * sqx > 0)) {
    f.scale = float((n * sqx - sq * sx) / det);
    f.offset = float((sqq * sx - sq * sqx) / det);
  } else {
    f.scale = float(sqx / sqq);
    f.offset = 0;
  }
  return f;
}

// ---- search tuning ---------------------------------------------------------------------------
//
// Candidate grids are coarse; the Lloyd polish of the two best recovers most of what a finer grid
// finds. On the golden weights the RMS error is within 0.1% (symmetric) and 0.5% (affine) of a
// 3x finer grid with a Lloyd step per candidate, at a tenth of the cost.

// Symmetric: the extreme value maps to qmin + {-1, -0.5, 0, 0.5, 1} steps, or likewise qmax.
constexpr int kSymGridHalf = 2;
constexpr float kSymGridStep = 0.5f;
// Affine: the range [lo, hi] spans qmax + {-2, -1.5, ..., 1} steps.
constexpr int kAffGridLow = 4;
constexpr int kAffGridHigh = 2;
constexpr float kAffGridStep = 0.5f;
constexpr int kPolishSteps = 8;  // at most; a polish stops at the first step that does not help

// ---- passes (templates over the vector type; always inlined into one copy per ISA) ------------

template <typename V>
BRISK_INLINE float SumImpl(const float* x, int n) {
  constexpr int W = VecInfo<V>::kWidth, P = kLanes / W;
  V s[P] = {};
  for (int i = 0; i < n; i += kLanes) {
    BRISK_UNROLL
    for (int p = 0; p < P; ++p) s[p] += Load<V>(x + i + W * p);
  }
  return Sum8(s);
}

// sum q*x and sum q*q for q = clamp(round(x * inv), lo, hi).
template <typename V>
BRISK_INLINE SymmetricSums SymPass(const float* x, int n, float inv, float lo, float hi) {
  constexpr int W = VecInfo<V>::kWidth, P = kLanes / W;
  const V vinv = Splat<V>(inv), vlo = Splat<V>(lo), vhi = Splat<V>(hi);
  V qx[P] = {}, qq[P] = {};
  for (int i = 0; i < n; i += kLanes) {
    BRISK_UNROLL
    for (int p = 0; p < P; ++p) {
      const V xv = Load<V>(x + i + W * p);
      const V l = RoundClampV(xv * vinv, vlo, vhi);
      qx[p] += l * xv;
      qq[p] += l * l;
    }
  }
  return {Sum8(qx), Sum8(qq)};
}

// Sums of the quants q = clamp(round((x - offset) * inv), 0, hi).
template <typename V>
BRISK_INLINE AffineSums AffPass(const float* x, int n, float offset, float inv, float hi) {
  constexpr int W = VecInfo<V>::kWidth, P = kLanes / W;
  const V voff = Splat<V>(offset), vinv = Splat<V>(inv), vhi = Splat<V>(hi), zero = {};
  V sq[P] = {}, sqq[P] = {}, sqx[P] = {};
  for (int i = 0; i < n; i += kLanes) {
    BRISK_UNROLL
    for (int p = 0; p < P; ++p) {
      const V xv = Load<V>(x + i + W * p);
      const V l = RoundClampV((xv - voff) * vinv, zero, vhi);
      sq[p] += l;
      sqq[p] += l * l;
      sqx[p] += l * xv;
    }
  }
  return {Sum8(sq), Sum8(sqq), Sum8(sqx)};
}

template <typename V>
BRISK_INLINE float QuantizeSymmetricImpl(const float* x, int n, int qmin, int qmax, float scale,
                                         int8_t* q, SymmetricSums* sums) {
  constexpr int W = VecInfo<V>::kWidth, P = kLanes / W;
  const float inv = scale != 0 ? 1.0f / scale : 0.0f;  // inv 0 gives all-zero quants
  const V vinv = Splat<V>(inv), vlo = Splat<V>(float(qmin)), vhi = Splat<V>(float(qmax)),
          vs = Splat<V>(scale);
  V e[P] = {}, qx[P] = {}, qq[P] = {};
  for (int i = 0; i < n; i += kLanes) {
    BRISK_UNROLL
    for (int p = 0; p < P; ++p) {
      const V xv = Load<V>(x + i + W * p);
      const V l = RoundClampV(xv * vinv, vlo, vhi);
      const V d = vs * l - xv;
      e[p] += d * d;
      qx[p] += l * xv;
      qq[p] += l * l;
      StoreQuants(l, q + i + W * p);
    }
  }
  if (sums != nullptr) *sums = {Sum8(qx), Sum8(qq)};
  return Sum8(e);
}

template <typename V>
BRISK_INLINE float QuantizeAffineImpl(const float* x, int n, int qmax, AffineFit fit, uint8_t* q,
                                      AffineSums* sums) {
  constexpr int W = VecInfo<V>::kWidth, P = kLanes / W;
  const float inv = fit.scale > 0 ? 1.0f / fit.scale : 0.0f;  // inv 0 gives all-zero quants
  const V voff = Splat<V>(fit.offset), vinv = Splat<V>(inv), vhi = Splat<V>(float(qmax)),
          vs = Splat<V>(fit.scale), zero = {};
  V e[P] = {}, sq[P] = {}, sqq[P] = {}, sqx[P] = {};
  for (int i = 0; i < n; i += kLanes) {
    BRISK_UNROLL
    for (int p = 0; p < P; ++p) {
      const V xv = Load<V>(x + i + W * p);
      const V l = RoundClampV((xv - voff) * vinv, zero, vhi);
      const V d = (vs * l + voff) - xv;  // the dequantizer's float operations: scale * q + offset
      e[p] += d * d;
      sq[p] += l;
      sqq[p] += l * l;
      sqx[p] += l * xv;
      StoreQuants(l, q + i + W * p);
    }
  }
  if (sums != nullptr) *sums = {Sum8(sq), Sum8(sqq), Sum8(sqx)};
  return Sum8(e);
}

// One candidate per lane: G vectors of candidates per sweep over the values, each lane summing
// its squared errors value by value (no horizontal sums, one broadcast per value).
template <typename V, int G>
BRISK_INLINE void SymSweep(const float* x, int n, const V& vlo, const V& vhi, const V* vs,
                           const V* vinv, V* err) {
  V e[G] = {};
  for (int i = 0; i < n; ++i) {
    const V xi = Splat<V>(x[i]);
    BRISK_UNROLL
    for (int g = 0; g < G; ++g) {
      const V l = RoundClampV(xi * vinv[g], vlo, vhi);
      const V d = vs[g] * l - xi;
      e[g] += d * d;
    }
  }
  BRISK_UNROLL
  for (int g = 0; g < G; ++g) err[g] = e[g];
}

template <typename V>
BRISK_INLINE void SymmetricRoundTripErrorsImpl(const float* x, int n, int qmin, int qmax,
                                               const float* scales, int count, float* err) {
  constexpr int W = VecInfo<V>::kWidth, kMaxGroups = kMaxFits / W;
  const V vlo = Splat<V>(float(qmin)), vhi = Splat<V>(float(qmax)), zero = {}, one = Splat<V>(1.0f);
  V vs[kMaxGroups], vinv[kMaxGroups], e[kMaxGroups];
  const int groups = (count + W - 1) / W;
  for (int g = 0; g < groups; ++g) {
    for (int k = 0; k < W; ++k) vs[g][k] = scales[W * g + k < count ? W * g + k : count - 1];
    vinv[g] = vs[g] != zero ? one / vs[g] : zero;  // as QuantizeSymmetric
  }
  for (int g = 0; g < groups; g += 2) {
    if (g + 1 < groups) {
      SymSweep<V, 2>(x, n, vlo, vhi, vs + g, vinv + g, e + g);
    } else {
      SymSweep<V, 1>(x, n, vlo, vhi, vs + g, vinv + g, e + g);
    }
  }
  for (int k = 0; k < count; ++k) err[k] = e[k / W][k % W];
}

template <typename V, int G>
BRISK_INLINE void AffSweep(const float* x, int n, const V& vhi, const V* vs, const V* voff,
                           const V* vinv, V* err) {
  const V zero = {};
  V e[G] = {};
  for (int i = 0; i < n; ++i) {
    const V xi = Splat<V>(x[i]);
    BRISK_UNROLL
    for (int g = 0; g < G; ++g) {
      const V l = RoundClampV((xi - voff[g]) * vinv[g], zero, vhi);
      const V d = (vs[g] * l + voff[g]) - xi;
      e[g] += d * d;
    }
  }
  BRISK_UNROLL
  for (int g = 0; g < G; ++g) err[g] = e[g];
}

template <typename V>
BRISK_INLINE void AffineRoundTripErrorsImpl(const float* x, int n, int qmax, const AffineFit* fits,
                                            int count, float* err) {
  constexpr int W = VecInfo<V>::kWidth, kMaxGroups = kMaxFits / W;
  const V vhi = Splat<V>(float(qmax)), zero = {}, one = Splat<V>(1.0f);
  V vs[kMaxGroups], voff[kMaxGroups], vinv[kMaxGroups], e[kMaxGroups];
  const int groups = (count + W - 1) / W;
  for (int g = 0; g < groups; ++g) {
    for (int k = 0; k < W; ++k) {
      const AffineFit& f = fits[W * g + k < count ? W * g + k : count - 1];  // pad with the last
      vs[g][k] = f.scale;
      voff[g][k] = f.offset;
    }
    vinv[g] = vs[g] > zero ? one / vs[g] : zero;  // as QuantizeAffine
  }
  for (int g = 0; g < groups; g += 2) {
    if (g + 1 < groups) {
      AffSweep<V, 2>(x, n, vhi, vs + g, voff + g, vinv + g, e + g);
    } else {
      AffSweep<V, 1>(x, n, vhi, vs + g, voff + g, vinv + g, e + g);
    }
  }
  for (int k = 0; k < count; ++k) err[k] = e[k / W][k % W];
}

// ---- searches --------------------------------------------------------------------------------

template <typename V>
BRISK_INLINE float SearchSymmetricScaleImpl(const float* x, int n, int qmin, int qmax) {
  float max = 0, amax = 0;  // the value of largest magnitude, with its sign (the first on ties)
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (amax == 0) return 0;
  const float lo = float(qmin), hi = float(qmax);
  const float inv_max = 1.0f / max;
  // Candidates put the extreme value near qmin (the end with more room) or near qmax, a little
  // inside or outside the range; each is scored by the error of its least-squares scale.
  Best2<SymmetricSums> top;
  for (int side = 0; side < 2; ++side) {
    const float end = side == 0 ? lo : hi;
    const float dir = side == 0 ? -1.0f : 1.0f;
    for (int k = -kSymGridHalf; k <= kSymGridHalf; ++k) {
      const SymmetricSums s =
          SymPass<V>(x, n, (end + dir * kSymGridStep * float(k)) * inv_max, lo, hi);
      top.Offer(SymScore(s), s);
    }
  }
  float best = 0;
  Score best_score{0, 1};  // all-zero quants
  for (int t = 0; t < top.count; ++t) {
    if (!(top.sums[t].qq > 0)) continue;
    Score score = top.score[t];
    float scale = top.sums[t].qx / top.sums[t].qq;
    for (int it = 0; it < kPolishSteps && scale != 0; ++it) {  // Lloyd polish
      const SymmetricSums s = SymPass<V>(x, n, 1.0f / scale, lo, hi);
      const Score next = SymScore(s);
      if (!next.BetterThan(score)) break;
      score = next;
      scale = s.qx / s.qq;
    }
    if (score.BetterThan(best_score)) {
      best_score = score;
      best = scale;
    }
  }
  return best;
}

template <typename V>
BRISK_INLINE AffineFit SearchAffineImpl(const float* x, int n, int qmax, bool offset_nonpositive) {
  constexpr int W = VecInfo<V>::kWidth, P = kLanes / W;
  V vlo[P], vhi[P];
  BRISK_UNROLL
  for (int p = 0; p < P; ++p) vlo[p] = vhi[p] = Load<V>(x + W * p);
  for (int i = kLanes; i < n; i += kLanes) {
    BRISK_UNROLL
    for (int p = 0; p < P; ++p) {
      const V xv = Load<V>(x + i + W * p);
      vlo[p] = xv < vlo[p] ? xv : vlo[p];
      vhi[p] = xv > vhi[p] ? xv : vhi[p];
    }
  }
  float lo = vlo[0][0], hi = vhi[0][0];  // min and max are exact: any order gives the same
  BRISK_UNROLL
  for (int p = 0; p < P; ++p) {
    for (int k = 0; k < W; ++k) {
      lo = vlo[p][k] < lo ? vlo[p][k] : lo;
      hi = vhi[p][k] > hi ? vhi[p][k] : hi;
    }
  }
  if (offset_nonpositive && lo > 0) lo = 0;
  AffineFit best;
  best.offset = lo;
  if (!(hi > lo)) return best;  // constant group: the offset alone represents it
  const double sx = SumImpl<V>(x, n);
  const float fq = float(qmax);
  const float inv_range = 1.0f / (hi - lo);
  // Candidates: qmax + delta steps over [lo, hi]. Fewer steps clip the extremes but refine the
  // bulk; slightly more shifts where the rounding boundaries fall.
  Best2<AffineSums> top;
  for (int k = -kAffGridLow; k <= kAffGridHigh; ++k) {
    const AffineSums s = AffPass<V>(x, n, lo, (fq + kAffGridStep * float(k)) * inv_range, fq);
    Score score;
    if (AffineLsScore(s, n, sx, offset_nonpositive, &score)) top.Offer(score, s);
  }
  if (top.count == 0) {  // cannot happen for a non-constant group (k = 0 maps hi to qmax); be safe
    best.scale = (hi - lo) / fq;
    return best;
  }
  Score best_score;
  for (int t = 0; t < top.count; ++t) {
    Score score = top.score[t];
    AffineFit fit = FitAffine(top.sums[t], n, sx, offset_nonpositive);
    for (int it = 0; it < kPolishSteps && fit.scale > 0; ++it) {  // Lloyd polish
      const AffineSums s = AffPass<V>(x, n, fit.offset, 1.0f / fit.scale, fq);
      Score next;
      if (!AffineLsScore(s, n, sx, offset_nonpositive, &next) || !next.BetterThan(score)) break;
      score = next;
      fit = FitAffine(s, n, sx, offset_nonpositive);
    }
    if (t == 0 || score.BetterThan(best_score)) {
      best_score = score;
      best = fit;
    }
  }
  return best;
}

// ---- one copy per ISA, and the dispatch ------------------------------------------------------

struct Kernels {
  float (*sum)(const float*, int);
  float (*quantize_symmetric)(const float*, int, int, int, float, int8_t*, SymmetricSums*);
  float (*search_symmetric)(const float*, int, int, int);
  void (*symmetric_errors)(const float*, int, int, int, const float*, int, float*);
  float (*quantize_affine)(const float*, int, int, AffineFit, uint8_t*, AffineSums*);
  void (*affine_errors)(const float*, int, int, const AffineFit*, int, float*);
  AffineFit (*search_affine)(const float*, int, int, bool);
};

// The entry points of one copy, compiled with the given target attribute (everything they call
// is always_inline, so all of it is compiled for that target).
#define BRISK_QUANT_COPY(NS, V, ATTR)                                                             \
  namespace NS {                                                                                  \
  ATTR float Sum(const float* x, int n) { return SumImpl<V>(x, n); }                              \
  ATTR float QuantizeSymmetric(const float* x, int n, int qmin, int qmax, float scale, int8_t* q, \
                               SymmetricSums* sums) {                                             \
    return QuantizeSymmetricImpl<V>(x, n, qmin, qmax, scale, q, sums);                            \
  }                                                                                               \
  ATTR float SearchSymmetric(const float* x, int n, int qmin, int qmax) {                         \
    return SearchSymmetricScaleImpl<V>(x, n, qmin, qmax);                                         \
  }                                                                                               \
  ATTR void SymmetricErrors(const float* x, int n, int qmin, int qmax, const float* scales,       \
                            int count, float* err) {                                              \
    SymmetricRoundTripErrorsImpl<V>(x, n, qmin, qmax, scales, count, err);                        \
  }                                                                                               \
  ATTR float QuantizeAffine(const float* x, int n, int qmax, AffineFit fit, uint8_t* q,           \
                            AffineSums* sums) {                                                   \
    return QuantizeAffineImpl<V>(x, n, qmax, fit, q, sums);                                       \
  }                                                                                               \
  ATTR void AffineErrors(const float* x, int n, int qmax, const AffineFit* fits, int count,       \
                         float* err) {                                                            \
    AffineRoundTripErrorsImpl<V>(x, n, qmax, fits, count, err);                                   \
  }                                                                                               \
  ATTR AffineFit SearchAffine(const float* x, int n, int qmax, bool offset_nonpositive) {         \
    return SearchAffineImpl<V>(x, n, qmax, offset_nonpositive);                                   \
  }                                                                                               \
  constexpr Kernels kKernels{                                                                     \
      &Sum,          &QuantizeSymmetric, &SearchSymmetric, &SymmetricErrors, &QuantizeAffine,     \
      &AffineErrors, &SearchAffine};                                                              \
  }

BRISK_QUANT_COPY(portable, V4, )
#if BRISK_QUANT_AVX2
BRISK_QUANT_COPY(avx2, V8, __attribute__((target("avx2"))))
#endif

const Kernels* Detect() {
#if BRISK_QUANT_AVX2
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) return &avx2::kKernels;
#endif
  return &portable::kKernels;
}

std::atomic<const Kernels*> g_kernels{nullptr};

const Kernels& Active() {
  const Kernels* k = g_kernels.load(std::memory_order_relaxed);
  if (k == nullptr) {
    k = Detect();
    g_kernels.store(k, std::memory_order_relaxed);
  }
  return *k;
}

}  // namespace

bool HaveWideKernels() { return Detect() != &portable::kKernels; }

void ForcePortableKernels(bool portable) {
  g_kernels.store(portable ? &portable::kKernels : Detect(), std::memory_order_relaxed);
}

int RoundClamp(float v, int lo, int hi) {
  // Clamp before converting so huge values cannot overflow the integer conversion.
  if (!(v >= float(lo))) return lo;  // also catches NaN
  if (v >= float(hi)) return hi;
  constexpr float kMagic = 12582912.0f;  // round half to even, as RoundClampV
  return int((v + kMagic) - kMagic);
}

float RoundFp16(float v) { return Fp16ToFp32(Fp32ToFp16(v)); }

float SumLanes(const float* x, int n) {
  BRISK_CHECK(n % kLanes == 0);
  return Active().sum(x, n);
}

float QuantizeSymmetric(const float* x, int n, int qmin, int qmax, float scale, int8_t* q,
                        SymmetricSums* sums) {
  BRISK_CHECK(n % kLanes == 0);
  return Active().quantize_symmetric(x, n, qmin, qmax, scale, q, sums);
}

float SearchSymmetricScale(const float* x, int n, int qmin, int qmax) {
  BRISK_CHECK(n <= kMaxFitValues && n % kLanes == 0 && qmin < 0 && qmax > 0);
  return Active().search_symmetric(x, n, qmin, qmax);
}

void SymmetricRoundTripErrors(const float* x, int n, int qmin, int qmax, const float* scales,
                              int count, float* err) {
  BRISK_CHECK(count > 0 && count <= kMaxFits);
  Active().symmetric_errors(x, n, qmin, qmax, scales, count, err);
}

float QuantizeAffine(const float* x, int n, int qmax, AffineFit fit, uint8_t* q, AffineSums* sums) {
  return Active().quantize_affine(x, n, qmax, fit, q, sums);
}

void AffineRoundTripErrors(const float* x, int n, int qmax, const AffineFit* fits, int count,
                           float* err) {
  BRISK_CHECK(count > 0 && count <= kMaxFits);
  Active().affine_errors(x, n, qmax, fits, count, err);
}

AffineFit SearchAffine(const float* x, int n, int qmax, bool offset_nonpositive) {
  BRISK_CHECK(n <= kMaxFitValues && n > 0 && n % kLanes == 0 && qmax > 0);
  return Active().search_affine(x, n, qmax, offset_nonpositive);
}

}  // namespace brisk::quant_internal

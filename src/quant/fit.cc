#include "quant/fit.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "util/check.h"
#include "util/fp16.h"

namespace brisk::quant_internal {

int RoundClamp(float v, int lo, int hi) {
  // Clamp before converting so huge values cannot overflow the integer conversion.
  if (!(v >= float(lo))) return lo;  // also catches NaN
  if (v >= float(hi)) return hi;
  // Round half to even by the float adder itself: adding 1.5 * 2^23 leaves no fraction bits, and
  // the default rounding mode is to nearest even. Exact for |v| < 2^22, which the clamp ensures
  // for every quant range used here; much cheaper than a libm lrintf call (errno handling).
  constexpr float kMagic = 12582912.0f;
  return int((v + kMagic) - kMagic);
}

float RoundFp16(float v) { return Fp16ToFp32(Fp32ToFp16(v)); }

// ---- symmetric ---------------------------------------------------------------------------------

float QuantizeSymmetric(const float* x, int n, int qmin, int qmax, float scale, int8_t* q) {
  const float inv = scale != 0 ? 1.0f / scale : 0.0f;
  float err = 0;
  for (int i = 0; i < n; ++i) {
    const int l = inv != 0 ? RoundClamp(x[i] * inv, qmin, qmax) : 0;
    q[i] = int8_t(l);
    const float e = scale * float(l) - x[i];
    err += e * e;
  }
  return err;
}

namespace {

// Least-squares scale for fixed quants: argmin_s sum (s*q - x)^2.
float FitSymmetric(const float* x, int n, const int8_t* q) {
  double sqx = 0, sqq = 0;
  for (int i = 0; i < n; ++i) {
    sqx += double(q[i]) * x[i];
    sqq += double(q[i]) * q[i];
  }
  return sqq > 0 ? float(sqx / sqq) : 0.0f;
}

}  // namespace

float SearchSymmetricScale(const float* x, int n, int qmin, int qmax) {
  BRISK_CHECK(n <= kMaxFitValues && qmin < 0 && qmax > 0);
  float max = 0, amax = 0;  // the value of largest magnitude, with its sign
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (amax == 0) return 0;
  int8_t q[kMaxFitValues], bestq[kMaxFitValues];
  // Naive start: the extreme value lands exactly on qmin, the end of the range with more room.
  float best = max / float(qmin);
  float best_err = QuantizeSymmetric(x, n, qmin, qmax, best, bestq);
  // Candidates put the extreme near qmin or near qmax, a little inside or outside the range;
  // each is then refit to the quants it produced.
  for (int side = 0; side < 2; ++side) {
    const float end = side == 0 ? float(qmin) : float(qmax);
    const float dir = side == 0 ? -1.0f : 1.0f;
    for (int k = -10; k <= 10; ++k) {
      const float s = max / (end + dir * 0.1f * float(k));
      QuantizeSymmetric(x, n, qmin, qmax, s, q);
      const float fit = FitSymmetric(x, n, q);
      const float err = QuantizeSymmetric(x, n, qmin, qmax, fit, q);
      if (err < best_err) {
        best_err = err;
        best = fit;
        std::memcpy(bestq, q, size_t(n));
      }
    }
  }
  for (int it = 0; it < 8; ++it) {  // Lloyd polish
    const float fit = FitSymmetric(x, n, bestq);
    const float err = QuantizeSymmetric(x, n, qmin, qmax, fit, q);
    if (!(err < best_err)) break;
    best_err = err;
    best = fit;
    std::memcpy(bestq, q, size_t(n));
  }
  return best;
}

// ---- affine ------------------------------------------------------------------------------------

float QuantizeAffine(const float* x, int n, int qmax, AffineFit fit, uint8_t* q) {
  const float inv = fit.scale > 0 ? 1.0f / fit.scale : 0.0f;
  float err = 0;
  for (int i = 0; i < n; ++i) {
    const int l = inv > 0 ? RoundClamp((x[i] - fit.offset) * inv, 0, qmax) : 0;
    q[i] = uint8_t(l);
    const float e = fit.scale * float(l) + fit.offset - x[i];
    err += e * e;
  }
  return err;
}

namespace {

// Least-squares (scale, offset) for fixed quants; false when degenerate (all quants zero, or a
// negative slope, which rounding a monotone map never produces but a constraint could).
bool FitAffine(const float* x, int n, const uint8_t* q, bool offset_nonpositive, AffineFit* out) {
  double sq = 0, sqq = 0, sx = 0, sqx = 0;
  for (int i = 0; i < n; ++i) {
    sq += q[i];
    sqq += double(q[i]) * q[i];
    sx += x[i];
    sqx += double(q[i]) * x[i];
  }
  if (sqq <= 0) return false;
  const double det = n * sqq - sq * sq;
  double s = 0, b = 0;
  if (det > 0) {
    s = (n * sqx - sq * sx) / det;
    b = (sqq * sx - sq * sqx) / det;
  }
  if (det <= 0 || (offset_nonpositive && b > 0)) {  // optimum on the boundary b = 0
    b = 0;
    s = sqx / sqq;
  }
  if (!(s >= 0)) return false;
  out->scale = float(s);
  out->offset = float(b);
  return true;
}

}  // namespace

AffineFit SearchAffine(const float* x, int n, int qmax, bool offset_nonpositive) {
  BRISK_CHECK(n <= kMaxFitValues && n > 0 && qmax > 0);
  float lo = x[0], hi = x[0];
  for (int i = 1; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  if (offset_nonpositive) lo = std::min(lo, 0.0f);
  AffineFit best;
  best.offset = lo;
  if (!(hi > lo)) return best;  // constant group: the offset alone represents it
  uint8_t q[kMaxFitValues], bestq[kMaxFitValues];
  best.scale = (hi - lo) / float(qmax);
  float best_err = QuantizeAffine(x, n, qmax, best, bestq);
  // Candidates: qmax + delta steps over [lo, hi]. Fewer steps clip the extremes but refine the
  // bulk; slightly more shifts where the rounding boundaries fall.
  for (int k = -20; k <= 10; ++k) {
    const float inv = (float(qmax) + 0.1f * float(k)) / (hi - lo);
    for (int i = 0; i < n; ++i) q[i] = uint8_t(RoundClamp((x[i] - lo) * inv, 0, qmax));
    AffineFit fit;
    if (!FitAffine(x, n, q, offset_nonpositive, &fit)) continue;
    const float err = QuantizeAffine(x, n, qmax, fit, q);
    if (err < best_err) {
      best_err = err;
      best = fit;
      std::memcpy(bestq, q, size_t(n));
    }
  }
  for (int it = 0; it < 8; ++it) {  // Lloyd polish
    AffineFit fit;
    if (!FitAffine(x, n, bestq, offset_nonpositive, &fit)) break;
    const float err = QuantizeAffine(x, n, qmax, fit, q);
    if (!(err < best_err)) break;
    best_err = err;
    best = fit;
    std::memcpy(bestq, q, size_t(n));
  }
  return best;
}

}  // namespace brisk::quant_internal

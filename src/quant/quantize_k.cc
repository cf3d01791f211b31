// Quantization of the K types (Q4_K, Q5_K, Q6_K).
//
// A K super-block has two levels of scale: a float (fp16) super-scale and small integer
// sub-block scales. Plain rounding of both levels loses a lot, so each level is searched:
//  1. Per sub-block, find the best real-valued scale (and min, for Q4_K/Q5_K): try a grid of
//     candidate step sizes around the naive range/steps one, re-fit each by least squares on the
//     quants it produces, and polish the winner by alternating requantize / refit (Lloyd steps,
//     each of which can only lower the error).
//  2. Quantize the sub-block scales to the format's integers against the super-scale.
//  3. With the integer scales fixed, refit the super-scale(s) by least squares over the whole
//     super-block, then try +-1 on each integer sub-scale, keeping whatever lowers the true
//     (fp16-rounded, dequantized) squared error.
// All error measures are plain squared error, the quantity a round trip is judged by.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/blocks.h"
#include "quant/quant_rows.h"
#include "util/fp16.h"

namespace brisk::quant_internal {
namespace {

int RoundClamp(float v, int lo, int hi) {
  return std::clamp(int(std::lrintf(std::clamp(v, float(lo), float(hi)))), lo, hi);
}

float RoundFp16(float v) { return Fp16ToFp32(Fp32ToFp16(v)); }

// ---------------------------------------------------------------------------------------------
// Asymmetric sub-blocks (Q4_K, Q5_K): y = s*q - m with q in [0, nmax], s >= 0, m >= 0.

struct AffineFit {
  float scale = 0;
  float min = 0;  // subtracted offset, >= 0 (the format stores it unsigned)
};

// Quants of x for a given (scale, min); returns the squared error.
float QuantizeAffine(const float* x, int n, int nmax, float scale, float min, uint8_t* q) {
  float err = 0;
  const float inv = scale > 0 ? 1.0f / scale : 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = inv > 0 ? RoundClamp((x[i] + min) * inv, 0, nmax) : 0;
    q[i] = uint8_t(l);
    const float e = scale * float(l) - min - x[i];
    err += e * e;
  }
  return err;
}

// Least-squares (scale, min) for fixed quants, with the constraint min >= 0 (an offset above
// zero is not representable: the stored min is subtracted). Returns false when degenerate.
bool FitAffine(const float* x, int n, const uint8_t* q, AffineFit* fit) {
  double sl = 0, sll = 0, sx = 0, slx = 0;
  for (int i = 0; i < n; ++i) {
    sl += q[i];
    sll += double(q[i]) * q[i];
    sx += x[i];
    slx += double(q[i]) * x[i];
  }
  const double det = n * sll - sl * sl;
  if (sll <= 0) return false;
  double s = 0, b = 0;  // y = s*q + b
  if (det > 0) {
    s = (n * slx - sl * sx) / det;
    b = (sll * sx - sl * slx) / det;
  }
  if (det <= 0 || b > 0) {  // constrained optimum lies on b = 0
    b = 0;
    s = slx / sll;
  }
  if (s < 0) return false;
  fit->scale = float(s);
  fit->min = float(-b);
  return true;
}

// Best (scale, min) for one sub-block, searching candidate step counts around nmax.
AffineFit SearchAffine(const float* x, int n, int nmax) {
  float lo = 0, hi = x[0];
  for (int i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  AffineFit best;
  if (hi <= lo) {  // constant non-positive block: represented by the min alone
    best.min = -lo;
    return best;
  }
  uint8_t q[32], bestq[32];
  best.scale = (hi - lo) / float(nmax);
  best.min = -lo;
  float best_err = QuantizeAffine(x, n, nmax, best.scale, best.min, bestq);
  // Candidate: quantize with nmax + delta steps over [lo, hi], then refit. Fewer steps than nmax
  // clip the extremes but refine the bulk; slightly more shifts the rounding grid.
  for (int k = -20; k <= 10; ++k) {
    const float steps = float(nmax) + 0.1f * float(k);
    const float inv = steps / (hi - lo);
    for (int i = 0; i < n; ++i) q[i] = uint8_t(RoundClamp((x[i] - lo) * inv, 0, nmax));
    AffineFit fit;
    if (!FitAffine(x, n, q, &fit)) continue;
    const float err = QuantizeAffine(x, n, nmax, fit.scale, fit.min, q);
    if (err < best_err) {
      best_err = err;
      best = fit;
      std::memcpy(bestq, q, size_t(n));
    }
  }
  // Lloyd polish: refit on the current quants, requantize, stop when it no longer improves.
  for (int it = 0; it < 8; ++it) {
    AffineFit fit;
    if (!FitAffine(x, n, bestq, &fit)) break;
    const float err = QuantizeAffine(x, n, nmax, fit.scale, fit.min, q);
    if (!(err < best_err)) break;
    best_err = err;
    best = fit;
    std::memcpy(bestq, q, size_t(n));
  }
  return best;
}

// Packs 6-bit sub-block scales and mins into the 12-byte field (inverse of GetScaleMinK4).
void PackScaleMinK4(const uint8_t sc[8], const uint8_t m[8], uint8_t s[12]) {
  for (int j = 0; j < 4; ++j) {
    s[j] = uint8_t((sc[j] & 63) | (sc[j + 4] >> 4) << 6);
    s[j + 4] = uint8_t((m[j] & 63) | (m[j + 4] >> 4) << 6);
    s[j + 8] = uint8_t((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
  }
}

// Squared error of sub-block j (32 values) under integer scale/min and the super-scales.
float SubBlockErrorK(const float* x, int nmax, float d, float dmin, int sc, int m, uint8_t* q) {
  return QuantizeAffine(x, 32, nmax, d * float(sc), dmin * float(m), q);
}

// Shared Q4_K / Q5_K super-block quantizer: fills d, dmin (fp16 bits), the 6-bit sub-scales and
// mins, and the 256 quants in natural order.
void QuantizeSuperAffine(const float* x, int nmax, uint16_t* dh, uint16_t* dminh, uint8_t sc[8],
                         uint8_t mn[8], uint8_t q[256]) {
  AffineFit fits[8];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    fits[j] = SearchAffine(x + 32 * j, 32, nmax);
    max_scale = std::max(max_scale, fits[j].scale);
    max_min = std::max(max_min, fits[j].min);
  }
  float d = RoundFp16(max_scale / 63.0f);
  float dmin = RoundFp16(max_min / 63.0f);
  int isc[8], imn[8];
  for (int j = 0; j < 8; ++j) {
    isc[j] = d > 0 ? RoundClamp(fits[j].scale / d, 0, 63) : 0;
    imn[j] = dmin > 0 ? RoundClamp(fits[j].min / dmin, 0, 63) : 0;
  }
  auto total_error = [&](float dd, float dm, uint8_t* qq) {
    float err = 0;
    for (int j = 0; j < 8; ++j) err += SubBlockErrorK(x + 32 * j, nmax, dd, dm, isc[j], imn[j], qq + 32 * j);
    return err;
  };
  float best_err = total_error(d, dmin, q);

  // Refit (d, dmin) jointly for the current quants and integer scales: y = d*(sc*q) - dmin*m is
  // linear in both. Accept only if the fp16-rounded result really is better.
  uint8_t tq[256];
  for (int it = 0; it < 3; ++it) {
    double saa = 0, sab = 0, sbb = 0, sax = 0, sbx = 0;
    for (int i = 0; i < 256; ++i) {
      const double a = double(isc[i / 32]) * q[i], b = -double(imn[i / 32]);
      saa += a * a;
      sab += a * b;
      sbb += b * b;
      sax += a * x[i];
      sbx += b * x[i];
    }
    const double det = saa * sbb - sab * sab;
    if (!(det > 0)) break;
    const float nd = RoundFp16(float((sax * sbb - sbx * sab) / det));
    const float ndmin = RoundFp16(float((saa * sbx - sab * sax) / det));
    if (!(nd > 0) || !(ndmin >= 0) || !std::isfinite(nd) || !std::isfinite(ndmin)) break;
    const float err = total_error(nd, ndmin, tq);
    if (!(err < best_err)) break;
    best_err = err;
    d = nd;
    dmin = ndmin;
    std::memcpy(q, tq, 256);
  }

  // Integer sub-scale polish: +-1 on scale and min of each sub-block (independent per block).
  for (int j = 0; j < 8; ++j) {
    uint8_t* qj = q + 32 * j;
    float cur = SubBlockErrorK(x + 32 * j, nmax, d, dmin, isc[j], imn[j], qj);
    for (int ds = -1; ds <= 1; ++ds) {
      for (int dm = -1; dm <= 1; ++dm) {
        const int s2 = isc[j] + ds, m2 = imn[j] + dm;
        if ((ds == 0 && dm == 0) || s2 < 0 || s2 > 63 || m2 < 0 || m2 > 63) continue;
        uint8_t cand[32];
        const float err = SubBlockErrorK(x + 32 * j, nmax, d, dmin, s2, m2, cand);
        if (err < cur) {
          cur = err;
          isc[j] = s2;
          imn[j] = m2;
          std::memcpy(qj, cand, 32);
        }
      }
    }
  }
  *dh = Fp32ToFp16(d);
  *dminh = Fp32ToFp16(dmin);
  for (int j = 0; j < 8; ++j) {
    sc[j] = uint8_t(isc[j]);
    mn[j] = uint8_t(imn[j]);
  }
}

// ---------------------------------------------------------------------------------------------
// Symmetric sub-blocks (Q6_K): y = s*q with q in [-32, 31].

float QuantizeSym(const float* x, int n, float scale, int8_t* q) {
  float err = 0;
  const float inv = scale != 0 ? 1.0f / scale : 0.0f;
  for (int i = 0; i < n; ++i) {
    const int l = inv != 0 ? RoundClamp(x[i] * inv, -32, 31) : 0;
    q[i] = int8_t(l);
    const float e = scale * float(l) - x[i];
    err += e * e;
  }
  return err;
}

float FitSym(const float* x, int n, const int8_t* q) {
  double slx = 0, sll = 0;
  for (int i = 0; i < n; ++i) {
    slx += double(q[i]) * x[i];
    sll += double(q[i]) * q[i];
  }
  return sll > 0 ? float(slx / sll) : 0.0f;
}

// Best real scale for one 16-value sub-block. The naive choice maps the largest-magnitude value
// to -32 (the asymmetric range's wider end); candidates shrink or stretch that step.
float SearchSym(const float* x, int n) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      max = x[i];
    }
  }
  if (amax == 0) return 0;
  int8_t q[16], bestq[16];
  float best = max / -32.0f;
  float best_err = QuantizeSym(x, n, best, bestq);
  for (int k = -10; k <= 10; ++k) {
    const float s = max / -(32.0f + 0.1f * float(k));
    QuantizeSym(x, n, s, q);
    const float fit = FitSym(x, n, q);
    const float err = QuantizeSym(x, n, fit, q);
    if (err < best_err) {
      best_err = err;
      best = fit;
      std::memcpy(bestq, q, size_t(n));
    }
  }
  for (int it = 0; it < 8; ++it) {
    const float fit = FitSym(x, n, bestq);
    const float err = QuantizeSym(x, n, fit, q);
    if (!(err < best_err)) break;
    best_err = err;
    best = fit;
    std::memcpy(bestq, q, size_t(n));
  }
  return best;
}

void QuantizeSuperSym(const float* x, uint16_t* dh, int8_t sc[16], int8_t q[256]) {
  float scales[16];
  float max_scale = 0, amax = 0;
  for (int j = 0; j < 16; ++j) {
    scales[j] = SearchSym(x + 16 * j, 16);
    if (std::fabs(scales[j]) > amax) {
      amax = std::fabs(scales[j]);
      max_scale = scales[j];
    }
  }
  if (amax == 0) {
    *dh = Fp32ToFp16(0.0f);
    std::fill(sc, sc + 16, int8_t(0));
    std::fill(q, q + 256, int8_t(0));
    return;
  }
  // int8 sub-scales: the largest maps to -128, the end of int8 with the larger magnitude.
  float d = RoundFp16(max_scale / -128.0f);
  int isc[16];
  for (int j = 0; j < 16; ++j) isc[j] = d != 0 ? RoundClamp(scales[j] / d, -128, 127) : 0;
  auto total_error = [&](float dd, int8_t* qq) {
    float err = 0;
    for (int j = 0; j < 16; ++j) err += QuantizeSym(x + 16 * j, 16, dd * float(isc[j]), qq + 16 * j);
    return err;
  };
  float best_err = total_error(d, q);
  int8_t tq[256];
  for (int it = 0; it < 3; ++it) {  // refit d for the fixed integer scales and quants
    double saa = 0, sax = 0;
    for (int i = 0; i < 256; ++i) {
      const double a = double(isc[i / 16]) * q[i];
      saa += a * a;
      sax += a * x[i];
    }
    if (!(saa > 0)) break;
    const float nd = RoundFp16(float(sax / saa));
    if (nd == 0 || !std::isfinite(nd)) break;
    const float err = total_error(nd, tq);
    if (!(err < best_err)) break;
    best_err = err;
    d = nd;
    std::memcpy(q, tq, 256);
  }
  for (int j = 0; j < 16; ++j) {  // +-1 polish of each integer sub-scale
    int8_t* qj = q + 16 * j;
    float cur = QuantizeSym(x + 16 * j, 16, d * float(isc[j]), qj);
    for (int delta = -1; delta <= 1; delta += 2) {
      const int s2 = isc[j] + delta;
      if (s2 < -128 || s2 > 127) continue;
      int8_t cand[16];
      const float err = QuantizeSym(x + 16 * j, 16, d * float(s2), cand);
      if (err < cur) {
        cur = err;
        isc[j] = s2;
        std::memcpy(qj, cand, 16);
      }
    }
  }
  *dh = Fp32ToFp16(d);
  for (int j = 0; j < 16; ++j) sc[j] = int8_t(isc[j]);
}

bool AllFinite(const float* x, int n) {
  for (int i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return false;
  return true;
}

}  // namespace

void QuantizeQ4_K(const float* src, void* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kQK_K) {
    BlockQ4_K b{};
    uint8_t sc[8] = {}, mn[8] = {}, q[256] = {};
    if (AllFinite(src, kQK_K)) QuantizeSuperAffine(src, 15, &b.d, &b.dmin, sc, mn, q);
    PackScaleMinK4(sc, mn, b.scales);
    for (int c = 0; c < 4; ++c) {  // chunk c: sub-block 2c in low nibbles, 2c+1 in high
      for (int l = 0; l < 32; ++l) {
        b.qs[32 * c + l] = uint8_t(q[64 * c + l] | q[64 * c + 32 + l] << 4);
      }
    }
    StoreBlock(b, dst, i);
  }
}

void QuantizeQ5_K(const float* src, void* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kQK_K) {
    BlockQ5_K b{};
    uint8_t sc[8] = {}, mn[8] = {}, q[256] = {};
    if (AllFinite(src, kQK_K)) QuantizeSuperAffine(src, 31, &b.d, &b.dmin, sc, mn, q);
    PackScaleMinK4(sc, mn, b.scales);
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        const int lo = q[64 * c + l], hi = q[64 * c + 32 + l];
        b.qs[32 * c + l] = uint8_t((lo & 15) | (hi & 15) << 4);
        b.qh[l] |= uint8_t((lo >> 4) << (2 * c) | (hi >> 4) << (2 * c + 1));
      }
    }
    StoreBlock(b, dst, i);
  }
}

void QuantizeQ6_K(const float* src, void* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kQK_K) {
    BlockQ6_K b{};
    int8_t q[256] = {};
    if (AllFinite(src, kQK_K)) QuantizeSuperSym(src, &b.d, b.scales, q);
    // Layout (DESIGN §4): per 128-value half, ql[l] holds values l (low) and l+64 (high nibble),
    // ql[l+32] values l+32 and l+96; qh[l] holds the top 2 bits of l, l+32, l+64, l+96.
    for (int half = 0; half < 2; ++half) {
      uint8_t* ql = b.ql + 64 * half;
      uint8_t* qh = b.qh + 32 * half;
      const int8_t* qq = q + 128 * half;
      for (int l = 0; l < 32; ++l) {
        const int q1 = qq[l] + 32, q2 = qq[l + 32] + 32, q3 = qq[l + 64] + 32, q4 = qq[l + 96] + 32;
        ql[l] = uint8_t((q1 & 15) | (q3 & 15) << 4);
        ql[l + 32] = uint8_t((q2 & 15) | (q4 & 15) << 4);
        qh[l] = uint8_t((q1 >> 4) | (q2 >> 4) << 2 | (q3 >> 4) << 4 | (q4 >> 4) << 6);
      }
    }
    StoreBlock(b, dst, i);
  }
}

}  // namespace brisk::quant_internal

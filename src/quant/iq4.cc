// IQ4_NL and IQ4_XS: 4-bit indices into a fixed non-linear codebook (blocks.h, kIQ4NLValues),
// one fp16 scale per 32 values (IQ4_NL) or one fp16 scale per 256 values times a 6-bit signed
// integer per 32 (IQ4_XS).
//
// Dequantization associates as the reference does: the effective scale is formed first in
// float32 (IQ4_XS: d * float(ls - 32)), then multiplied by the codebook value converted to float.
//
// The quantizers are brisk's own: per 32-value block, try a few scales that put the block's
// largest-magnitude value at or near either end of the codebook, assign every value its nearest
// codebook entry, refit the scale by weighted least squares and keep the candidate with the
// smallest weighted squared error. The weights x^2 + mean(x^2) favour the large values a little
// (they dominate the matmul outputs) without ignoring the small ones.
#include <cmath>
#include <cstring>

#include "quant/blocks.h"
#include "quant/quant_rows.h"
#include "util/fp16.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace brisk::quant_internal {
namespace {

constexpr int kNumValues = 16;

// Index of the codebook entry nearest to v (ties to the lower entry).
int NearestIndex(float v) {
  int lo = 0, hi = kNumValues - 1;
  if (v <= float(kIQ4NLValues[0])) return 0;
  if (v >= float(kIQ4NLValues[hi])) return hi;
  while (hi - lo > 1) {  // invariant: values[lo] < v < values[hi] (or equal at an end)
    const int mid = (lo + hi) / 2;
    if (v < float(kIQ4NLValues[mid]))
      hi = mid;
    else
      lo = mid;
  }
  return v - float(kIQ4NLValues[lo]) <= float(kIQ4NLValues[hi]) - v ? lo : hi;
}

// Best float scale of n values (the block's dequantized values are scale * values[q]), and its
// indices in q. Zero for an all-zero block.
float FitBlock(const float* x, int n, uint8_t* q) {
  float amax = 0.0f, xmax = 0.0f, sum2 = 0.0f;
  for (int i = 0; i < n; ++i) {
    sum2 += x[i] * x[i];
    if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), xmax = x[i];
  }
  if (amax == 0.0f) {
    std::memset(q, 0, size_t(n));
    return 0.0f;
  }
  const float sigma2 = sum2 / float(n);
  float best_d = 0.0f, best_err = INFINITY;
  uint8_t cand[kQK_K];
  // The largest value lands on (or a little inside) the negative end, -127, or the positive
  // end, 113: both ends are candidates since the codebook is not symmetric.
  for (int end = 0; end < 2; ++end) {
    const float top = end == 0 ? -127.0f : 113.0f;
    for (int step = -4; step <= 4; ++step) {
      const float id = (top + float(step) * 2.0f * (end == 0 ? 1.0f : -1.0f)) / xmax;
      double sxv = 0, svv = 0;
      for (int i = 0; i < n; ++i) {
        cand[i] = uint8_t(NearestIndex(x[i] * id));
        const double w = double(x[i]) * x[i] + sigma2;
        const double v = kIQ4NLValues[cand[i]];
        sxv += w * x[i] * v;
        svv += w * v * v;
      }
      if (svv <= 0) continue;
      const float d = float(sxv / svv);
      double err = 0;
      for (int i = 0; i < n; ++i) {
        const double w = double(x[i]) * x[i] + sigma2;
        const double e = x[i] - double(d) * kIQ4NLValues[cand[i]];
        err += w * e * e;
      }
      if (err < best_err) {
        best_err = float(err);
        best_d = d;
        std::memcpy(q, cand, size_t(n));
      }
    }
  }
  return best_d;
}

// Indices for a fixed (already rounded) scale d.
void Assign(const float* x, int n, float d, uint8_t* q) {
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int i = 0; i < n; ++i) q[i] = uint8_t(d != 0.0f ? NearestIndex(x[i] * id) : 8);
}

// fp16 bits of a scale, finite whatever the input (NaN or inf in a block: 0; beyond the fp16
// range: the largest fp16), so a garbage block never dequantizes to inf or NaN.
uint16_t ScaleToFp16(float d) {
  if (!std::isfinite(d)) return Fp32ToFp16(0.0f);
  return Fp32ToFp16(std::fmin(std::fmax(d, -65504.0f), 65504.0f));
}

void PackNibbles(const uint8_t* q, uint8_t* qs) {
  for (int i = 0; i < kQK / 2; ++i) qs[i] = uint8_t(q[i] | q[i + kQK / 2] << 4);
}

}  // namespace

void DequantizeIQ4_NL(const void* src, float* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, dst += kQK) {
    const auto b = LoadBlock<BlockIQ4_NL>(src, i);
    const float d = Fp16ToFp32(b.d);
    for (int l = 0; l < kQK / 2; ++l) {
      dst[l] = d * float(kIQ4NLValues[b.qs[l] & 15]);
      dst[l + kQK / 2] = d * float(kIQ4NLValues[b.qs[l] >> 4]);
    }
  }
}

void DequantizeIQ4_XS(const void* src, float* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = LoadBlock<BlockIQ4_XS>(src, i);
    const float d = Fp16ToFp32(b.d);
    for (int j = 0; j < kQK_K / kQK; ++j, dst += kQK) {
      const float dl = d * float(IQ4XSScale(b, j) - 32);
      const uint8_t* qs = b.qs + 16 * j;
      for (int l = 0; l < kQK / 2; ++l) {
        dst[l] = dl * float(kIQ4NLValues[qs[l] & 15]);
        dst[l + kQK / 2] = dl * float(kIQ4NLValues[qs[l] >> 4]);
      }
    }
  }
}

void QuantizeIQ4_NL(const float* src, void* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kQK) {
    BlockIQ4_NL b;
    uint8_t q[kQK];
    b.d = ScaleToFp16(FitBlock(src, kQK, q));
    Assign(src, kQK, Fp16ToFp32(b.d), q);
    PackNibbles(q, b.qs);
    StoreBlock(b, dst, i);
  }
}

void QuantizeIQ4_XS(const float* src, void* dst, int64_t nb) {
  constexpr int kSub = kQK_K / kQK;
  for (int64_t i = 0; i < nb; ++i, src += kQK_K) {
    BlockIQ4_XS b{};
    uint8_t q[kQK];
    float scale[kSub], smax = 0.0f;
    for (int j = 0; j < kSub; ++j) {
      scale[j] = FitBlock(src + kQK * j, kQK, q);
      if (std::fabs(scale[j]) > std::fabs(smax)) smax = scale[j];
    }
    // The largest sub-block scale becomes -32 times the super-block scale (the 6-bit signed
    // multipliers run from -32 to 31).
    b.d = ScaleToFp16(smax / -32.0f);
    const float d = Fp16ToFp32(b.d);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < kSub; ++j) {
      const float r = std::nearbyint(scale[j] * id);  // clamped as a float: no UB on any value
      const int l = std::isfinite(r) ? int(std::fmin(std::fmax(r, -32.0f), 31.0f)) : 0;
      const int ls = l + 32;
      b.scales_l[j / 2] = uint8_t(b.scales_l[j / 2] | (ls & 15) << (4 * (j % 2)));
      b.scales_h = uint16_t(b.scales_h | (ls >> 4) << (2 * j));
      Assign(src + kQK * j, kQK, d * float(l), q);
      PackNibbles(q, b.qs + 16 * j);
    }
    StoreBlock(b, dst, i);
  }
}

}  // namespace brisk::quant_internal

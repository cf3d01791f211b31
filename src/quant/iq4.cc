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

// Nearest codebook index for v, by half-units: every midpoint between neighbouring codebook
// values is a multiple of 0.5, so all v in [k / 2, (k + 1) / 2) share one nearest entry (a v
// exactly on a midpoint takes the upper one). Entry k + 256 covers that interval, k in
// [-256, 256).
struct NearestTable {
  uint8_t idx[512];
  constexpr NearestTable() : idx() {
    for (int k = 0; k < 512; ++k) {
      const double v = (k - 256) / 2.0 + 0.25;  // inside the interval, never on a midpoint
      int best = 0;
      for (int i = 1; i < kNumValues; ++i) {
        const double di = v - kIQ4NLValues[i], db = v - kIQ4NLValues[best];
        if (di * di < db * db) best = i;
      }
      idx[k] = uint8_t(best);
    }
  }
};
constexpr NearestTable kNearest;

int NearestIndex(float v) {
  if (!(v >= -128.0f)) return 0;  // and NaN: no float-to-int conversion of it below
  if (v >= 127.5f) return kNumValues - 1;
  return kNearest.idx[int(std::floor(2.0f * v)) + 256];
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
  std::memset(q, 8, size_t(n));  // kept if no candidate has a finite score (NaN or inf in x)
  const float sigma2 = sum2 / float(n);
  double w[kQK_K];
  for (int i = 0; i < n; ++i) w[i] = double(x[i]) * x[i] + sigma2;
  float best_d = 0.0f;
  double best_score = -1;
  uint8_t cand[kQK_K];
  // The largest value lands on (or a little inside) the negative end, -127, or the positive
  // end, 113: both ends are candidates since the codebook is not symmetric. With the scale
  // refitted by least squares, the weighted squared error is sum(w x^2) - sxv^2 / svv, so the
  // best candidate is the one with the largest sxv^2 / svv.
  for (int end = 0; end < 2; ++end) {
    const float top = end == 0 ? -127.0f : 113.0f;
    for (int step = -4; step <= 4; ++step) {
      const float id = (top + float(step) * 2.0f * (end == 0 ? 1.0f : -1.0f)) / xmax;
      double sxv = 0, svv = 0;
      for (int i = 0; i < n; ++i) {
        cand[i] = uint8_t(NearestIndex(x[i] * id));
        const double v = kIQ4NLValues[cand[i]];
        sxv += w[i] * x[i] * v;
        svv += w[i] * v * v;
      }
      if (!(svv > 0)) continue;
      const double score = sxv * sxv / svv;
      if (score > best_score) {  // false for NaN: a block with NaN or inf keeps d = 0
        best_score = score;
        best_d = float(sxv / svv);
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

// QuantizeRow dispatch, the float types and the legacy 32-value block types.
//
// Q8_0 uses ggml's reference scale (amax / 127): with 255 levels a search buys almost nothing.
// The 4- and 5-bit types search the block scale (and offset) with fit.h instead of taking the
// naive range / steps, which lowers the round-trip error by several percent (6-12% below
// llama.cpp's reference quantizer on the golden weights). A block holding NaN or infinity
// quantizes to zeros: no finite scale represents it, and it keeps the searches finite. In every
// type the quants are rounded against the scale and offset AFTER their rounding to fp16, i.e.
// against the numbers the dequantizer will actually use.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/blocks.h"
#include "quant/dequantize.h"
#include "quant/fit.h"
#include "quant/quant_rows.h"
#include "util/check.h"
#include "util/fp16.h"

namespace brisk {
namespace quant_internal {
namespace {

// Packs 32 quants of up to 5 bits: low nibbles pair value l with value l+16 in qs[l]; the fifth
// bits (if any) go to a little-endian uint32.
void PackNibbles(const int q[kQK], uint8_t qs[kQK / 2], uint8_t qh[4]) {
  uint32_t h = 0;
  for (int l = 0; l < kQK / 2; ++l) {
    qs[l] = uint8_t((q[l] & 15) | (q[l + kQK / 2] & 15) << 4);
    h |= uint32_t(q[l] >> 4 & 1) << l;
    h |= uint32_t(q[l + kQK / 2] >> 4 & 1) << (l + kQK / 2);
  }
  if (qh != nullptr) {
    for (int k = 0; k < 4; ++k) qh[k] = uint8_t(h >> (8 * k));
  }
}

bool AllFinite(const float* x) {
  bool finite = true;
  for (int l = 0; l < kQK; ++l) finite &= std::isfinite(x[l]);
  return finite;
}

// Symmetric block (Q4_0 / Q5_0): y = d * (q - half), q in [0, 2*half).
uint16_t QuantizeSymmetricBlock(const float* x, int half, int q[kQK]) {
  const float d = AllFinite(x) ? RoundFp16(SearchSymmetricScale(x, kQK, -half, half - 1)) : 0.0f;
  if (d == 0 || !std::isfinite(d)) {  // all-zero block (or unrepresentable input)
    std::fill(q, q + kQK, half);      // dequantizes to exactly 0
    return Fp32ToFp16(0.0f);
  }
  int8_t qs[kQK];
  QuantizeSymmetric(x, kQK, -half, half - 1, d, qs);
  for (int l = 0; l < kQK; ++l) q[l] = qs[l] + half;
  return Fp32ToFp16(d);
}

// Asymmetric block (Q4_1 / Q5_1): y = d*q + m, q in [0, qmax], m a free fp16 offset.
void QuantizeAffineBlock(const float* x, int qmax, int q[kQK], uint16_t* dh, uint16_t* mh) {
  const bool finite = AllFinite(x);
  const AffineFit fit =
      finite ? SearchAffine(x, kQK, qmax, /*offset_nonpositive=*/false) : AffineFit{};
  const AffineFit rounded{RoundFp16(fit.scale), RoundFp16(fit.offset)};
  if (!finite || !std::isfinite(rounded.scale) || !std::isfinite(rounded.offset)) {
    *dh = *mh = Fp32ToFp16(0.0f);  // unrepresentable input: give a zero block
    std::fill(q, q + kQK, 0);
    return;
  }
  uint8_t qs[kQK];
  QuantizeAffine(x, kQK, qmax, rounded, qs);  // scale 0 (constant block) gives all-zero quants
  for (int l = 0; l < kQK; ++l) q[l] = qs[l];
  *dh = Fp32ToFp16(rounded.scale);
  *mh = Fp32ToFp16(rounded.offset);
}

}  // namespace

void QuantizeQ8_0(const float* src, void* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kQK) {
    BlockQ8_0 b;
    float amax = 0;
    for (int l = 0; l < kQK; ++l) amax = std::max(amax, std::fabs(src[l]));
    b.d = Fp32ToFp16(amax / 127.0f);
    const float d = Fp16ToFp32(b.d);
    const float id = (d != 0 && std::isfinite(d)) ? 1.0f / d : 0.0f;
    if (id == 0) b.d = Fp32ToFp16(0.0f);
    for (int l = 0; l < kQK; ++l) b.qs[l] = int8_t(RoundClamp(src[l] * id, -127, 127));
    StoreBlock(b, dst, i);
  }
}

void QuantizeQ4_0(const float* src, void* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kQK) {
    BlockQ4_0 b;
    int q[kQK];
    b.d = QuantizeSymmetricBlock(src, 8, q);
    PackNibbles(q, b.qs, nullptr);
    StoreBlock(b, dst, i);
  }
}

void QuantizeQ5_0(const float* src, void* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kQK) {
    BlockQ5_0 b;
    int q[kQK];
    b.d = QuantizeSymmetricBlock(src, 16, q);
    PackNibbles(q, b.qs, b.qh);
    StoreBlock(b, dst, i);
  }
}

void QuantizeQ4_1(const float* src, void* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kQK) {
    BlockQ4_1 b;
    int q[kQK];
    QuantizeAffineBlock(src, 15, q, &b.d, &b.m);
    PackNibbles(q, b.qs, nullptr);
    StoreBlock(b, dst, i);
  }
}

void QuantizeQ5_1(const float* src, void* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, src += kQK) {
    BlockQ5_1 b;
    int q[kQK];
    QuantizeAffineBlock(src, 31, q, &b.d, &b.m);
    PackNibbles(q, b.qs, b.qh);
    StoreBlock(b, dst, i);
  }
}

}  // namespace quant_internal

void QuantizeRow(GgmlType type, const float* src, void* dst, int64_t n) {
  using namespace quant_internal;
  const TypeTraits& tr = GetTypeTraits(type);
  BRISK_CHECK_MSG(tr.can_quantize, "QuantizeRow: type has no quantizer");
  BRISK_CHECK_MSG(n >= 0 && n % tr.block_size == 0, "QuantizeRow: n not a multiple of the block");
  const int64_t nb = n / tr.block_size;
  auto* bytes = static_cast<uint8_t*>(dst);
  switch (type) {
    case GgmlType::kF16:
    case GgmlType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = type == GgmlType::kF16 ? Fp32ToFp16(src[i]) : Fp32ToBf16(src[i]);
        std::memcpy(bytes + 2 * i, &h, 2);
      }
      return;
    case GgmlType::kQ8_0:
      return QuantizeQ8_0(src, dst, nb);
    case GgmlType::kQ4_0:
      return QuantizeQ4_0(src, dst, nb);
    case GgmlType::kQ4_1:
      return QuantizeQ4_1(src, dst, nb);
    case GgmlType::kQ5_0:
      return QuantizeQ5_0(src, dst, nb);
    case GgmlType::kQ5_1:
      return QuantizeQ5_1(src, dst, nb);
    case GgmlType::kQ4_K:
      return QuantizeQ4_K(src, dst, nb);
    case GgmlType::kQ5_K:
      return QuantizeQ5_K(src, dst, nb);
    case GgmlType::kQ6_K:
      return QuantizeQ6_K(src, dst, nb);
    case GgmlType::kIQ4_NL:
      return QuantizeIQ4_NL(src, dst, nb);
    case GgmlType::kIQ4_XS:
      return QuantizeIQ4_XS(src, dst, nb);
    default:
      break;
  }
  BRISK_CHECK_MSG(false, "QuantizeRow: type marked quantizable but has no routine");
}

}  // namespace brisk

// DequantizeRow dispatch, the float types and the legacy 32-value block types.
//
// Bit-exactness with ggml / gguf-py is the contract here (the golden files test it). That needs
// the same float operations in the same order: one float multiply (and one add for the *_1
// types) per value, never fused. GCC does not contract across them under -std=c++20 (it implies
// -ffp-contract=off); clang contracts within an expression by default, so turn that off.
#include "quant/dequantize.h"

#include <cstring>

#include "quant/blocks.h"
#include "quant/quant_rows.h"
#include "util/check.h"
#include "util/fp16.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace brisk {
namespace quant_internal {
namespace {

uint32_t LoadQh(const uint8_t qh[4]) {
  return uint32_t(qh[0]) | uint32_t(qh[1]) << 8 | uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
}

}  // namespace

void DequantizeQ8_0(const void* src, float* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = LoadBlock<BlockQ8_0>(src, i);
    const float d = Fp16ToFp32(b.d);
    for (int l = 0; l < kQK; ++l) dst[l] = d * float(b.qs[l]);
    dst += kQK;
  }
}

void DequantizeQ4_0(const void* src, float* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = LoadBlock<BlockQ4_0>(src, i);
    const float d = Fp16ToFp32(b.d);
    for (int l = 0; l < kQK / 2; ++l) {
      // The -8 is applied to the integer, so the only float op is the multiply.
      dst[l] = d * float((b.qs[l] & 15) - 8);
      dst[l + kQK / 2] = d * float((b.qs[l] >> 4) - 8);
    }
    dst += kQK;
  }
}

void DequantizeQ4_1(const void* src, float* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = LoadBlock<BlockQ4_1>(src, i);
    const float d = Fp16ToFp32(b.d);
    const float m = Fp16ToFp32(b.m);
    for (int l = 0; l < kQK / 2; ++l) {
      dst[l] = d * float(b.qs[l] & 15) + m;
      dst[l + kQK / 2] = d * float(b.qs[l] >> 4) + m;
    }
    dst += kQK;
  }
}

void DequantizeQ5_0(const void* src, float* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = LoadBlock<BlockQ5_0>(src, i);
    const float d = Fp16ToFp32(b.d);
    const uint32_t qh = LoadQh(b.qh);
    for (int l = 0; l < kQK / 2; ++l) {
      const int q0 = (b.qs[l] & 15) | int((qh >> l) & 1) << 4;
      const int q1 = (b.qs[l] >> 4) | int((qh >> (l + 16)) & 1) << 4;
      dst[l] = d * float(q0 - 16);
      dst[l + kQK / 2] = d * float(q1 - 16);
    }
    dst += kQK;
  }
}

void DequantizeQ5_1(const void* src, float* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = LoadBlock<BlockQ5_1>(src, i);
    const float d = Fp16ToFp32(b.d);
    const float m = Fp16ToFp32(b.m);
    const uint32_t qh = LoadQh(b.qh);
    for (int l = 0; l < kQK / 2; ++l) {
      const int q0 = (b.qs[l] & 15) | int((qh >> l) & 1) << 4;
      const int q1 = (b.qs[l] >> 4) | int((qh >> (l + 16)) & 1) << 4;
      dst[l] = d * float(q0) + m;
      dst[l + kQK / 2] = d * float(q1) + m;
    }
    dst += kQK;
  }
}

}  // namespace quant_internal

void DequantizeRow(GgmlType type, const void* src, float* dst, int64_t n) {
  using namespace quant_internal;
  const TypeTraits& tr = GetTypeTraits(type);
  BRISK_CHECK_MSG(tr.supported, "DequantizeRow: unsupported type");
  BRISK_CHECK_MSG(n >= 0 && n % tr.block_size == 0, "DequantizeRow: n not a multiple of the block");
  const int64_t nb = n / tr.block_size;
  const auto* bytes = static_cast<const uint8_t*>(src);
  switch (type) {
    case GgmlType::kF32:
      std::memcpy(dst, src, size_t(n) * sizeof(float));
      return;
    case GgmlType::kF16:
    case GgmlType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, bytes + 2 * i, 2);
        dst[i] = type == GgmlType::kF16 ? Fp16ToFp32(h) : Bf16ToFp32(h);
      }
      return;
    case GgmlType::kQ8_0:
      return DequantizeQ8_0(src, dst, nb);
    case GgmlType::kQ4_0:
      return DequantizeQ4_0(src, dst, nb);
    case GgmlType::kQ4_1:
      return DequantizeQ4_1(src, dst, nb);
    case GgmlType::kQ5_0:
      return DequantizeQ5_0(src, dst, nb);
    case GgmlType::kQ5_1:
      return DequantizeQ5_1(src, dst, nb);
    case GgmlType::kQ2_K:
      return DequantizeQ2_K(src, dst, nb);
    case GgmlType::kQ3_K:
      return DequantizeQ3_K(src, dst, nb);
    case GgmlType::kQ4_K:
      return DequantizeQ4_K(src, dst, nb);
    case GgmlType::kQ5_K:
      return DequantizeQ5_K(src, dst, nb);
    case GgmlType::kQ6_K:
      return DequantizeQ6_K(src, dst, nb);
    case GgmlType::kIQ4_NL:
      return DequantizeIQ4_NL(src, dst, nb);
    case GgmlType::kIQ4_XS:
      return DequantizeIQ4_XS(src, dst, nb);
    default:
      break;
  }
  BRISK_CHECK_MSG(false, "DequantizeRow: type marked supported but has no routine");
}

}  // namespace brisk

// Dequantization of the 256-value super-block ("K") types.
//
// Association order is the contract (see the golden README): the effective sub-block scale is
// formed first in float32 (d * sc, dmin * m), then multiplied by the integer quant converted to
// float, then the offset is subtracted. Any other order differs in the last bit.
#include "quant/blocks.h"
#include "quant/quant_rows.h"
#include "util/fp16.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace brisk::quant_internal {

void DequantizeQ2_K(const void* src, float* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = LoadBlock<BlockQ2_K>(src, i);
    const float d = Fp16ToFp32(b.d);
    const float dmin = Fp16ToFp32(b.dmin);
    // Two halves of 128 values share 32 bytes of qs each; the four 2-bit planes of a byte
    // (shift 0, 2, 4, 6) are four consecutive groups of 32 values, each group being two
    // sub-blocks of 16 (bytes 0-15 and 16-31) with their own scale byte.
    int is = 0;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = b.qs + 32 * half;
      for (int shift = 0; shift < 8; shift += 2) {
        for (int k = 0; k < 2; ++k) {
          const uint8_t sc = b.scales[is++];
          const float dl = d * float(sc & 15);
          const float ml = dmin * float(sc >> 4);
          for (int l = 0; l < 16; ++l) *dst++ = dl * float((q[16 * k + l] >> shift) & 3) - ml;
        }
      }
    }
  }
}

namespace {

// Q3_K packs sixteen 6-bit scales into 12 bytes: bytes 0-7 hold the low nibbles (scale j in
// byte j%8, low nibble for j<8, high nibble for j>=8), bytes 8-11 the high 2-bit pairs (scale j
// in byte 8 + j%4, bit pair j/4). Stored biased by 32.
void UnpackQ3KScales(const uint8_t packed[12], int scales[16]) {
  for (int j = 0; j < 16; ++j) {
    const int low = (j < 8 ? packed[j] : packed[j - 8] >> 4) & 15;
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    scales[j] = (low | high << 4) - 32;
  }
}

}  // namespace

void DequantizeQ3_K(const void* src, float* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = LoadBlock<BlockQ3_K>(src, i);
    const float d = Fp16ToFp32(b.d);
    int scales[16];
    UnpackQ3KScales(b.scales, scales);
    // Same 2-bit plane walk as Q2_K; the high bit for plane p of half h is bit (4h + p) of
    // hmask[l], and a CLEAR bit means the quant is offset by -4 (range -4..3).
    int is = 0;
    uint8_t mask = 1;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* q = b.qs + 32 * half;
      for (int shift = 0; shift < 8; shift += 2, mask = uint8_t(mask << 1)) {
        for (int k = 0; k < 2; ++k) {
          const float dl = d * float(scales[is++]);
          for (int l = 0; l < 16; ++l) {
            const int idx = 16 * k + l;
            const int qv = ((q[idx] >> shift) & 3) - ((b.hmask[idx] & mask) ? 0 : 4);
            *dst++ = dl * float(qv);
          }
        }
      }
    }
  }
}

void DequantizeQ4_K(const void* src, float* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = LoadBlock<BlockQ4_K>(src, i);
    const float d = Fp16ToFp32(b.d);
    const float dmin = Fp16ToFp32(b.dmin);
    for (int c = 0; c < 4; ++c) {  // 64-value chunks: low nibbles, then high nibbles of 32 bytes
      const uint8_t* q = b.qs + 32 * c;
      uint8_t sc, m;
      GetScaleMinK4(2 * c, b.scales, &sc, &m);
      const float d1 = d * float(sc), m1 = dmin * float(m);
      GetScaleMinK4(2 * c + 1, b.scales, &sc, &m);
      const float d2 = d * float(sc), m2 = dmin * float(m);
      for (int l = 0; l < 32; ++l) dst[l] = d1 * float(q[l] & 15) - m1;
      for (int l = 0; l < 32; ++l) dst[32 + l] = d2 * float(q[l] >> 4) - m2;
      dst += 64;
    }
  }
}

void DequantizeQ5_K(const void* src, float* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = LoadBlock<BlockQ5_K>(src, i);
    const float d = Fp16ToFp32(b.d);
    const float dmin = Fp16ToFp32(b.dmin);
    for (int c = 0; c < 4; ++c) {
      const uint8_t* q = b.qs + 32 * c;
      const uint8_t bit_lo = uint8_t(1u << (2 * c)), bit_hi = uint8_t(2u << (2 * c));
      uint8_t sc, m;
      GetScaleMinK4(2 * c, b.scales, &sc, &m);
      const float d1 = d * float(sc), m1 = dmin * float(m);
      GetScaleMinK4(2 * c + 1, b.scales, &sc, &m);
      const float d2 = d * float(sc), m2 = dmin * float(m);
      for (int l = 0; l < 32; ++l) {
        dst[l] = d1 * float((q[l] & 15) + ((b.qh[l] & bit_lo) ? 16 : 0)) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        dst[32 + l] = d2 * float((q[l] >> 4) + ((b.qh[l] & bit_hi) ? 16 : 0)) - m2;
      }
      dst += 64;
    }
  }
}

void DequantizeQ6_K(const void* src, float* dst, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const auto b = LoadBlock<BlockQ6_K>(src, i);
    const float d = Fp16ToFp32(b.d);
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = b.ql + 64 * half;
      const uint8_t* qh = b.qh + 32 * half;
      const int8_t* sc = b.scales + 8 * half;
      float ds[8];  // effective scale per 16-value sub-block of this half
      for (int k = 0; k < 8; ++k) ds[k] = d * float(sc[k]);
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 15) | ((qh[l] >> 0) & 3) << 4) - 32;
        const int q2 = ((ql[l + 32] & 15) | ((qh[l] >> 2) & 3) << 4) - 32;
        const int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
        const int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
        dst[l] = ds[is] * float(q1);
        dst[l + 32] = ds[is + 2] * float(q2);
        dst[l + 64] = ds[is + 4] * float(q3);
        dst[l + 96] = ds[is + 6] * float(q4);
      }
      dst += 128;
    }
  }
}

}  // namespace brisk::quant_internal

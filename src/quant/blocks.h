// Byte layouts of the ggml quantized blocks (facts of the GGUF format, DESIGN §4). Field order
// matters: it is the order of the bytes in the file. fp16 scales are kept as raw uint16_t bits so
// the structs are trivially copyable and carry no floating-point conversion on load.
#pragma once

#include <cstdint>

namespace brisk {

inline constexpr int kQK = 32;     // values per block of the "legacy" types (Q4_0 ... Q8_0)
inline constexpr int kQK_K = 256;  // values per super-block of the K types

struct BlockQ8_0 {
  uint16_t d;  // fp16 scale
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_0) == 34);

struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];  // value i in the low nibble of qs[i], value i+16 in the high nibble
};
static_assert(sizeof(BlockQ4_0) == 18);

struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;  // fp16 offset (added)
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];  // fifth bits: bit i of the little-endian uint32 belongs to value i
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

// 16 sub-blocks of 16 values, 2-bit quants; scales[j] = 4-bit scale | 4-bit min << 4.
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];
  uint16_t d;
  uint16_t dmin;
};
static_assert(sizeof(BlockQ2_K) == 84);

// 16 sub-blocks of 16 values, 3-bit quants (2 low bits in qs, high bit in hmask, stored set when
// the value is NOT offset by -4), 16 6-bit scales (value - 32) packed in 12 bytes.
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);

// 8 sub-blocks of 32 values with 6-bit scale and 6-bit min packed in scales[12] (DESIGN §4).
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 144);

struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 176);

// 16 sub-blocks of 16 values, 6-bit quants (low 4 bits in ql, high 2 in qh), int8 scales, d last.
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210);

// IQ4_NL: 32 values, each a 4-bit index into the fixed non-linear codebook kIQ4NLValues, times d.
// Value i in the low nibble of qs[i], value i+16 in the high nibble (as Q4_0).
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockIQ4_NL) == 18);

// IQ4_XS: 8 sub-blocks of 32 values with the IQ4_NL codebook; sub-block j's 6-bit scale
// ls_j = (4 bits of scales_l[j / 2] at 4 * (j % 2)) | (bits 2j..2j+1 of scales_h) << 4, and its
// values are d * (ls_j - 32) * kIQ4NLValues[q]; qs[16 j + i] holds values 32 j + i (low nibble)
// and 32 j + 16 + i (high nibble).
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[kQK_K / 64];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockIQ4_XS) == 136);

// The IQ4_NL / IQ4_XS codebook (a fact of the format).
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// Sub-block j's 6-bit IQ4_XS scale (0..63; the multiplier is this minus 32).
inline int IQ4XSScale(const BlockIQ4_XS& b, int j) {
  return ((b.scales_l[j / 2] >> (4 * (j % 2))) & 15) | (((b.scales_h >> (2 * j)) & 3) << 4);
}

// Unpacks sub-block j's 6-bit scale and min from the 12-byte field shared by Q4_K and Q5_K:
// bytes 0-3 hold sc0-3 (+ high 2 bits of sc4-7), bytes 4-7 hold m0-3 (+ high bits of m4-7),
// bytes 8-11 hold the low nibbles of sc4-7 and m4-7.
inline void GetScaleMinK4(int j, const uint8_t* s, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = uint8_t((s[j + 4] & 15) | ((s[j - 4] >> 6) << 4));
    *m = uint8_t((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

}  // namespace brisk

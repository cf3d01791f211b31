// IEEE half and bfloat16 <-> float conversions (scalar, exact; SIMD versions live in kernels/).
#pragma once

#include <cstdint>
#include <cstring>

namespace brisk {

inline float Fp32FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t BitsFromFp32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Exact half -> float, including subnormals, inf and NaN.
inline float Fp16ToFp32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0x1f) return Fp32FromBits(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return Fp32FromBits(sign);
    // Subnormal: value = mant * 2^-24.
    float v = float(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return Fp32FromBits(sign | ((exp + 112) << 23) | (mant << 13));
}

// Float -> half with round-to-nearest-even (matches F16C vcvtps2ph with imm 0).
inline uint16_t Fp32ToFp16(float f) {
  uint32_t x = BitsFromFp32(f);
  const uint32_t sign = (x >> 16) & 0x8000;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) {  // inf or NaN
    return uint16_t(sign | 0x7c00 | (x > 0x7f800000u ? 0x200 : 0));
  }
  if (x >= 0x477ff000u) return uint16_t(sign | 0x7c00);  // rounds to >= 65520: overflow to inf
  if (x < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    // Add 0.5 (as float) so the FPU's round-to-nearest-even does the rounding for us.
    float v = Fp32FromBits(x) + 0.5f;
    return uint16_t(sign | (BitsFromFp32(v) - 0x3f000000u));
  }
  const uint32_t mant_odd = (x >> 13) & 1;
  x += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  return uint16_t(sign | (x >> 13));
}

inline float Bf16ToFp32(uint16_t h) { return Fp32FromBits(uint32_t(h) << 16); }

// Float -> bfloat16, round-to-nearest-even; NaN stays a quiet NaN.
inline uint16_t Fp32ToBf16(float f) {
  uint32_t x = BitsFromFp32(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

}  // namespace brisk

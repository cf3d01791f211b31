// The avx512 unpack of one 32-value block of a packed 16-row group (packed.h) into 8 registers
// of unsigned bytes (register o: values 4o..4o+3 of each row, in that row's lane) plus two
// per-row scale vectors, shared by the VNNI kernels (int_avx512.cc) and the AMX-BF16 prefill
// kernel (amx_bf16_avx512.cc). Included only by avx512 kernel files (see isa_kernels.h).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/layout.h"

namespace brisk::kern {
namespace {

using namespace layout;

struct Unpacked {
  __m512i w[8];
  __m512 s0, s1;
};

inline __m512 LoadH16(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline __m512i Load(const uint8_t* p) { return _mm512_loadu_si512(p); }
inline __m512i Lo4(__m512i v) { return _mm512_and_si512(v, _mm512_set1_epi8(15)); }
inline __m512i Hi4(__m512i v) {
  return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(15));
}
inline __m512 U8ToF(const uint8_t* p) {
  return _mm512_cvtepi32_ps(
      _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}
inline __m512 I8ToF(const uint8_t* p) {
  return _mm512_cvtepi32_ps(
      _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}

// Legacy nibbles: chunk k low -> operand k, high -> operand 4 + k.
inline void Nib4(const uint8_t* p, Unpacked* u) {
  for (int k = 0; k < 4; ++k) {
    const __m512i v = Load(p + 64 * k);
    u->w[k] = Lo4(v);
    u->w[4 + k] = Hi4(v);
  }
}
// IQ4_NL / IQ4_XS: index -> codebook value + 128 (kIQ4Lut), one shuffle per operand.
inline __m512i CodebookLut() {
  return _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4Lut)));
}
inline void Codebook4(const uint8_t* p, Unpacked* u) {
  const __m512i lut = CodebookLut();
  for (int k = 0; k < 4; ++k) {
    const __m512i v = Load(p + 64 * k);
    u->w[k] = _mm512_shuffle_epi8(lut, Lo4(v));
    u->w[4 + k] = _mm512_shuffle_epi8(lut, Hi4(v));
  }
}
// Where block b's legacy-layout nibble chunks start (IQ4 kinds).
template <int Kind>
inline const uint8_t* Iq4Chunks(const uint8_t* g, int64_t b) {
  if constexpr (Kind == 8)
    return g + b * kIQ4_NLStride;
  else
    return g + (b / 8) * kIQ4_XSStride + 256 * (b % 8);
}

// Fifth bits: one 64-bit lane mask per operand, bit (4 row + byte) -> add 16 to that byte.
inline void Fifth(const uint8_t* h, Unpacked* u) {
  const __m512i sixteen = _mm512_set1_epi8(16);
  for (int o = 0; o < 8; ++o) {
    uint64_t m;
    std::memcpy(&m, h + 8 * o, 8);
    u->w[o] = _mm512_mask_add_epi8(u->w[o], _cvtu64_mask64(m), u->w[o], sixteen);
  }
}

// Operand o of block b of a packed group, unpacked on its own (the operand-at-a-time form of
// Unpack, for GemvPairTile; same bytes; not Q6_K).
template <int Kind>
inline __m512i Operand(const uint8_t* g, int64_t b, int o) {
  if constexpr (Kind <= 3) {  // legacy nibbles: chunk o % 4, low (o < 4) or high nibbles
    const uint8_t* p = g + b * kBlockBytes[Kind];
    const __m512i v = Load(p + 64 * (o % 4));
    __m512i w = o < 4 ? Lo4(v) : Hi4(v);
    if constexpr (Kind == 2 || Kind == 3) {
      uint64_t m;
      std::memcpy(&m, p + (Kind == 2 ? kQ5_0H : kQ5_1H) + 8 * o, 8);
      w = _mm512_mask_add_epi8(w, _cvtu64_mask64(m), w, _mm512_set1_epi8(16));
    }
    return w;
  } else if constexpr (Kind == 4) {
    return Load(g + b * kQ8_0Stride + 64 * o);
  } else if constexpr (Kind == 8 || Kind == 9) {
    const __m512i v = Load(Iq4Chunks<Kind>(g, b) + 64 * (o % 4));
    return _mm512_shuffle_epi8(CodebookLut(), o < 4 ? Lo4(v) : Hi4(v));
  } else {
    static_assert(Kind == 5 || Kind == 6, "Q6_K has no GemvPair (slower: see Avx512Kernels)");
    constexpr bool q5 = Kind == 6;
    const uint8_t* sb = g + (b / 8) * (q5 ? kQ5_KStride : kQ4_KStride);
    const int j = int(b % 8);
    const __m512i v = Load(sb + (j / 2) * 512 + 64 * o);
    __m512i w = (j & 1) ? Hi4(v) : Lo4(v);
    if constexpr (q5) {
      uint64_t m;
      std::memcpy(&m, sb + kQ5_KH + 64 * j + 8 * o, 8);
      w = _mm512_mask_add_epi8(w, _cvtu64_mask64(m), w, _mm512_set1_epi8(16));
    }
    return w;
  }
}

// Block b's per-row scale vectors as Unpack computes them (s1: unused for class 0; no Q6_K).
template <int Kind>
inline void Scales(const uint8_t* g, int64_t b, __m512* s0, __m512* s1) {
  if constexpr (Kind == 0 || Kind == 2 || Kind == 4 || Kind == 8) {
    constexpr size_t d = Kind == 0 ? kQ4_0D : Kind == 2 ? kQ5_0D : Kind == 4 ? kQ8_0D : kIQ4_NLD;
    *s0 = LoadH16(g + b * kBlockBytes[Kind] + d);
  } else if constexpr (Kind == 9) {
    const uint8_t* sb = g + (b / 8) * kIQ4_XSStride;
    *s0 = _mm512_mul_ps(LoadH16(sb + kIQ4_XSD), I8ToF(sb + kIQ4_XSSc + 16 * (b % 8)));
  } else if constexpr (Kind == 1 || Kind == 3) {
    const uint8_t* p = g + b * kBlockBytes[Kind];
    *s0 = LoadH16(p + (Kind == 1 ? kQ4_1D : kQ5_1D));
    *s1 = LoadH16(p + (Kind == 1 ? kQ4_1M : kQ5_1M));
  } else if constexpr (Kind == 5 || Kind == 6) {
    constexpr bool q5 = Kind == 6;
    const uint8_t* sb = g + (b / 8) * (q5 ? kQ5_KStride : kQ4_KStride);
    const int j = int(b % 8);
    const __m512 d = LoadH16(sb + (q5 ? kQ5_KD : kQ4_KD));
    const __m512 dmin = LoadH16(sb + (q5 ? kQ5_KDmin : kQ4_KDmin));
    *s0 = _mm512_mul_ps(d, U8ToF(sb + (q5 ? kQ5_KSc : kQ4_KSc) + 16 * j));
    *s1 = _mm512_xor_ps(_mm512_mul_ps(dmin, U8ToF(sb + (q5 ? kQ5_KM : kQ4_KM) + 16 * j)),
                        _mm512_set1_ps(-0.0f));
  }
}

template <int Kind>
inline void Unpack(const uint8_t* g, int64_t b, Unpacked* u) {
  if constexpr (Kind != 7) Scales<Kind>(g, b, &u->s0, &u->s1);
  if constexpr (Kind == 0) {  // Q4_0
    const uint8_t* p = g + b * kQ4_0Stride;
    Nib4(p, u);
  } else if constexpr (Kind == 1) {  // Q4_1
    const uint8_t* p = g + b * kQ4_1Stride;
    Nib4(p, u);
  } else if constexpr (Kind == 2) {  // Q5_0
    const uint8_t* p = g + b * kQ5_0Stride;
    Nib4(p, u);
    Fifth(p + kQ5_0H, u);
  } else if constexpr (Kind == 3) {  // Q5_1
    const uint8_t* p = g + b * kQ5_1Stride;
    Nib4(p, u);
    Fifth(p + kQ5_1H, u);
  } else if constexpr (Kind == 4) {  // Q8_0
    const uint8_t* p = g + b * kQ8_0Stride;
    for (int o = 0; o < 8; ++o) u->w[o] = Load(p + 64 * o);
  } else if constexpr (Kind == 8 || Kind == 9) {  // IQ4_NL, IQ4_XS
    Codebook4(Iq4Chunks<Kind>(g, b), u);
  } else if constexpr (Kind == 5 || Kind == 6) {  // Q4_K, Q5_K
    constexpr bool q5 = Kind == 6;
    const uint8_t* sb = g + (b / 8) * (q5 ? kQ5_KStride : kQ4_KStride);
    const int j = int(b % 8);
    const uint8_t* nib = sb + (j / 2) * 512;
    if (j & 1) {
      for (int k = 0; k < 8; ++k) u->w[k] = Hi4(Load(nib + 64 * k));
    } else {
      for (int k = 0; k < 8; ++k) u->w[k] = Lo4(Load(nib + 64 * k));
    }
    if constexpr (q5) Fifth(sb + kQ5_KH + 64 * j, u);
  } else {  // Q6_K
    const uint8_t* sb = g + (b / 8) * kQ6_KStride;
    const int j = int(b % 8), n = j / 4, p = j % 4;
    const __m512i m30 = _mm512_set1_epi8(0x30);
    for (int o = 0; o < 8; ++o) {
      const __m512i ql = Load(sb + (n * 16 + o + 8 * (p & 1)) * 64);
      const __m512i qh = Load(sb + kQ6_KQh + (n * 8 + o) * 64);
      // Low nibble source; its bits 4-7 are discarded by the bit-select below.
      const __m512i lo = (p >> 1) ? _mm512_srli_epi16(ql, 4) : ql;
      __m512i hi;
      switch (p) {  // move bits 2p..2p+1 of each byte to bits 4..5
        case 0:
          hi = _mm512_slli_epi16(qh, 4);
          break;
        case 1:
          hi = _mm512_slli_epi16(qh, 2);
          break;
        case 2:
          hi = qh;
          break;
        default:
          hi = _mm512_srli_epi16(qh, 2);
          break;
      }
      // (lo & 0x0F) | (hi & 0x30): select bits 0-3 from lo (0xE4 = C ? A : B, C = 0x0F).
      u->w[o] =
          _mm512_ternarylogic_epi32(lo, _mm512_and_si512(hi, m30), _mm512_set1_epi8(15), 0xE4);
    }
    const __m512 d = LoadH16(sb + kQ6_KD);
    u->s0 = _mm512_mul_ps(d, I8ToF(sb + kQ6_KSc + 16 * (2 * j)));
    u->s1 = _mm512_mul_ps(d, I8ToF(sb + kQ6_KSc + 16 * (2 * j + 1)));
  }
}

inline void PrefetchLines(const uint8_t* p, size_t bytes) {
  for (size_t l = 0; l < bytes; l += 64)
    _mm_prefetch(reinterpret_cast<const char*>(p + l), _MM_HINT_T0);
}

constexpr int ClassOf(int kind) {  // 0 offset, 1 min, 2 Q6_K halves (scalar_kernels.cc)
  return kind == 7 ? 2 : (kind == 1 || kind == 3 || kind == 5 || kind == 6) ? 1 : 0;
}
}  // namespace
}  // namespace brisk::kern

// AVX2 integer matmul kernels (compiled with -mavx2 -mfma -mf16c). Same packed layout and
// formulas as the AVX-512 kernels, each 16-row group split into two 8-row halves (ymm). Without
// VNNI the block dot is vpmaddubsw (u8 x s8 -> s16 pairs) + vpmaddwd against ones; weights of at
// most 6 bits keep every 16-bit partial far from saturation, so the integer sums stay exact.
// Q8_0 (8-bit) uses the sign trick |w| x sign(a, w) instead of the +128 offset.
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/isa_kernels.h"

namespace brisk::kern {
namespace {

using namespace layout;

struct Unpacked {
  __m256i w[8][2];
  __m256 s0[2], s1[2];
};

inline __m256i Load(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
inline __m256i Lo4(__m256i v) { return _mm256_and_si256(v, _mm256_set1_epi8(15)); }
inline __m256i Hi4(__m256i v) {
  return _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(15));
}
inline void LoadH16(const uint8_t* p, __m256 out[2]) {
  out[0] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  out[1] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)));
}
inline __m256 U8ToF(const uint8_t* p) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
inline __m256 I8ToF(const uint8_t* p) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

inline void Nib4(const uint8_t* p, Unpacked* u) {
  for (int k = 0; k < 4; ++k)
    for (int h = 0; h < 2; ++h) {
      const __m256i v = Load(p + 64 * k + 32 * h);
      u->w[k][h] = Lo4(v);
      u->w[4 + k][h] = Hi4(v);
    }
}
// 32 mask bits -> 32 bytes of 0x10 / 0x00, byte i from bit i.
inline __m256i BitsToBytes16(uint32_t m) {
  const __m256i shuf = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2,
                                        2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m256i bits = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
  const __m256i v =
      _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32(int32_t(m)), shuf), bits);
  return _mm256_and_si256(_mm256_cmpeq_epi8(v, bits), _mm256_set1_epi8(16));
}
inline void Fifth(const uint8_t* hm, Unpacked* u) {
  for (int o = 0; o < 8; ++o) {
    uint64_t m;
    std::memcpy(&m, hm + 8 * o, 8);
    u->w[o][0] = _mm256_or_si256(u->w[o][0], BitsToBytes16(uint32_t(m)));
    u->w[o][1] = _mm256_or_si256(u->w[o][1], BitsToBytes16(uint32_t(m >> 32)));
  }
}

template <int Kind>
inline void Unpack(const uint8_t* g, int64_t b, Unpacked* u) {
  if constexpr (Kind == 0) {
    const uint8_t* p = g + b * kQ4_0Stride;
    Nib4(p, u);
    LoadH16(p + kQ4_0D, u->s0);
  } else if constexpr (Kind == 1) {
    const uint8_t* p = g + b * kQ4_1Stride;
    Nib4(p, u);
    LoadH16(p + kQ4_1D, u->s0);
    LoadH16(p + kQ4_1M, u->s1);
  } else if constexpr (Kind == 2) {
    const uint8_t* p = g + b * kQ5_0Stride;
    Nib4(p, u);
    Fifth(p + kQ5_0H, u);
    LoadH16(p + kQ5_0D, u->s0);
  } else if constexpr (Kind == 3) {
    const uint8_t* p = g + b * kQ5_1Stride;
    Nib4(p, u);
    Fifth(p + kQ5_1H, u);
    LoadH16(p + kQ5_1D, u->s0);
    LoadH16(p + kQ5_1M, u->s1);
  } else if constexpr (Kind == 4) {
    const uint8_t* p = g + b * kQ8_0Stride;
    for (int o = 0; o < 8; ++o)
      for (int h = 0; h < 2; ++h) u->w[o][h] = Load(p + 64 * o + 32 * h);
    LoadH16(p + kQ8_0D, u->s0);
  } else if constexpr (Kind == 5 || Kind == 6) {
    constexpr bool q5 = Kind == 6;
    const uint8_t* sb = g + (b / 8) * (q5 ? kQ5_KStride : kQ4_KStride);
    const int j = int(b % 8);
    const uint8_t* nib = sb + (j / 2) * 512;
    for (int k = 0; k < 8; ++k)
      for (int h = 0; h < 2; ++h) {
        const __m256i v = Load(nib + 64 * k + 32 * h);
        u->w[k][h] = (j & 1) ? Hi4(v) : Lo4(v);
      }
    if constexpr (q5) Fifth(sb + kQ5_KH + 64 * j, u);
    __m256 d[2], dmin[2];
    LoadH16(sb + (q5 ? kQ5_KD : kQ4_KD), d);
    LoadH16(sb + (q5 ? kQ5_KDmin : kQ4_KDmin), dmin);
    const uint8_t* sc = sb + (q5 ? kQ5_KSc : kQ4_KSc) + 16 * j;
    const uint8_t* mn = sb + (q5 ? kQ5_KM : kQ4_KM) + 16 * j;
    for (int h = 0; h < 2; ++h) {
      u->s0[h] = _mm256_mul_ps(d[h], U8ToF(sc + 8 * h));
      u->s1[h] = _mm256_xor_ps(_mm256_mul_ps(dmin[h], U8ToF(mn + 8 * h)), _mm256_set1_ps(-0.0f));
    }
  } else {
    const uint8_t* sb = g + (b / 8) * kQ6_KStride;
    const int j = int(b % 8), n = j / 4, p = j % 4;
    const __m256i m30 = _mm256_set1_epi8(0x30);
    for (int o = 0; o < 8; ++o)
      for (int h = 0; h < 2; ++h) {
        const __m256i ql = Load(sb + (n * 16 + o + 8 * (p & 1)) * 64 + 32 * h);
        const __m256i qh = Load(sb + kQ6_KQh + (n * 8 + o) * 64 + 32 * h);
        const __m256i lo = (p >> 1) ? Hi4(ql) : Lo4(ql);
        __m256i hi;
        switch (p) {
          case 0:
            hi = _mm256_slli_epi16(qh, 4);
            break;
          case 1:
            hi = _mm256_slli_epi16(qh, 2);
            break;
          case 2:
            hi = qh;
            break;
          default:
            hi = _mm256_srli_epi16(qh, 2);
            break;
        }
        u->w[o][h] = _mm256_or_si256(lo, _mm256_and_si256(hi, m30));
      }
    __m256 d[2];
    LoadH16(sb + kQ6_KD, d);
    for (int h = 0; h < 2; ++h) {
      u->s0[h] = _mm256_mul_ps(d[h], I8ToF(sb + kQ6_KSc + 16 * (2 * j) + 8 * h));
      u->s1[h] = _mm256_mul_ps(d[h], I8ToF(sb + kQ6_KSc + 16 * (2 * j + 1) + 8 * h));
    }
  }
}

constexpr int ClassOf(int kind) {
  return kind == 7 ? 2 : (kind == 1 || kind == 3 || kind == 5 || kind == 6) ? 1 : 0;
}
template <int Kind>
inline int32_t NegOffset(const ActMeta& m) {
  return Kind == 0 ? m.neg8 : Kind == 2 ? m.neg16 : 0;  // Q8_0: sign trick, no offset
}

inline __m256i Bc(const int8_t* x, int o) {
  int32_t v;
  std::memcpy(&v, x + 4 * o, 4);
  return _mm256_set1_epi32(v);
}

// Exact sum over operands [o0, o0 + 4) of one 8-row half; u <= 63 so s16 pair sums of two
// operands stay below 2 * 16002 < 32767.
template <int Kind>
inline __m256i Dot4(const Unpacked& u, int h, const int8_t* x, int o0) {
  const __m256i ones = _mm256_set1_epi16(1);
  if constexpr (Kind == 4) {
    __m256i acc = _mm256_setzero_si256();
    for (int o = o0; o < o0 + 4; ++o) {
      const __m256i w = _mm256_xor_si256(u.w[o][h], _mm256_set1_epi8(int8_t(0x80)));
      const __m256i p = _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(Bc(x, o), w));
      acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, ones));
    }
    return acc;
  } else {
    const __m256i p0 = _mm256_add_epi16(_mm256_maddubs_epi16(u.w[o0][h], Bc(x, o0)),
                                        _mm256_maddubs_epi16(u.w[o0 + 1][h], Bc(x, o0 + 1)));
    const __m256i p1 = _mm256_add_epi16(_mm256_maddubs_epi16(u.w[o0 + 2][h], Bc(x, o0 + 2)),
                                        _mm256_maddubs_epi16(u.w[o0 + 3][h], Bc(x, o0 + 3)));
    return _mm256_add_epi32(_mm256_madd_epi16(p0, ones), _mm256_madd_epi16(p1, ones));
  }
}

template <int Kind>
inline void Dot(const Unpacked& u, const int8_t* x, const ActMeta& m, __m256 f[2]) {
  constexpr int kClass = ClassOf(Kind);
  const __m256 da = _mm256_set1_ps(m.d);
  for (int h = 0; h < 2; ++h) {
    const __m256i i0 = Dot4<Kind>(u, h, x, 0), i1 = Dot4<Kind>(u, h, x, 4);
    if constexpr (kClass == 2) {
      const __m256i a0 = _mm256_add_epi32(i0, _mm256_set1_epi32(m.neg32h[0]));
      const __m256i a1 = _mm256_add_epi32(i1, _mm256_set1_epi32(m.neg32h[1]));
      f[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(a0), _mm256_mul_ps(u.s0[h], da), f[h]);
      f[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(a1), _mm256_mul_ps(u.s1[h], da), f[h]);
    } else {
      const __m256i acc =
          _mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_set1_epi32(NegOffset<Kind>(m)));
      f[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), _mm256_mul_ps(u.s0[h], da), f[h]);
      if constexpr (kClass == 1) f[h] = _mm256_fmadd_ps(u.s1[h], _mm256_set1_ps(m.dsum), f[h]);
    }
  }
}

inline void Store(const IntArgs& a, int t, const __m256 f[2]) {
  float* y = a.y + t * a.ldy;
  if (a.valid_rows == 16) {
    _mm256_storeu_ps(y, f[0]);
    _mm256_storeu_ps(y + 8, f[1]);
    return;
  }
  alignas(32) float tmp[16];
  _mm256_store_ps(tmp, f[0]);
  _mm256_store_ps(tmp + 8, f[1]);
  for (int r = 0; r < a.valid_rows; ++r) y[r] = tmp[r];
}

inline void PrefetchLines(const uint8_t* p, size_t bytes) {
  for (size_t l = 0; l < bytes; l += 64)
    _mm_prefetch(reinterpret_cast<const char*>(p + l), _MM_HINT_T0);
}
template <int Kind>
inline void PrefetchBlock(const uint8_t* group, int64_t b) {
  PrefetchLines(group + b * kBlockBytes[Kind] + kPrefetchBytes, kBlockBytes[Kind]);
}

template <int Kind, int NT, bool kScratch>
void Tile(const IntArgs& a, int t0, const uint8_t* next = nullptr) {
  const int64_t nb = a.cols / 32;
  __m256 f[NT][2];
  for (int t = 0; t < NT; ++t) f[t][0] = f[t][1] = _mm256_setzero_ps();
  const int8_t* x0 = a.aq + t0 * a.aq_stride;
  const ActMeta* m0 = a.am + t0 * a.am_stride;
  for (int64_t b = 0; b < nb; ++b) {
    Unpacked u;
    if constexpr (kScratch) {
      // The same block of the group computed next (IntArgs::next_group; first token tile only).
      if (next) PrefetchLines(next + b * kBlockBytes[Kind], kBlockBytes[Kind]);
      const uint8_t* rec = a.scratch + b * kUnpackedBlockBytes;
      for (int o = 0; o < 8; ++o)
        for (int h = 0; h < 2; ++h) u.w[o][h] = Load(rec + 64 * o + 32 * h);
      for (int h = 0; h < 2; ++h) {
        u.s0[h] = _mm256_load_ps(reinterpret_cast<const float*>(rec + kUnpackedS0) + 8 * h);
        u.s1[h] = _mm256_load_ps(reinterpret_cast<const float*>(rec + kUnpackedS1) + 8 * h);
      }
    } else {
      PrefetchBlock<Kind>(a.group, b);
      Unpack<Kind>(a.group, b, &u);
    }
    for (int t = 0; t < NT; ++t)
      Dot<Kind>(u, x0 + t * a.aq_stride + 32 * b, m0[t * a.am_stride + b], f[t]);
  }
  for (int t = 0; t < NT; ++t) Store(a, t0 + t, f[t]);
}

// next: prefetched during the first tile (see IntArgs::next_group), if any.
template <int Kind, int Max, bool kScratch>
void Tiles(const IntArgs& a, const uint8_t* next = nullptr) {
  int t = 0;
  for (; t + Max <= a.n_tokens; t += Max, next = nullptr) Tile<Kind, Max, kScratch>(a, t, next);
  switch (a.n_tokens - t) {
    case 1:
      Tile<Kind, 1, kScratch>(a, t, next);
      break;
    case 2:
      Tile<Kind, 2, kScratch>(a, t, next);
      break;
    case 3:
      if constexpr (Max > 3) Tile<Kind, 3, kScratch>(a, t, next);
      break;
    default:
      break;
  }
}

template <int Kind>
void Gemv(const IntArgs& a) {
  Tiles<Kind, 2, false>(a);
}

template <int Kind>
void Gemm(const IntArgs& a) {
  const int64_t nb = a.cols / 32;
  for (int64_t b = 0; b < nb; ++b) {
    Unpacked u;
    PrefetchBlock<Kind>(a.group, b);
    Unpack<Kind>(a.group, b, &u);
    uint8_t* rec = a.scratch + b * kUnpackedBlockBytes;
    for (int o = 0; o < 8; ++o)
      for (int h = 0; h < 2; ++h)
        _mm256_store_si256(reinterpret_cast<__m256i*>(rec + 64 * o + 32 * h), u.w[o][h]);
    for (int h = 0; h < 2; ++h) {
      _mm256_store_ps(reinterpret_cast<float*>(rec + kUnpackedS0) + 8 * h, u.s0[h]);
      _mm256_store_ps(reinterpret_cast<float*>(rec + kUnpackedS1) + 8 * h,
                      ClassOf(Kind) ? u.s1[h] : _mm256_setzero_ps());
    }
  }
  Tiles<Kind, 4, true>(a, a.next_group);
}

}  // namespace

void FillAvx2Misc(IsaKernels* k);

const IsaKernels& Avx2Kernels() {
  static const IsaKernels k = [] {
    IsaKernels t{};
    t.gemv[0] = Gemv<0>, t.gemv[1] = Gemv<1>, t.gemv[2] = Gemv<2>, t.gemv[3] = Gemv<3>;
    t.gemv[4] = Gemv<4>, t.gemv[5] = Gemv<5>, t.gemv[6] = Gemv<6>, t.gemv[7] = Gemv<7>;
    t.gemm[0] = Gemm<0>, t.gemm[1] = Gemm<1>, t.gemm[2] = Gemm<2>, t.gemm[3] = Gemm<3>;
    t.gemm[4] = Gemm<4>, t.gemm[5] = Gemm<5>, t.gemm[6] = Gemm<6>, t.gemm[7] = Gemm<7>;
    FillAvx2Misc(&t);
    return t;
  }();
  return k;
}

}  // namespace brisk::kern

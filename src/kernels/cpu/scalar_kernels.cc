// Scalar kernels: the canonical formulas every SIMD kernel reproduces bit for bit (tests compare
// them), and the fallback on CPUs without AVX2. Deliberately plain: one lane at a time.
//
// Per output (row r, token t), starting from f = 0.0f, for each 32-value block b in order:
//   kind A (Q4_0 Q5_0 Q8_0 IQ4_NL IQ4_XS): i = sum_j u_j * a_j + neg_off(a)   (exact int32)
//                            f = fma(float(i), s0 * d_a, f)
//   kind B (Q4_1 Q5_1 Q4_K Q5_K): i = sum_j u_j * a_j
//                            f = fma(float(i), s0 * d_a, f); f = fma(s1, dsum_a, f)
//   kind C (Q6_K, per-16 scales): i_h = sum over half h + neg32h[h](a)
//                            f = fma(float(i_0), s0 * d_a, f); f = fma(float(i_1), s1 * d_a, f)
// with u the unsigned stored weights and s0/s1 the per-row block scales of UnpackBlock below.
// Float weights: f = fma(w_i, x_i, f) over columns in order.
#include <cmath>
#include <cstring>

#include "kernels/cpu/isa_kernels.h"
#include "util/fp16.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace brisk::kern {
namespace {

using namespace layout;

// ---- activations ----

void QuantizeBlock(const float* x, int8_t* qs, ActMeta* m) {
  float amax = 0.0f;
  for (int i = 0; i < kActBlock; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  int sum = 0, h0 = 0;
  for (int i = 0; i < kActBlock; ++i) {
    int q = int(std::nearbyint(x[i] * id));
    q = q > 127 ? 127 : (q < -127 ? -127 : q);
    qs[i] = int8_t(q);
    sum += q;
    if (i < 16) h0 += q;
  }
  FillActMeta(d, sum, h0, m);
}

void QuantizeRow(const float* x, int64_t cols, int8_t* qs, ActMeta* meta) {
  for (int64_t b = 0; b < cols / kActBlock; ++b)
    QuantizeBlock(x + b * kActBlock, qs + b * kActBlock, meta + b);
}

float SumSquares(const float* x, int64_t cols) {
  float acc[16] = {};
  for (int64_t i = 0; i < cols; i += 16)
    for (int k = 0; k < 16; ++k) acc[k] = acc[k] + x[i + k] * x[i + k];
  for (int w = 8; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] = acc[k] + acc[k + w];
  return acc[0];
}

void NormQuantizeRow(const float* x, float scale, const float* w, int64_t cols, float* xn,
                     int8_t* qs, ActMeta* meta) {
  for (int64_t b = 0; b < cols / kActBlock; ++b) {
    float v[kActBlock];
    for (int i = 0; i < kActBlock; ++i)
      v[i] = (x[b * kActBlock + i] * scale) * w[b * kActBlock + i];
    if (xn) std::memcpy(xn + b * kActBlock, v, sizeof v);
    QuantizeBlock(v, qs + b * kActBlock, meta + b);
  }
}

// ---- integer weights ----

struct Block {
  uint8_t u[8][16][4];  // operand o (activation bytes 4o..4o+3), row lane, byte
  float s0[16], s1[16];
};

float H(const uint8_t* p, int r) {
  uint16_t h;
  std::memcpy(&h, p + 2 * r, 2);
  return Fp16ToFp32(h);
}

// 4-bit chunks: nib chunk k low nibbles -> operand lo_op + k, high nibbles -> hi_op + k.
void Nibbles(const uint8_t* nib, int n_chunks, int lo_op, int hi_op, bool take_high, Block* o) {
  for (int k = 0; k < n_chunks; ++k)
    for (int r = 0; r < 16; ++r)
      for (int j = 0; j < 4; ++j) {
        const uint8_t v = nib[k * 64 + r * 4 + j];
        if (lo_op >= 0) o->u[lo_op + k][r][j] = v & 15;
        if (hi_op >= 0) o->u[hi_op + k][r][j] = v >> 4;
        if (take_high) o->u[k][r][j] = v >> 4;
      }
}

void FifthBits(const uint8_t* hmask, Block* o) {
  for (int op = 0; op < 8; ++op) {
    uint64_t m;
    std::memcpy(&m, hmask + 8 * op, 8);
    for (int r = 0; r < 16; ++r)
      for (int j = 0; j < 4; ++j)
        if ((m >> (4 * r + j)) & 1) o->u[op][r][j] |= 16;
  }
}

template <int Kind>
void UnpackBlock(const uint8_t* g, int64_t b, Block* o);

template <>
void UnpackBlock<0>(const uint8_t* g, int64_t b, Block* o) {  // Q4_0
  const uint8_t* p = g + b * kQ4_0Stride;
  Nibbles(p, 4, 0, 4, false, o);
  for (int r = 0; r < 16; ++r) o->s0[r] = H(p + kQ4_0D, r);
}
template <>
void UnpackBlock<1>(const uint8_t* g, int64_t b, Block* o) {  // Q4_1
  const uint8_t* p = g + b * kQ4_1Stride;
  Nibbles(p, 4, 0, 4, false, o);
  for (int r = 0; r < 16; ++r) o->s0[r] = H(p + kQ4_1D, r), o->s1[r] = H(p + kQ4_1M, r);
}
template <>
void UnpackBlock<2>(const uint8_t* g, int64_t b, Block* o) {  // Q5_0
  const uint8_t* p = g + b * kQ5_0Stride;
  Nibbles(p, 4, 0, 4, false, o);
  FifthBits(p + kQ5_0H, o);
  for (int r = 0; r < 16; ++r) o->s0[r] = H(p + kQ5_0D, r);
}
template <>
void UnpackBlock<3>(const uint8_t* g, int64_t b, Block* o) {  // Q5_1
  const uint8_t* p = g + b * kQ5_1Stride;
  Nibbles(p, 4, 0, 4, false, o);
  FifthBits(p + kQ5_1H, o);
  for (int r = 0; r < 16; ++r) o->s0[r] = H(p + kQ5_1D, r), o->s1[r] = H(p + kQ5_1M, r);
}
template <>
void UnpackBlock<4>(const uint8_t* g, int64_t b, Block* o) {  // Q8_0
  const uint8_t* p = g + b * kQ8_0Stride;
  std::memcpy(o->u, p, 512);
  for (int r = 0; r < 16; ++r) o->s0[r] = H(p + kQ8_0D, r);
}

// Q4_K / Q5_K: block b = sub-block j of super-block sb; scale d*sc_j, min term -(dmin*m_j).
void KScales(const uint8_t* sb, size_t sc_off, size_t m_off, size_t d_off, size_t dmin_off, int j,
             Block* o) {
  for (int r = 0; r < 16; ++r) {
    o->s0[r] = H(sb + d_off, r) * float(sb[sc_off + 16 * j + r]);
    o->s1[r] = -(H(sb + dmin_off, r) * float(sb[m_off + 16 * j + r]));
  }
}
// Sub-block j's quants of a Q4_K / Q5_K super-block: even sub-blocks are the low nibbles of a
// 512-byte chunk, odd ones the high nibbles.
inline void KNibbles(const uint8_t* sb, int j, Block* o) {
  const uint8_t* nib = sb + (j / 2) * 512;
  if (j % 2 == 0)
    Nibbles(nib, 8, 0, -1, false, o);
  else
    Nibbles(nib, 8, -1, -1, true, o);
}
template <>
void UnpackBlock<5>(const uint8_t* g, int64_t b, Block* o) {  // Q4_K
  const uint8_t* sb = g + (b / 8) * kQ4_KStride;
  const int j = int(b % 8);
  KNibbles(sb, j, o);
  KScales(sb, kQ4_KSc, kQ4_KM, kQ4_KD, kQ4_KDmin, j, o);
}
template <>
void UnpackBlock<6>(const uint8_t* g, int64_t b, Block* o) {  // Q5_K
  const uint8_t* sb = g + (b / 8) * kQ5_KStride;
  const int j = int(b % 8);
  KNibbles(sb, j, o);
  FifthBits(sb + kQ5_KH + 64 * j, o);
  KScales(sb, kQ5_KSc, kQ5_KM, kQ5_KD, kQ5_KDmin, j, o);
}
template <>
void UnpackBlock<7>(const uint8_t* g, int64_t b, Block* o) {  // Q6_K
  const uint8_t* sb = g + (b / 8) * kQ6_KStride;
  const int j = int(b % 8), n = j / 4, p = j % 4;
  for (int op = 0; op < 8; ++op) {
    const uint8_t* ql = sb + (n * 16 + op + 8 * (p & 1)) * 64;
    const uint8_t* qh = sb + kQ6_KQh + (n * 8 + op) * 64;
    for (int r = 0; r < 16; ++r)
      for (int jj = 0; jj < 4; ++jj) {
        const int lo = (p >> 1) ? ql[4 * r + jj] >> 4 : ql[4 * r + jj] & 15;
        const int hi = (qh[4 * r + jj] >> (2 * p)) & 3;
        o->u[op][r][jj] = uint8_t(lo | hi << 4);
      }
  }
  for (int r = 0; r < 16; ++r) {
    const float d = H(sb + kQ6_KD, r);
    o->s0[r] = d * float(int8_t(sb[kQ6_KSc + 16 * (2 * j) + r]));
    o->s1[r] = d * float(int8_t(sb[kQ6_KSc + 16 * (2 * j + 1) + r]));
  }
}

// IQ4_NL / IQ4_XS: the nibbles are codebook indices; the operand is the codebook value + 128.
void Codebook(Block* o) {
  for (auto& op : o->u)
    for (auto& row : op)
      for (uint8_t& v : row) v = kIQ4Lut[v];
}
template <>
void UnpackBlock<8>(const uint8_t* g, int64_t b, Block* o) {  // IQ4_NL
  const uint8_t* p = g + b * kIQ4_NLStride;
  Nibbles(p, 4, 0, 4, false, o);
  Codebook(o);
  for (int r = 0; r < 16; ++r) o->s0[r] = H(p + kIQ4_NLD, r);
}
template <>
void UnpackBlock<9>(const uint8_t* g, int64_t b, Block* o) {  // IQ4_XS
  const uint8_t* sb = g + (b / 8) * kIQ4_XSStride;
  const int j = int(b % 8);
  Nibbles(sb + 256 * j, 4, 0, 4, false, o);
  Codebook(o);
  for (int r = 0; r < 16; ++r)
    o->s0[r] = H(sb + kIQ4_XSD, r) * float(int8_t(sb[kIQ4_XSSc + 16 * j + r]));
}

constexpr int KindClass(int kind) {  // 0 = A (offset), 1 = B (min), 2 = C (Q6_K halves)
  return kind == 7 ? 2 : (kind == 1 || kind == 3 || kind == 5 || kind == 6) ? 1 : 0;
}
int32_t NegOffset(int kind, const ActMeta& m) {
  return kind == 0 ? m.neg8 : kind == 2 ? m.neg16 : (kind == 4 || kind >= 8) ? m.neg128 : 0;
}

template <int Kind>
void IntKernel(const IntArgs& a) {
  constexpr int kClass = KindClass(Kind);
  const int64_t nb = a.cols / kActBlock;
  float f[16];
  for (int t = 0; t < a.n_tokens; ++t) {
    for (float& v : f) v = 0.0f;
    const int8_t* aq = a.aq + t * a.aq_stride;
    const ActMeta* am = a.am + t * a.am_stride;
    for (int64_t b = 0; b < nb; ++b) {
      Block blk;
      UnpackBlock<Kind>(a.group, b, &blk);
      const int8_t* x = aq + b * kActBlock;
      const ActMeta& m = am[b];
      for (int r = 0; r < 16; ++r) {
        int32_t i0 = 0, i1 = 0;
        for (int op = 0; op < 8; ++op)
          for (int j = 0; j < 4; ++j)
            (op < 4 ? i0 : i1) += int32_t(blk.u[op][r][j]) * x[4 * op + j];
        if (kClass == 2) {
          i0 += m.neg32h[0];
          i1 += m.neg32h[1];
          f[r] = std::fma(float(i0), blk.s0[r] * m.d, f[r]);
          f[r] = std::fma(float(i1), blk.s1[r] * m.d, f[r]);
        } else {
          const int32_t i = i0 + i1 + NegOffset(Kind, m);
          f[r] = std::fma(float(i), blk.s0[r] * m.d, f[r]);
          if (kClass == 1) f[r] = std::fma(blk.s1[r], m.dsum, f[r]);
        }
      }
    }
    for (int r = 0; r < a.valid_rows; ++r) a.y[t * a.ldy + r] = f[r];
  }
}

// ---- float weights ----

template <int Kind>  // 0 F32, 1 F16, 2 BF16
float LoadW(const uint8_t* p) {
  if constexpr (Kind == 0) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  } else {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return Kind == 1 ? Fp16ToFp32(h) : Bf16ToFp32(h);
  }
}

template <int Kind>
void FloatKernel(const FloatArgs& a) {
  constexpr size_t kElem = Kind == 0 ? 4 : 2;
  for (int g = 0; g < a.n_groups; ++g) {
    const uint8_t* gp = a.groups + g * a.group_bytes;
    for (int t = 0; t < a.n_tokens; ++t) {
      const float* x = a.x + t * a.ldx;
      for (int r = 0; r < 16; ++r) {
        const int64_t row = int64_t(g) * 16 + r;
        if (row >= a.valid_rows) break;
        float f = 0.0f;
        for (int64_t i = 0; i < a.cols; ++i)
          f = std::fma(LoadW<Kind>(gp + (i * 16 + r) * kElem), x[i], f);
        a.y[t * a.ldy + row] = f;
      }
    }
  }
}

#include "kernels/cpu/elementwise_impl.inc"

}  // namespace

const IsaKernels& ScalarKernels() {
  static const IsaKernels k = {
      {IntKernel<0>, IntKernel<1>, IntKernel<2>, IntKernel<3>, IntKernel<4>, IntKernel<5>,
       IntKernel<6>, IntKernel<7>, IntKernel<8>, IntKernel<9>},
      {IntKernel<0>, IntKernel<1>, IntKernel<2>, IntKernel<3>, IntKernel<4>, IntKernel<5>,
       IntKernel<6>, IntKernel<7>, IntKernel<8>, IntKernel<9>},
      {FloatKernel<0>, FloatKernel<1>, FloatKernel<2>},
      QuantizeRow,
      SumSquares,
      NormQuantizeRow,
      SiluMulImpl,
  };
  return k;
}

}  // namespace brisk::kern

// Repacking of GGUF rows into 16-row groups (layout in packed.h). Runs once at load; the work is
// byte copies plus a nibble/bit transpose of the fifth bits, parallel over groups.
#include "kernels/cpu/packed.h"

#include <cstring>

#include "kernels/cpu/layout.h"
#include "kernels/cpu/weight_arena.h"
#include "quant/blocks.h"
#include "runtime/thread_pool.h"
#include "util/check.h"

namespace brisk {
namespace {

using namespace layout;

PackedKind KindOf(GgmlType t) {
  switch (t) {
    case GgmlType::kQ4_0:
      return PackedKind::kQ4_0;
    case GgmlType::kQ4_1:
      return PackedKind::kQ4_1;
    case GgmlType::kQ5_0:
      return PackedKind::kQ5_0;
    case GgmlType::kQ5_1:
      return PackedKind::kQ5_1;
    case GgmlType::kQ8_0:
      return PackedKind::kQ8_0;
    case GgmlType::kQ4_K:
      return PackedKind::kQ4_K;
    case GgmlType::kQ5_K:
      return PackedKind::kQ5_K;
    case GgmlType::kQ6_K:
      return PackedKind::kQ6_K;
    case GgmlType::kIQ4_NL:
      return PackedKind::kIQ4_NL;
    case GgmlType::kIQ4_XS:
      return PackedKind::kIQ4_XS;
    case GgmlType::kF32:
      return PackedKind::kF32;
    case GgmlType::kF16:
      return PackedKind::kF16;
    case GgmlType::kBF16:
      return PackedKind::kBF16;
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K:
      return PackedKind::kRaw;
    default:
      break;
  }
  BRISK_CHECK_MSG(false, "weight type has no matmul kernel");
  return PackedKind::kRaw;
}

// Source rows of one group; nullptr for padding rows past the end (packed as zeros).
struct GroupSrc {
  const uint8_t* row[kGroupRows];
};

void PutU64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

// 16 source bytes (a row's qs) -> nib[k][r][j]
void PackNibbles16(const uint8_t* qs, int r, uint8_t* nib) {
  for (int k = 0; k < 4; ++k) std::memcpy(nib + k * 64 + r * 4, qs + 4 * k, 4);
}

uint32_t Qh32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Fifth bits of a 32-value block: bit (4o + j) of row r's qh -> bit (4r + j) of hmask[o].
void PackHmask(const uint32_t qh[kGroupRows], uint8_t* dst) {
  for (int o = 0; o < 8; ++o) {
    uint64_t m = 0;
    for (int r = 0; r < kGroupRows; ++r) m |= uint64_t((qh[r] >> (4 * o)) & 15) << (4 * r);
    PutU64(dst + 8 * o, m);
  }
}

template <typename Blk>
bool Load(const GroupSrc& s, int r, int64_t b, Blk* out) {
  if (!s.row[r]) {
    std::memset(out, 0, sizeof(Blk));
    return false;
  }
  std::memcpy(out, s.row[r] + b * int64_t(sizeof(Blk)), sizeof(Blk));
  return true;
}

// One function per packed kind below; each writes `nb` blocks (or `nsb` super-blocks) of a group.

void PackQ4_0(const GroupSrc& s, int64_t nb, uint8_t* dst) {
  for (int64_t b = 0; b < nb; ++b, dst += kQ4_0Stride)
    for (int r = 0; r < 16; ++r) {
      BlockQ4_0 x;
      Load(s, r, b, &x);
      PackNibbles16(x.qs, r, dst);
      std::memcpy(dst + kQ4_0D + 2 * r, &x.d, 2);
    }
}

void PackQ4_1(const GroupSrc& s, int64_t nb, uint8_t* dst) {
  for (int64_t b = 0; b < nb; ++b, dst += kQ4_1Stride)
    for (int r = 0; r < 16; ++r) {
      BlockQ4_1 x;
      Load(s, r, b, &x);
      PackNibbles16(x.qs, r, dst);
      std::memcpy(dst + kQ4_1D + 2 * r, &x.d, 2);
      std::memcpy(dst + kQ4_1M + 2 * r, &x.m, 2);
    }
}

void PackQ5_0(const GroupSrc& s, int64_t nb, uint8_t* dst) {
  for (int64_t b = 0; b < nb; ++b, dst += kQ5_0Stride) {
    uint32_t qh[16];
    for (int r = 0; r < 16; ++r) {
      BlockQ5_0 x;
      Load(s, r, b, &x);
      PackNibbles16(x.qs, r, dst);
      std::memcpy(dst + kQ5_0D + 2 * r, &x.d, 2);
      qh[r] = Qh32(x.qh);
    }
    PackHmask(qh, dst + kQ5_0H);
  }
}

void PackQ5_1(const GroupSrc& s, int64_t nb, uint8_t* dst) {
  for (int64_t b = 0; b < nb; ++b, dst += kQ5_1Stride) {
    uint32_t qh[16];
    for (int r = 0; r < 16; ++r) {
      BlockQ5_1 x;
      Load(s, r, b, &x);
      PackNibbles16(x.qs, r, dst);
      std::memcpy(dst + kQ5_1D + 2 * r, &x.d, 2);
      std::memcpy(dst + kQ5_1M + 2 * r, &x.m, 2);
      qh[r] = Qh32(x.qh);
    }
    PackHmask(qh, dst + kQ5_1H);
  }
}

void PackQ8_0(const GroupSrc& s, int64_t nb, uint8_t* dst) {
  for (int64_t b = 0; b < nb; ++b, dst += kQ8_0Stride)
    for (int r = 0; r < 16; ++r) {
      BlockQ8_0 x;
      const bool real = Load(s, r, b, &x);
      // Unsigned storage u = q + 128 (VNNI's unsigned operand); padding rows stay 0 bytes,
      // their outputs are never stored.
      for (int o = 0; o < 8; ++o)
        for (int j = 0; j < 4; ++j)
          dst[o * 64 + r * 4 + j] = real ? uint8_t(x.qs[4 * o + j] ^ 0x80) : 0;
      std::memcpy(dst + kQ8_0D + 2 * r, &x.d, 2);
    }
}

// Where the parts of a Q4_K or Q5_K super-block go within its packed stride.
struct KOffsets {
  size_t stride, sc, m, d, dmin;
};

// The fields Q4_K and Q5_K share, as one row of a super-block provides them.
struct KRow {
  const uint8_t* scales;
  const uint8_t* qs;
  uint16_t d, dmin;
};

// Row r's nibbles, 6-bit scales and mins, d and dmin into the packed super-block.
void PackKRow(const KRow& x, int r, const KOffsets& off, uint8_t* dst) {
  for (int c = 0; c < 4; ++c)
    for (int k = 0; k < 8; ++k)
      std::memcpy(dst + c * 512 + k * 64 + r * 4, x.qs + 32 * c + 4 * k, 4);
  for (int j = 0; j < 8; ++j)
    GetScaleMinK4(j, x.scales, dst + off.sc + 16 * j + r, dst + off.m + 16 * j + r);
  std::memcpy(dst + off.d + 2 * r, &x.d, 2);
  std::memcpy(dst + off.dmin + 2 * r, &x.dmin, 2);
}

// Q5_K fifth bits: block b's are bit b of qh[r][l] for value l of the block.
void PackQ5KHighBits(const uint8_t (&qh)[16][32], uint8_t* dst) {
  for (int b = 0; b < 8; ++b)
    for (int o = 0; o < 8; ++o) {
      uint64_t m = 0;
      for (int r = 0; r < 16; ++r)
        for (int j = 0; j < 4; ++j) m |= uint64_t((qh[r][4 * o + j] >> b) & 1) << (4 * r + j);
      PutU64(dst + kQ5_KH + 64 * b + 8 * o, m);
    }
}

void PackQ4_K(const GroupSrc& s, int64_t nsb, uint8_t* dst) {
  const KOffsets off{kQ4_KStride, kQ4_KSc, kQ4_KM, kQ4_KD, kQ4_KDmin};
  for (int64_t sb = 0; sb < nsb; ++sb, dst += off.stride)
    for (int r = 0; r < 16; ++r) {
      BlockQ4_K x;
      Load(s, r, sb, &x);
      PackKRow(KRow{x.scales, x.qs, x.d, x.dmin}, r, off, dst);
    }
}

void PackQ5_K(const GroupSrc& s, int64_t nsb, uint8_t* dst) {
  const KOffsets off{kQ5_KStride, kQ5_KSc, kQ5_KM, kQ5_KD, kQ5_KDmin};
  for (int64_t sb = 0; sb < nsb; ++sb, dst += off.stride) {
    uint8_t qh[16][32] = {};
    for (int r = 0; r < 16; ++r) {
      BlockQ5_K x;
      Load(s, r, sb, &x);
      std::memcpy(qh[r], x.qh, 32);
      PackKRow(KRow{x.scales, x.qs, x.d, x.dmin}, r, off, dst);
    }
    PackQ5KHighBits(qh, dst);
  }
}

void PackQ6_K(const GroupSrc& s, int64_t nsb, uint8_t* dst) {
  for (int64_t sb = 0; sb < nsb; ++sb, dst += kQ6_KStride)
    for (int r = 0; r < 16; ++r) {
      BlockQ6_K x;
      Load(s, r, sb, &x);
      for (int n = 0; n < 2; ++n) {
        for (int k = 0; k < 16; ++k)
          std::memcpy(dst + (n * 16 + k) * 64 + 4 * r, x.ql + 64 * n + 4 * k, 4);
        for (int k = 0; k < 8; ++k)
          std::memcpy(dst + kQ6_KQh + (n * 8 + k) * 64 + 4 * r, x.qh + 32 * n + 4 * k, 4);
      }
      for (int sc = 0; sc < 16; ++sc) dst[kQ6_KSc + 16 * sc + r] = uint8_t(x.scales[sc]);
      std::memcpy(dst + kQ6_KD + 2 * r, &x.d, 2);
    }
}

void PackIQ4_NL(const GroupSrc& s, int64_t nb, uint8_t* dst) {
  for (int64_t b = 0; b < nb; ++b, dst += kIQ4_NLStride)
    for (int r = 0; r < 16; ++r) {
      BlockIQ4_NL x;
      Load(s, r, b, &x);
      PackNibbles16(x.qs, r, dst);
      std::memcpy(dst + kIQ4_NLD + 2 * r, &x.d, 2);
    }
}

void PackIQ4_XS(const GroupSrc& s, int64_t nsb, uint8_t* dst) {
  for (int64_t sb = 0; sb < nsb; ++sb, dst += kIQ4_XSStride)
    for (int r = 0; r < 16; ++r) {
      BlockIQ4_XS x;
      // Padding rows: all-zero blocks, whose multipliers are 0 - 32 (outputs never stored).
      Load(s, r, sb, &x);
      for (int j = 0; j < 8; ++j) {
        PackNibbles16(x.qs + 16 * j, r, dst + 256 * j);
        dst[kIQ4_XSSc + 16 * j + r] = uint8_t(int8_t(IQ4XSScale(x, j) - 32));
      }
      std::memcpy(dst + kIQ4_XSD + 2 * r, &x.d, 2);
    }
}

// F32 / F16 / BF16: elements of `e` bytes, interleaved by row.
void PackFloat(const GroupSrc& s, int64_t cols, size_t e, uint8_t* dst) {
  for (int r = 0; r < 16; ++r)
    for (int64_t i = 0; i < cols; ++i) {
      if (s.row[r])
        std::memcpy(dst + (i * 16 + r) * e, s.row[r] + i * e, e);
      else
        std::memset(dst + (i * 16 + r) * e, 0, e);
    }
}

void PackGroup(PackedKind kind, const GroupSrc& s, int64_t cols, uint8_t* dst) {
  const int64_t nb = cols / kQK, nsb = cols / kQK_K;
  switch (kind) {
    case PackedKind::kQ4_0:
      return PackQ4_0(s, nb, dst);
    case PackedKind::kQ4_1:
      return PackQ4_1(s, nb, dst);
    case PackedKind::kQ5_0:
      return PackQ5_0(s, nb, dst);
    case PackedKind::kQ5_1:
      return PackQ5_1(s, nb, dst);
    case PackedKind::kQ8_0:
      return PackQ8_0(s, nb, dst);
    case PackedKind::kQ4_K:
      return PackQ4_K(s, nsb, dst);
    case PackedKind::kQ5_K:
      return PackQ5_K(s, nsb, dst);
    case PackedKind::kQ6_K:
      return PackQ6_K(s, nsb, dst);
    case PackedKind::kIQ4_NL:
      return PackIQ4_NL(s, nb, dst);
    case PackedKind::kIQ4_XS:
      return PackIQ4_XS(s, nsb, dst);
    case PackedKind::kF32:
      return PackFloat(s, cols, 4, dst);
    case PackedKind::kF16:
    case PackedKind::kBF16:
      return PackFloat(s, cols, 2, dst);
    case PackedKind::kRaw:
      break;
  }
  BRISK_CHECK(false);
}

}  // namespace

size_t GroupBytes(PackedKind kind, int64_t cols) {
  switch (kind) {
    case PackedKind::kQ4_0:
      return size_t(cols / kQK) * kQ4_0Stride;
    case PackedKind::kQ4_1:
      return size_t(cols / kQK) * kQ4_1Stride;
    case PackedKind::kQ5_0:
      return size_t(cols / kQK) * kQ5_0Stride;
    case PackedKind::kQ5_1:
      return size_t(cols / kQK) * kQ5_1Stride;
    case PackedKind::kQ8_0:
      return size_t(cols / kQK) * kQ8_0Stride;
    case PackedKind::kQ4_K:
      return size_t(cols / kQK_K) * kQ4_KStride;
    case PackedKind::kQ5_K:
      return size_t(cols / kQK_K) * kQ5_KStride;
    case PackedKind::kQ6_K:
      return size_t(cols / kQK_K) * kQ6_KStride;
    case PackedKind::kIQ4_NL:
      return size_t(cols / kQK) * kIQ4_NLStride;
    case PackedKind::kIQ4_XS:
      return size_t(cols / kQK_K) * kIQ4_XSStride;
    case PackedKind::kF32:
      return size_t(cols) * 16 * 4;
    case PackedKind::kF16:
    case PackedKind::kBF16:
      return size_t(cols) * 16 * 2;
    case PackedKind::kRaw:
      break;
  }
  BRISK_CHECK(false);
  return 0;
}

bool PackedWeights::uses_q8() const {
  for (const auto& s : segments)
    if (UsesQ8Acts(s.kind)) return true;
  return false;
}
bool PackedWeights::uses_f32() const {
  for (const auto& s : segments)
    if (!UsesQ8Acts(s.kind)) return true;
  return false;
}

PackedWeights PackWeightsConcat(const std::vector<WeightSource>& parts, int64_t cols,
                                ThreadPool* pool) {
  PackedWeights pw;
  pw.cols = cols;
  size_t packed_bytes = 0;
  for (const WeightSource& part : parts) {
    const TypeTraits& tt = GetTypeTraits(part.type);
    BRISK_CHECK_MSG(cols > 0 && cols % tt.block_size == 0 && cols % kQK == 0,
                    "matmul columns must be a multiple of the block size and of 32");
    PackedSegment seg;
    seg.type = part.type;
    seg.kind = KindOf(part.type);
    seg.row0 = pw.rows;
    seg.rows = part.rows;
    if (seg.kind == PackedKind::kRaw) {
      seg.data = static_cast<const uint8_t*>(part.data);
      seg.group_bytes = RowBytes(part.type, cols);
      pw.bytes += seg.group_bytes * size_t(part.rows);
    } else {
      seg.group_bytes = GroupBytes(seg.kind, cols);
      // Offsets stay 64-byte aligned: group sizes are multiples of 32 (legacy) or 64.
      packed_bytes = (packed_bytes + 63) & ~size_t(63);
      seg.data = reinterpret_cast<const uint8_t*>(packed_bytes);  // fixed up below
      packed_bytes += seg.group_bytes * size_t(seg.n_groups());
    }
    pw.rows += part.rows;
    pw.segments.push_back(seg);
  }
  pw.memory = AllocWeightMemory(packed_bytes);
  pw.bytes += packed_bytes;
  uint8_t* base = static_cast<uint8_t*>(pw.memory.get());
  for (size_t i = 0; i < parts.size(); ++i) {
    PackedSegment& seg = pw.segments[i];
    if (seg.kind == PackedKind::kRaw) continue;
    uint8_t* dst = base + reinterpret_cast<uintptr_t>(seg.data);
    seg.data = dst;
    const uint8_t* src = static_cast<const uint8_t*>(parts[i].data);
    const size_t row_bytes = RowBytes(seg.type, cols);
    auto pack_range = [&](int64_t g0, int64_t g1, int) {
      for (int64_t g = g0; g < g1; ++g) {
        GroupSrc gs;
        for (int r = 0; r < kGroupRows; ++r) {
          const int64_t row = g * kGroupRows + r;
          gs.row[r] = row < seg.rows ? src + size_t(row) * row_bytes : nullptr;
        }
        PackGroup(seg.kind, gs, cols, dst + size_t(g) * seg.group_bytes);
      }
    };
    if (pool)
      pool->ParallelFor(seg.n_groups(), 16, pack_range);
    else
      pack_range(0, seg.n_groups(), 0);
  }
  return pw;
}

PackedWeights PackWeights(GgmlType type, const void* data, int64_t rows, int64_t cols,
                          ThreadPool* pool) {
  return PackWeightsConcat({{type, data, rows}}, cols, pool);
}

}  // namespace brisk

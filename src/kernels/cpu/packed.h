// Weights repacked at load time into 16-row groups ("lane = row" layout): one 512-bit register
// holds 4 consecutive values of each of 16 rows, so one broadcast 4-byte activation chunk feeds
// 16 output rows per VNNI instruction and each row's block sum lands in its own lane (no
// horizontal reductions). Every output (row, token) is then reduced over blocks in one fixed
// sequential order, the same in the GEMV and GEMM paths and on every ISA.
//
// The layout is ISA-independent (scalar, AVX2 and AVX-512 kernels read the same bytes) and keeps
// the file's bits per weight (scales stay fp16; K-quant 6-bit scales are unpacked to bytes, +3%).
// Byte layout of one 16-row group, per 32-value block (legacy types) or 256-value super-block
// (K types); "nib[k][r][j]" is byte j of row r's 4-byte chunk k, all rows of chunk k together:
//   Q4_0  nib[4][16][4] = row's qs[4k+j] (low nibble: value 4k+j -> act chunk k,
//         high nibble: value 16+4k+j -> act chunk 4+k) | d[16] fp16            = 288 B
//   Q4_1  nib | d[16] | m[16]                                                  = 320 B
//   Q5_0  nib | hmask[8] u64 (bit 4r+j of hmask[o] = fifth bit of value 4o+j) | d = 352 B
//   Q5_1  nib | hmask | d | m                                                  = 384 B
//   Q8_0  q[8][16][4] = value 4o+j + 128 (uint8) | d[16]                        = 544 B
//   Q4_K  nib[4 chunks][8][16][4] (chunk c, k: low -> block 2c chunk k, high -> block 2c+1)
//         | sc[8][16] u8 | m[8][16] u8 | d[16] | dmin[16]                        = 2368 B
//   Q5_K  as Q4_K plus hmask[8 blocks][8] u64 after the nibbles                = 2880 B
//   Q6_K  ql[2][16][16][4] | qh[2][8][16][4] | sc[16][16] i8 | d[16]           = 3360 B
//   IQ4_NL  as Q4_0 (nibbles are codebook indices; kernels map them to value + 128)  = 288 B
//   IQ4_XS  nib[8 blocks][4][16][4] (each block as Q4_0's) | sc[8][16] i8 (ls - 32) | d[16]
//                                                                              = 2208 B
//   F32 / F16 / BF16   [cols][16] values (column-major inside the group)
// Rows past the end of the matrix are zero padding (their outputs are never stored).
// Types without a packed kernel (Q2_K, Q3_K) keep a zero-copy view of the original rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cpu/layout.h"
#include "quant/types.h"

namespace brisk {

class ThreadPool;

inline constexpr int kGroupRows = 16;

// Packed formats with integer kernels (index into per-ISA kernel tables).
enum class PackedKind : int {
  kQ4_0,
  kQ4_1,
  kQ5_0,
  kQ5_1,
  kQ8_0,
  kQ4_K,
  kQ5_K,
  kQ6_K,
  kIQ4_NL,
  kIQ4_XS,  // int8 activations (kNumIntKinds, layout.h)
  kF32,
  kF16,
  kBF16,  // fp32 activations
  kRaw,   // not repacked: original rows, dequantised on the fly (Q2_K, Q3_K); fp32 activations
};
static_assert(int(PackedKind::kF32) == kNumIntKinds);

// Bytes of one 16-row group for `cols` columns of a packed kind (not kRaw).
size_t GroupBytes(PackedKind kind, int64_t cols);
// True for the kinds that take int8 activations (Q8Acts).
inline bool UsesQ8Acts(PackedKind k) { return int(k) < kNumIntKinds; }

// One horizontal slice of the matrix (rows [row0, row0 + rows)) in one format. A PackedWeights
// may concatenate several tensors with the same column count (e.g. gate and up) so one Matmul
// call with one barrier computes them all.
struct PackedSegment {
  GgmlType type;
  PackedKind kind;
  int64_t row0 = 0, rows = 0;
  const uint8_t* data = nullptr;  // packed groups (group_bytes each), or the raw rows for kRaw
  size_t group_bytes = 0;         // packed: bytes per group; kRaw: bytes per row
  int64_t n_groups() const { return (rows + kGroupRows - 1) / kGroupRows; }
};

struct PackedWeights {
  int64_t rows = 0, cols = 0;
  std::vector<PackedSegment> segments;
  size_t bytes = 0;       // bytes the kernels stream per full pass (packed memory + raw views)
  bool uses_q8() const;   // some segment needs Q8Acts
  bool uses_f32() const;  // some segment needs fp32 activations
  std::shared_ptr<void> memory;  // owns the packed bytes (weight_arena.h: huge pages)
};

// One source tensor: `rows` rows of `cols` values in ggml format `type` (row-major, as in GGUF).
struct WeightSource {
  GgmlType type;
  const void* data;
  int64_t rows;
};

// Packs one tensor. Supported types: Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q4_K Q5_K Q6_K IQ4_NL IQ4_XS F32 F16
// BF16 (packed)
// and Q2_K Q3_K (zero-copy view: `data` must outlive the result). cols must be a multiple of the
// block size. With a pool, packing runs on all its threads.
PackedWeights PackWeights(GgmlType type, const void* data, int64_t rows, int64_t cols,
                          ThreadPool* pool = nullptr);
// Concatenates several tensors with the same cols along the row axis (outputs in that order).
PackedWeights PackWeightsConcat(const std::vector<WeightSource>& parts, int64_t cols,
                                ThreadPool* pool = nullptr);

}  // namespace brisk

// Byte offsets inside one packed 16-row group (see packed.h for the layout and its reasons).
// constexpr only, so the per-ISA kernel files can include it safely.
#pragma once

#include <cstddef>

namespace brisk {
// Packed kinds with integer kernels (PackedKind values below kF32, packed.h): the size of every
// per-kind table of the ISA kernels.
inline constexpr int kNumIntKinds = 10;
}  // namespace brisk

namespace brisk::layout {

// Legacy 32-value block types: per-block stride and field offsets within a block.
inline constexpr size_t kNib = 0;  // 4 x 64 B nibble chunks (Q4/Q5) or 8 x 64 B bytes (Q8_0)
inline constexpr size_t kQ4_0Stride = 288, kQ4_0D = 256;
inline constexpr size_t kQ4_1Stride = 320, kQ4_1D = 256, kQ4_1M = 288;
inline constexpr size_t kQ5_0Stride = 352, kQ5_0H = 256, kQ5_0D = 320;
inline constexpr size_t kQ5_1Stride = 384, kQ5_1H = 256, kQ5_1D = 320, kQ5_1M = 352;
inline constexpr size_t kQ8_0Stride = 544, kQ8_0D = 512;
inline constexpr size_t kIQ4_NLStride = 288, kIQ4_NLD = 256;  // Q4_0's layout, codebook indices

// K types: per 256-value super-block stride and offsets.
inline constexpr size_t kQ4_KStride = 2368, kQ4_KSc = 2048, kQ4_KM = 2176, kQ4_KD = 2304,
                        kQ4_KDmin = 2336;
inline constexpr size_t kQ5_KStride = 2880, kQ5_KH = 2048, kQ5_KSc = 2560, kQ5_KM = 2688,
                        kQ5_KD = 2816, kQ5_KDmin = 2848;
inline constexpr size_t kQ6_KStride = 3360, kQ6_KQh = 2048, kQ6_KSc = 3072, kQ6_KD = 3328;
// IQ4_XS: 8 blocks of Q4_0-layout nibbles (256 B each), int8 multipliers (ls - 32) [8][16], d.
inline constexpr size_t kIQ4_XSStride = 2208, kIQ4_XSSc = 2048, kIQ4_XSD = 2176;

// Packed bytes per 32-value block, indexed by PackedKind (K types: an eighth of the super-block).
inline constexpr size_t kBlockBytes[kNumIntKinds] = {
    kQ4_0Stride,     kQ4_1Stride,     kQ5_0Stride,     kQ5_1Stride,   kQ8_0Stride,
    kQ4_KStride / 8, kQ5_KStride / 8, kQ6_KStride / 8, kIQ4_NLStride, kIQ4_XSStride / 8};

// The IQ4_NL codebook plus 128 (the unsigned operand the kernels use, as Q8_0's q + 128), for
// index i in 0..15; 16 bytes so a byte shuffle can look it up.
inline constexpr unsigned char kIQ4Lut[16] = {1,   24,  45,  63,  79,  93,  106, 118,
                                              129, 141, 153, 166, 181, 197, 217, 241};

// The integer kernels software-prefetch this far ahead of the block they unpack. With only the
// hardware prefetchers the GEMV reached 50-65% of the measured DRAM bandwidth (the unpack work
// between loads keeps too few misses in flight); 2-4 KiB ahead lifted Q5_0/Q4_K/Q6_K to 80-100%
// (tests/bench/kernel_bench). Prefetches past the end of a matrix never fault.
inline constexpr size_t kPrefetchBytes = 4096;

}  // namespace brisk::layout

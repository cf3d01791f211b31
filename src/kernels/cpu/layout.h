// Byte offsets inside one packed 16-row group (see packed.h for the layout and its reasons).
// constexpr only, so the per-ISA kernel files can include it safely.
#pragma once

#include <cstddef>

namespace brisk::layout {

// Legacy 32-value block types: per-block stride and field offsets within a block.
inline constexpr size_t kNib = 0;  // 4 x 64 B nibble chunks (Q4/Q5) or 8 x 64 B bytes (Q8_0)
inline constexpr size_t kQ4_0Stride = 288, kQ4_0D = 256;
inline constexpr size_t kQ4_1Stride = 320, kQ4_1D = 256, kQ4_1M = 288;
inline constexpr size_t kQ5_0Stride = 352, kQ5_0H = 256, kQ5_0D = 320;
inline constexpr size_t kQ5_1Stride = 384, kQ5_1H = 256, kQ5_1D = 320, kQ5_1M = 352;
inline constexpr size_t kQ8_0Stride = 544, kQ8_0D = 512;

// K types: per 256-value super-block stride and offsets.
inline constexpr size_t kQ4_KStride = 2368, kQ4_KSc = 2048, kQ4_KM = 2176, kQ4_KD = 2304,
                        kQ4_KDmin = 2336;
inline constexpr size_t kQ5_KStride = 2880, kQ5_KH = 2048, kQ5_KSc = 2560, kQ5_KM = 2688,
                        kQ5_KD = 2816, kQ5_KDmin = 2848;
inline constexpr size_t kQ6_KStride = 3360, kQ6_KQh = 2048, kQ6_KSc = 3072, kQ6_KD = 3328;

// Packed bytes per 32-value block, indexed by PackedKind (K types: an eighth of the super-block).
inline constexpr size_t kBlockBytes[8] = {kQ4_0Stride,     kQ4_1Stride,    kQ5_0Stride,
                                          kQ5_1Stride,     kQ8_0Stride,    kQ4_KStride / 8,
                                          kQ5_KStride / 8, kQ6_KStride / 8};

// The integer kernels software-prefetch this far ahead of the block they unpack. With only the
// hardware prefetchers the GEMV reached 50-65% of the measured DRAM bandwidth (the unpack work
// between loads keeps too few misses in flight); 2-4 KiB ahead lifted Q5_0/Q4_K/Q6_K to 80-100%
// (tests/bench/kernel_bench). Prefetches past the end of a matrix never fault.
inline constexpr size_t kPrefetchBytes = 4096;

}  // namespace brisk::layout

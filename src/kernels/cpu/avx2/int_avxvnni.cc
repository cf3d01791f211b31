// The AVX2 tier's integer matmul kernels with AVX-VNNI's vpdpbusd ymm (int_avx2_impl.inc with
// BRISK_AVX2_VNNI; compiled with -mavx2 -mfma -mf16c -mavxvnni): CPUs with AVX-VNNI but no
// AVX-512 (Intel client cores since Alder Lake) run the avx2 tier with these, bitwise equal to
// the vpmaddubsw kernels (both sums are exact).
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/isa_kernels.h"

namespace brisk::kern {
namespace {
#define BRISK_AVX2_VNNI 1
#include "kernels/cpu/avx2/int_avx2_impl.inc"
#undef BRISK_AVX2_VNNI
}  // namespace

const IsaKernels& AvxVnniKernels() {
  static const IsaKernels k = [] {
    IsaKernels t = Avx2Kernels();
    FillIntKernels(&t);
    return t;
  }();
  return k;
}

}  // namespace brisk::kern

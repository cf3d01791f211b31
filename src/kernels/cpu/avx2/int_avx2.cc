// The AVX2 tier's integer matmul kernels (int_avx2_impl.inc without VNNI) and its kernel table
// (compiled with -mavx2 -mfma -mf16c; see isa_kernels.h for why this file includes nothing that
// common code also instantiates).
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/isa_kernels.h"

namespace brisk::kern {
namespace {
#define BRISK_AVX2_VNNI 0
#include "kernels/cpu/avx2/int_avx2_impl.inc"
#undef BRISK_AVX2_VNNI
}  // namespace

void FillAvx2Misc(IsaKernels* k);

const IsaKernels& Avx2Kernels() {
  static const IsaKernels k = [] {
    IsaKernels t{};
    FillIntKernels(&t);
    FillAvx2Misc(&t);
    return t;
  }();
  return k;
}

}  // namespace brisk::kern

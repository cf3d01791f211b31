// The ARM tiers' tables (issue 34): the scalar tier's table with the integer matmuls replaced by
// each tier's own (int_neon.cc, int_dotprod.cc, int_i8mm.cc). Every other entry, and any integer
// kind a tier has no kernel for, stays the scalar function: the same bits by definition, so the
// cross-tier tests hold for whatever the table mixes.
#include "kernels/cpu/isa_kernels.h"

namespace brisk::kern {
namespace arm_neon {
void FillIntKernels(IntKernelFn* gemv, IntKernelFn* gemm);
}
namespace arm_dotprod {
void FillIntKernels(IntKernelFn* gemv, IntKernelFn* gemm);
}
namespace arm_i8mm {
void FillIntKernels(IntKernelFn* gemv, IntKernelFn* gemm);
}

namespace {
IsaKernels Make(void (*fill)(IntKernelFn*, IntKernelFn*), int gemm_min_tokens) {
  IsaKernels k = ScalarKernels();
  fill(k.gemv, k.gemm);
  k.gemm_min_tokens = gemm_min_tokens;
  return k;
}
}  // namespace

// Thresholds: the neon and dotprod tiers run one kernel for both paths; the i8mm tier's smmla
// GEMM needs token pairs, so it starts at 2 (never measured on hardware: README, ARM).
const IsaKernels& NeonKernels() {
  static const IsaKernels k = Make(arm_neon::FillIntKernels, 4);
  return k;
}
const IsaKernels& DotprodKernels() {
  static const IsaKernels k = Make(arm_dotprod::FillIntKernels, 4);
  return k;
}
const IsaKernels& I8mmKernels() {
  static const IsaKernels k = Make(arm_i8mm::FillIntKernels, 2);
  return k;
}

}  // namespace brisk::kern

// The i8mm tier's integer matmuls (int_arm_impl.inc with BRISK_ARM_LEVEL 2; compiled with the
// matching -march, see src/CMakeLists.txt).
#include <arm_neon.h>

#include <cstring>

#include "kernels/cpu/isa_kernels.h"

#define BRISK_ARM_LEVEL 2

namespace brisk::kern::arm_i8mm {
#include "kernels/cpu/arm/int_arm_impl.inc"
}  // namespace brisk::kern::arm_i8mm

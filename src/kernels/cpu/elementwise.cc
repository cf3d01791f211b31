#include "kernels/cpu/elementwise.h"

#include "kernels/cpu/isa_kernels.h"
#include "util/check.h"

namespace brisk {

void SiluMul(const float* g, const float* u, int64_t n, float* out, Isa isa) {
  BRISK_CHECK(n >= 0);
  kern::KernelsFor(isa).silu_mul(g, u, n, out);
}

}  // namespace brisk

#include "kernels/cpu/attention.h"

#include <cmath>
#include <cstring>

#include "util/check.h"

namespace brisk {
namespace attention_scalar {
#include "kernels/cpu/attention_impl.inc"
}  // namespace attention_scalar
namespace attention_avx2 {
void Attend(const AttendArgs& a);
}
namespace attention_avx512 {
void Attend(const AttendArgs& a);
}

void AttendGroup(const AttendArgs& a, Isa isa) {
  BRISK_CHECK(a.group >= 1 && a.group <= 16 && a.head_dim % 16 == 0 && a.n_ctx >= 1 &&
              a.block_size >= 1);
#if defined(BRISK_HAVE_X86_KERNELS)
  if (isa == Isa::kAvx512) return attention_avx512::Attend(a);
  if (isa == Isa::kAvx2) return attention_avx2::Attend(a);
#endif
  attention_scalar::AttendImpl(a);
}

}  // namespace brisk

#include "kernels/cpu/acts.h"

#include <cmath>
#include <cstdlib>

#include "kernels/cpu/isa_kernels.h"
#include "runtime/huge_page_allocator.h"
#include "util/check.h"

namespace brisk {

namespace kern {
const IsaKernels& KernelsFor(Isa isa) {
  BRISK_CHECK_MSG(IsaSupported(isa), "kernels requested for an ISA this CPU lacks");
#if defined(BRISK_HAVE_X86_KERNELS)
  switch (isa) {
    case Isa::kAvx512:
      return Avx512Kernels();
    case Isa::kAvx2:
      return Avx2Kernels();
    case Isa::kScalar:
      break;
  }
#endif
  return ScalarKernels();
}
}  // namespace kern

void Q8ActsBuffer::Free::operator()(void* p) const { std::free(p); }

Q8ActsBuffer::Q8ActsBuffer(int max_tokens, int64_t cols) {
  BRISK_CHECK(max_tokens > 0 && cols > 0 && cols % kActBlock == 0);
  const int64_t qs_stride = (cols + 63) / 64 * 64;
  const int64_t nb = cols / kActBlock;
  const size_t qs_bytes = size_t(qs_stride) * size_t(max_tokens);
  const size_t meta_bytes = sizeof(ActMeta) * size_t(nb) * size_t(max_tokens);
  const size_t total = (qs_bytes + meta_bytes + 63) / 64 * 64;
  mem_.reset(HugePageAlloc(total));  // std::free releases it (huge_page_allocator.h)
  uint8_t* base = static_cast<uint8_t*>(mem_.get());
  view_.qs = reinterpret_cast<int8_t*>(base);
  view_.meta = reinterpret_cast<ActMeta*>(base + qs_bytes);
  view_.qs_stride = qs_stride;
  view_.meta_stride = nb;
  view_.cols = cols;
  view_.n_tokens = 0;
  view_.capacity = max_tokens;
}

void QuantizeActs(const float* x, int64_t ldx, int n_tokens, Q8Acts* out, Isa isa) {
  BRISK_CHECK(out && n_tokens >= 0 && n_tokens <= out->capacity && out->cols % kActBlock == 0);
  const kern::IsaKernels& k = kern::KernelsFor(isa);
  for (int t = 0; t < n_tokens; ++t)
    k.quantize_row(x + t * ldx, out->cols, out->qs + t * out->qs_stride,
                   out->meta + t * out->meta_stride);
  out->n_tokens = n_tokens;
}

void RmsNormQuantize(const float* x, int64_t ldx, int n_tokens, const float* w, float eps,
                     Q8Acts* out, float* xn, int64_t ldxn, Isa isa) {
  BRISK_CHECK(out && n_tokens >= 0 && n_tokens <= out->capacity && out->cols % kActBlock == 0);
  const kern::IsaKernels& k = kern::KernelsFor(isa);
  const int64_t n = out->cols;
  for (int t = 0; t < n_tokens; ++t) {
    const float* xt = x + t * ldx;
    const float ss = k.sum_squares(xt, n);
    const float scale = float(1.0 / std::sqrt(double(ss) / double(n) + double(eps)));
    k.norm_quantize_row(xt, scale, w, n, xn ? xn + t * ldxn : nullptr, out->qs + t * out->qs_stride,
                        out->meta + t * out->meta_stride);
  }
  out->n_tokens = n_tokens;
}

}  // namespace brisk

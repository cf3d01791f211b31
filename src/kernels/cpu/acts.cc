#include "kernels/cpu/acts.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

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
      return AvxVnniEnabled() ? AvxVnniKernels() : Avx2Kernels();
    default:
      break;
  }
#endif
#if defined(BRISK_HAVE_ARM_KERNELS)
  switch (isa) {
    case Isa::kNeon:
      return NeonKernels();
    case Isa::kDotprod:
      return DotprodKernels();
    case Isa::kI8mm:
      return I8mmKernels();
    default:
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

void Bf16Acts::Free::operator()(void* p) const { std::free(p); }

Bf16Acts::Bf16Acts(int max_tokens, int64_t max_cols) {
  BRISK_CHECK(max_tokens > 0 && max_cols > 0 && max_cols % kActBlock == 0);
  max_cols_ = max_cols;
  capacity_ = max_tokens;
  const size_t bytes = size_t(max_cols) * size_t((max_tokens + 31) / 32 * 32) * sizeof(uint16_t);
  mem_.reset(HugePageAlloc(bytes));
  std::memset(mem_.get(), 0, bytes);
}

namespace {
uint16_t Bf16Scalar(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((u >> 16) | 0x40);  // quiet NaN
  if ((u & 0x7F800000u) == 0) return uint16_t((u >> 16) & 0x8000);  // denormal -> signed zero
  return uint16_t((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);
}
}  // namespace

void ToBf16Tiles(const float* x, int64_t ldx, int n_tokens, int64_t cols, Bf16Acts* out, int t0,
                 Isa isa) {
  BRISK_CHECK(out && t0 >= 0 && n_tokens >= 0 && t0 + n_tokens <= out->capacity() &&
              cols <= out->max_cols() && cols % kActBlock == 0);
  const kern::IsaKernels& k = kern::KernelsFor(isa);
  const bool simd = k.to_bf16 && GetCpuFeatures().avx512bf16;
  const int64_t nb = cols / kActBlock;
  for (int i = 0; i < n_tokens; ++i) {
    const int t = t0 + i;
    uint16_t* o = out->data() + (int64_t(t / 16) * nb * 512 + (t % 16) * 32);
    const float* xt = x + i * ldx;
    if (simd) {
      k.to_bf16(xt, cols, o, 512);
    } else {
      for (int64_t b = 0; b < nb; ++b)
        for (int j = 0; j < kActBlock; ++j) o[b * 512 + j] = Bf16Scalar(xt[b * kActBlock + j]);
    }
  }
}

void QuantizeActs(const float* x, int64_t ldx, int n_tokens, Q8Acts* out, Isa isa) {
  BRISK_CHECK(out && n_tokens >= 0 && n_tokens <= out->capacity && out->cols % kActBlock == 0);
  const kern::IsaKernels& k = kern::KernelsFor(isa);
  for (int t = 0; t < n_tokens; ++t)
    k.quantize_row(x + t * ldx, out->cols, out->qs + t * out->qs_stride,
                   out->meta + t * out->meta_stride);
  out->n_tokens = n_tokens;
}

namespace {
float RmsScale(const kern::IsaKernels& k, const float* x, int64_t n, float eps) {
  const float ss = k.sum_squares(x, n);
  return float(1.0 / std::sqrt(double(ss) / double(n) + double(eps)));
}
}  // namespace

void RmsNormRows(const float* x, int64_t ldx, int n_tokens, const float* w, float eps, int64_t cols,
                 float* xn, int64_t ldxn, Isa isa) {
  const kern::IsaKernels& k = kern::KernelsFor(isa);
  for (int t = 0; t < n_tokens; ++t) {
    const float* xt = x + t * ldx;
    const float scale = RmsScale(k, xt, cols, eps);
    float* o = xn + t * ldxn;
    for (int64_t i = 0; i < cols; ++i) o[i] = (xt[i] * scale) * w[i];
  }
}

void RmsNormQuantize(const float* x, int64_t ldx, int n_tokens, const float* w, float eps,
                     Q8Acts* out, float* xn, int64_t ldxn, Isa isa) {
  BRISK_CHECK(out && n_tokens >= 0 && n_tokens <= out->capacity && out->cols % kActBlock == 0);
  const kern::IsaKernels& k = kern::KernelsFor(isa);
  const int64_t n = out->cols;
  for (int t = 0; t < n_tokens; ++t) {
    const float* xt = x + t * ldx;
    const float scale = RmsScale(k, xt, n, eps);
    k.norm_quantize_row(xt, scale, w, n, xn ? xn + t * ldxn : nullptr, out->qs + t * out->qs_stride,
                        out->meta + t * out->meta_stride);
  }
  out->n_tokens = n_tokens;
}

}  // namespace brisk

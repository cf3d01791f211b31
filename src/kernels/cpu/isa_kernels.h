// Internal interface between the dispatcher (matmul.cc, acts.cc) and the per-ISA kernel files.
// Only plain data crosses it: the ISA files are compiled with -mavx2 / -mavx512* and must not
// instantiate inline functions or templates that common code also uses (the linker could pick
// the AVX-512 copy for a machine without it), so they include nothing but this header,
// acts.h-free PODs and intrinsics.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/act_meta.h"
#include "kernels/cpu/layout.h"

namespace brisk::kern {

// One call computes one 16-row group for tokens [0, n_tokens) (pointers already offset).
struct IntArgs {
  const uint8_t* group;  // packed group bytes
  int64_t cols;
  const int8_t* aq;  // token t's int8 row: aq + t * aq_stride
  int64_t aq_stride;
  const ActMeta* am;  // token t's block metadata: am + t * am_stride
  int64_t am_stride;
  int n_tokens;
  float* y;  // y[t * ldy + lane], lanes < valid_rows
  int64_t ldy;
  int valid_rows;
  uint8_t* scratch;  // GEMM path: room for 2 * cols / 32 unpacked blocks (kUnpackedBlockBytes each)
  bool amx;          // GEMM path may use AMX tiles (avx512 tier; same bits as without)
  // GEMM path: the packed group this thread computes next (nullptr: none). Its bytes are
  // prefetched while this group's tiles compute, so DRAM keeps streaming during the compute phase.
  const uint8_t* next_group = nullptr;
  // IsaKernels::gemm_pair only: 2 consecutive groups (group, group + group_bytes); valid_rows in
  // (16, 32] counts the rows of both; y's lanes 16..31 are group 1's rows.
  int n_groups = 1;
  size_t group_bytes = 0;
  // gemm_pair and gemv_pair only, optional: group 0 holds 16 gate rows and group 1 the same rows
  // of up (both full); the kernel then writes glu(gate, up, 16, y + t * ldy) per token instead of
  // the 32 outputs. glu must be the kernel's own tier's silu_mul (a tier may inline it).
  void (*glu)(const float* g, const float* u, int64_t n, float* out) = nullptr;
};
using IntKernelFn = void (*)(const IntArgs&);

// Unpacked block (GEMM scratch): u8 operands [8][16][4], then two 16-float scale vectors at
// kUnpackedS0 / kUnpackedS1.
inline constexpr size_t kUnpackedBlockBytes = 512 + 64 + 64;
inline constexpr size_t kUnpackedS0 = 512, kUnpackedS1 = 576;

// Prefill ("wide") path (matmul.h, numerics classes): the group's blocks are dequantised to
// bf16 weights, w = bf16(fma(float(u), scale, offset)), then bf16 activation rows times them with
// fp32 accumulation over the whole row (AMX-BF16 tiles). Tokens [0, n_tokens).
struct WideArgs {
  const uint8_t* group;  // n_groups (1 or 2) consecutive packed groups, group_bytes apart
  size_t group_bytes;
  int n_groups;
  int64_t cols;
  // bf16 activations in A-tile order (acts.h, Bf16Acts): token t, block b at
  // xb + ((t / 16) * (cols / 32) + b) * 512 + (t % 16) * 32; tiles up to a multiple of 32 tokens
  // readable.
  const uint16_t* xb;
  int n_tokens;
  float* y;  // y[t * ldy + 16 g + lane] for group g, lanes 16 g + lane < valid_rows
  int64_t ldy;
  int valid_rows;
  uint16_t* scratch;  // room for 2 * cols * 16 bf16 (kWideScratchBytesPerCol per column)
};
using WideKernelFn = void (*)(const WideArgs&);

// Fused gate/up + SwiGLU on the wide path: one gate group and the matching up group (same rows),
// then silu(gate) * up of each token written as bf16 into the down projection's A-tile order
// (out: token t's values for output columns [col0, col0 + 16) of out_cols). Same bits as the
// wide matmul into fp32, silu_mul, then the bf16 conversion.
struct WideGluArgs {
  const uint8_t* gate;
  const uint8_t* up;
  int64_t cols;
  const uint16_t* xb;  // as WideArgs::xb
  int n_tokens;
  uint16_t* out;  // A-tile order for out_cols columns (acts.h, Bf16Acts), tile 0 = token 0
  int64_t out_cols;
  int64_t col0;  // a multiple of 16
  int valid_rows;
  uint16_t* scratch;  // room for 2 * cols * 16 bf16
  void (*silu_mul)(const float* g, const float* u, int64_t n, float* out);
};
using WideGluFn = void (*)(const WideGluArgs&);
inline constexpr size_t kWideScratchBytesPerCol = 2 * 16 * 2;

// Float-weight kernels: n_groups consecutive groups (group_bytes apart) x n_tokens tokens.
struct FloatArgs {
  const uint8_t* groups;
  size_t group_bytes;
  int n_groups;
  int64_t cols;
  const float* x;  // token t: x + t * ldx
  int64_t ldx;
  int n_tokens;
  float* y;  // group g, token t, lane r: y[t * ldy + 16 g + r], rows < valid_rows (from group 0)
  int64_t ldy;
  int64_t valid_rows;
};
using FloatKernelFn = void (*)(const FloatArgs&);

struct IsaKernels {
  IntKernelFn
      gemv[kNumIntKinds];  // indexed by PackedKind (int kinds): in-register unpack, any n_tokens
  IntKernelFn gemm[kNumIntKinds];  // unpack into scratch once, then token tiles
  FloatKernelFn fmat[3];           // F32, F16, BF16
  // x: cols floats -> qs (cols bytes), meta (cols / 32)
  void (*quantize_row)(const float* x, int64_t cols, int8_t* qs, ActMeta* meta);
  // sum of x^2 in the canonical 16-lane order (see acts.h)
  float (*sum_squares)(const float* x, int64_t cols);
  // v = (x * scale) * w; stores v to xn (if not null) and quantises it
  void (*norm_quantize_row)(const float* x, float scale, const float* w, int64_t cols, float* xn,
                            int8_t* qs, ActMeta* meta);
  // out = silu(g) * u (elementwise_impl.inc)
  void (*silu_mul)(const float* g, const float* u, int64_t n, float* out);
  // Optional (null: a scalar loop in matmul.cc): out[t] = the largest non-NaN value of
  // y[t * ldy + i], i < n (-inf if none), for t < n_tokens; which of two zeros is unspecified.
  void (*row_max)(const float* y, int64_t ldy, int n_tokens, int n, float* out) = nullptr;
  // Token count from which Matmul takes the gemm path (measured per tier: kernel_bench --gemm).
  int gemm_min_tokens = 4;
  // Per kind (0: gemm_min_tokens), where AMX tiles are not in use.
  int gemm_min_tokens_kind[kNumIntKinds] = {};
  // The fused gate/up + SwiGLU (IntArgs::glu) takes gemm_pair from this many tokens even where
  // the plain matmul would still take the gemv path (0: from gemm_min_tokens_kind); below that,
  // gemv_pair where the plain matmul runs it. Either way it saves the separate SiLU pass over the
  // gate/up outputs.
  int glu_min_tokens = 0;
  // The fused gate/up + SwiGLU takes gemv_pair from this many tokens (0: from the plain matmul's
  // gemv_pair_min_tokens[kind]); the saved SiLU pass can tip the balance below the plain
  // threshold.
  int glu_gemv_min_tokens = 0;
  // Prefill path (null: the tier has none; used only where AmxBf16Enabled()) and its bf16
  // conversion (round to nearest even): values [32 b, 32 b + 32) of x go to out + b * stride.
  WideKernelFn wide[kNumIntKinds] = {};
  WideGluFn wide_glu[kNumIntKinds] = {};
  void (*to_bf16)(const float* x, int64_t n, uint16_t* out, int64_t stride) = nullptr;
  // Optional (null: none): the gemm path over two consecutive groups at once (IntArgs::n_groups).
  IntKernelFn gemm_pair[kNumIntKinds] = {};
  // Optional: the gemv path over two consecutive groups, from gemv_pair_min_tokens[kind] tokens.
  IntKernelFn gemv_pair[kNumIntKinds] = {};
  int gemv_pair_min_tokens[kNumIntKinds] = {};
};

const IsaKernels& ScalarKernels();
const IsaKernels& Avx2Kernels();
// Avx2Kernels with the integer matmuls on AVX-VNNI (only where AvxVnniEnabled()).
const IsaKernels& AvxVnniKernels();
const IsaKernels& Avx512Kernels();
// ARM tiers (aarch64 builds only: arm/tiers_arm.cc).
const IsaKernels& NeonKernels();
const IsaKernels& DotprodKernels();
const IsaKernels& I8mmKernels();

}  // namespace brisk::kern

namespace brisk {
enum class Isa : int;
namespace kern {
// BRISK_CHECKs that the CPU supports isa (acts.cc).
const IsaKernels& KernelsFor(Isa isa);
}  // namespace kern
}  // namespace brisk

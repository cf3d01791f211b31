// The fast matmul: y[t][r] = sum_i W[r][i] * x[t][i] for packed weights W (packed.h) and
// activations given as int8 blocks (integer weight formats) and/or fp32 (float formats, Q2_K/Q3_K).
//
// Determinism (DESIGN §5): every output (row r, token t) is computed as an exact integer dot
// product per 32-value block followed by a float accumulation over the blocks in sequential order
// with one fixed formula per format. GEMV (few tokens, in-register unpack) and GEMM (many tokens,
// unpack once per row group then register tiles of tokens x 16 rows) apply the same formula, and
// so does each ISA, so y does not depend on n_tokens, the path, the thread split or the ISA.
//
// Numerics classes: with AMX-BF16 (avx512 tier) a call's "wide" tokens - prompt tokens in
// prefill, marked by the caller - take a second formula instead: weights dequantised per block
// to bf16 (bf16(fma(u, scale, offset))), activations rounded to bf16, fp32 accumulation over the
// whole row in tile order. That too is fixed per output (the other tokens of the call, the split
// over threads and the token chunking never change it), so a token's result depends only on its
// class, which the caller derives from the token itself (prompt or generated), never from what
// else is batched. Without AMX-BF16 both classes use the integer formula.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "kernels/cpu/acts.h"
#include "kernels/cpu/group_claims.h"
#include "kernels/cpu/packed.h"
#include "runtime/cpu_features.h"
#include "runtime/thread_pool.h"

namespace brisk {

// Matmul inputs: supply q for weights with UsesQ8Acts kinds, x for the others (both when a
// PackedWeights mixes them). q must hold n_tokens rows; x has row stride ldx floats.
struct MatmulInput {
  const Q8Acts* q = nullptr;
  const float* x = nullptr;
  int64_t ldx = 0;
  // Wide (prefill) tokens: the last n_wide tokens of the call. Where WidePathAvailable(isa), their
  // integer-weight outputs take the bf16 path and xb holds them as tokens [0, n_wide) converted
  // for this matrix's cols (ToBf16Tiles); q may then omit them. Elsewhere they are computed like
  // the others (q must hold them).
  const Bf16Acts* xb = nullptr;
  int n_wide = 0;
};

// Per-thread scratch planned once (largest cols x pool size); the GEMM path unpacks one row group
// into it. Not thread-safe: one Matmul at a time per workspace.
class MatmulWorkspace {
 public:
  MatmulWorkspace(int64_t max_cols, int n_threads);
  uint8_t* thread_scratch(int thread) const;
  uint16_t* thread_wide_scratch(int thread) const;  // the wide path's bf16 group (max_cols x 16)
  int64_t max_cols() const { return max_cols_; }
  int n_threads() const { return n_threads_; }
  GroupClaims& claims() { return claims_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  int64_t max_cols_;
  int n_threads_;
  size_t per_thread_;
  std::unique_ptr<void, Free> mem_;
  GroupClaims claims_;
};

// y[t * ldy + r] for t < n_tokens, r < w.rows. next: the weights of the matmul that follows (or
// nullptr); for few tokens (memory-bound) the pool's idle workers prefetch where each thread
// will start streaming them (ThreadPool::PrefetchAfterJob). Never changes results.
void Matmul(ThreadPool& pool, const PackedWeights& w, const MatmulInput& in, int n_tokens, float* y,
            int64_t ldy, MatmulWorkspace& ws, Isa isa = ActiveIsa(),
            const PackedWeights* next = nullptr);

// Greedy-sampling lm_head: for each token, the row with the largest output (lowest row index on
// ties; NaN never wins) and its value, without writing the rows x n_tokens logits. n_tokens <= 64.
// excluded (optional, one entry per token or none): rows that may not win for that token, as a
// sampler's suppressed tokens (ignore_eos, min_tokens); a token with no row left gets its lowest
// allowed row and a NaN value.
void MatmulArgmax(ThreadPool& pool, const PackedWeights& w, const MatmulInput& in, int n_tokens,
                  int32_t* best_row, float* best_value, MatmulWorkspace& ws, Isa isa = ActiveIsa(),
                  std::span<const std::span<const int32_t>> excluded = {});

// Tokens from which Matmul switches from the in-register GEMV path to the unpack-once GEMM path:
// the ISA tier's measured threshold unless a test forced one (results are identical by
// construction; tests force either path). n = 0 restores the tiers' own thresholds. A tier may
// set its own threshold for some weight kinds (IsaKernels::gemm_min_tokens_kind); a forced one
// applies to every kind.
int GemmMinTokens(Isa isa = ActiveIsa());
// True where wide tokens take the bf16 path (avx512 tier with AMX-BF16 enabled).
bool WidePathAvailable(Isa isa = ActiveIsa());

// The fused feed-forward entry of the wide path: w = [gate; up] (two integer segments of the same
// kind and rows, as PackWeightsConcat builds them), xb the n_wide tokens' bf16 rows; writes
// silu(gate) * up of each token as bf16 into out, in the tile order for w.rows / 2 columns (the
// down projection's wide input). Same bits as Matmul (wide) + SiluMul + ToBf16Tiles.
bool GluWideSupported(const PackedWeights& w, Isa isa = ActiveIsa());
void MatmulGluWide(ThreadPool& pool, const PackedWeights& w, const Bf16Acts& xb, int n_wide,
                   Bf16Acts* out, MatmulWorkspace& ws, Isa isa = ActiveIsa());

// The fused feed-forward entry of the integer path: w = [gate; up] as for MatmulGluWide, n_tokens
// narrow tokens (in.q); writes silu(gate) * up of token t to out + t * ldo (w.rows / 2 floats).
// Same bits as Matmul + SiluMul. Only where a two-group kernel (GEMM, or GEMV from the tier's
// glu_gemv_min_tokens) is there for this many tokens (IntGluSupported): the gate/up floats of a
// prefill chunk (20 MB per 512 tokens for the 0.5B) then never go to memory and back, and a
// batched decode step skips its SiLU pass.
bool IntGluSupported(const PackedWeights& w, int n_tokens, Isa isa = ActiveIsa());
void MatmulGlu(ThreadPool& pool, const PackedWeights& w, const MatmulInput& in, int n_tokens,
               float* out, int64_t ldo, MatmulWorkspace& ws, Isa isa = ActiveIsa());

int GemmMinTokensOverride();
void SetGemmMinTokensForTesting(int n);

}  // namespace brisk

// Activation quantisation: fp32 activations -> int8 blocks of 32 with a float scale per block,
// done once per matmul input (every weight row reuses it). Integer matmul kernels consume this.
//
// Canonical formula (identical bits on every ISA, so results never depend on the ISA chosen for
// quantisation): amax = max|x| over the block; d = amax / 127; id = amax ? 127 / amax : 0;
// q = round-half-even(x * id) clamped to [-127, 127]. The per-block metadata carries the sums
// the kernels need to undo the unsigned-weight offsets (VNNI multiplies unsigned x signed bytes:
// weights are stored as u = q_w + offset, so sum(q_w * a) = sum(u * a) - offset * sum(a)) and
// the min terms of the "d*q + m" formats (m * d_a * sum(a)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/cpu/act_meta.h"
#include "runtime/cpu_features.h"

namespace brisk {

// A view of n_tokens quantised activation rows of `cols` values (cols % 32 == 0).
struct Q8Acts {
  int8_t* qs = nullptr;     // token t: qs + t * qs_stride (64-byte aligned rows)
  ActMeta* meta = nullptr;  // token t: meta + t * meta_stride, cols / 32 entries
  int64_t qs_stride = 0;
  int64_t meta_stride = 0;
  int64_t cols = 0;
  int n_tokens = 0;  // rows filled by the last Quantize call
  int capacity = 0;  // rows the buffer holds
};

// Owns the memory of a Q8Acts for up to max_tokens rows of `cols` values. Allocate it once per
// batch shape (it is the caller's planned scratch; kernels never allocate).
class Q8ActsBuffer {
 public:
  Q8ActsBuffer() = default;
  Q8ActsBuffer(int max_tokens, int64_t cols);
  Q8Acts& view() { return view_; }
  const Q8Acts& view() const { return view_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> mem_;
  Q8Acts view_;
};

// Quantises n_tokens rows of x (row stride ldx floats) into out (out->cols values per row).
void QuantizeActs(const float* x, int64_t ldx, int n_tokens, Q8Acts* out, Isa isa = ActiveIsa());

// Fused RMSNorm + quantise: v = (x * scale) * w with scale = 1 / sqrt(mean(x^2) + eps), then
// out = q8(v). mean(x^2) is summed in float over 16 fixed lanes with a fixed pairwise tree (same
// bits on every ISA); scale is computed in double. If xn is not null, v is also stored there
// (row stride ldxn) for consumers that need fp32 activations (float weights, attention).
void RmsNormQuantize(const float* x, int64_t ldx, int n_tokens, const float* w, float eps,
                     Q8Acts* out, float* xn, int64_t ldxn, Isa isa = ActiveIsa());

// RmsNormQuantize without the quantisation (same xn bits): for rows that only the wide matmul
// path and float weights read.
void RmsNormRows(const float* x, int64_t ldx, int n_tokens, const float* w, float eps, int64_t cols,
                 float* xn, int64_t ldxn, Isa isa = ActiveIsa());

// bf16 activations for the wide matmul path (matmul.h), stored the way its AMX A tiles read
// them: tokens in tiles of 16, and inside a tile each 32-value block's 16 rows contiguous (1 KiB),
// so every tile load reads 1 KiB in sequence (token t, block b at
// ((t / 16) * (cols / 32) + b) * 512 + (t % 16) * 32). Room for max_tokens tokens of up to
// max_cols values, zeros up to the next multiple of 32 tokens (tiles are loaded in pairs).
class Bf16Acts {
 public:
  Bf16Acts() = default;
  Bf16Acts(int max_tokens, int64_t max_cols);
  uint16_t* data() { return static_cast<uint16_t*>(mem_.get()); }
  const uint16_t* data() const { return static_cast<const uint16_t*>(mem_.get()); }
  int64_t max_cols() const { return max_cols_; }
  int capacity() const { return capacity_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> mem_;
  int64_t max_cols_ = 0;
  int capacity_ = 0;
};

// bf16 (round to nearest even; NaN stays NaN; denormals flush to signed zero, as VCVTNE2PS2BF16
// does) of n_tokens rows of cols values (cols % 32 == 0): x (row stride ldx floats) -> tokens
// [t0, t0 + n_tokens) of out, in its tile order for this cols. Same bits on every ISA.
void ToBf16Tiles(const float* x, int64_t ldx, int n_tokens, int64_t cols, Bf16Acts* out, int t0,
                 Isa isa = ActiveIsa());

}  // namespace brisk

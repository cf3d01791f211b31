// Reference CPU kernels: float math on dequantized weights, simple and obviously right. They are
// the oracle for every fast kernel and the "float path" the golden logits are checked with.
// Each output element is reduced in a fixed order whatever the batch size, so results do not
// depend on how many tokens are processed together.
#pragma once

#include <cstdint>

#include "quant/types.h"
#include "runtime/thread_pool.h"

namespace brisk::ref {

// A row-major weight matrix in any supported block format: `rows` rows of `cols` values.
struct Matrix {
  GgmlType type;
  const uint8_t* data;
  int64_t rows;
  int64_t cols;
};

// Fixed-order float dot product.
float Dot(const float* a, const float* b, int64_t n);

// y[t][r] = sum_i W[r][i] * x[t][i] for t < n_tokens (x: n_tokens x cols, y: n_tokens x rows).
// scratch: pool.size() * cols floats (one dequantized row per thread).
void Matmul(ThreadPool& pool, const Matrix& w, const float* x, int n_tokens, float* y,
            float* scratch);

// out = v / sqrt(mean(v^2) + eps) * weight
void RmsNorm(const float* v, const float* weight, int64_t n, double eps, float* out);

// NeoX-style rotary embedding of one head vector (pairs i, i + hd/2) at position pos.
void RopeNeox(float* x, int head_dim, int pos, double theta);

inline float Silu(float x) { return x / (1.0f + __builtin_expf(-x)); }

}  // namespace brisk::ref

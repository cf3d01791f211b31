// Internal: the dequantise-on-the-fly matmul path for formats without packed kernels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "quant/types.h"

namespace brisk::kern {

// y[t * ldy + r] = dot(row r, x[t]) for r < n_rows, t < n_tokens. cols: a multiple of 256 (the
// K-quant super-block) or a single block-aligned row shorter than that.
void RawRows(GgmlType type, const uint8_t* rows, size_t row_bytes, int64_t n_rows, int64_t cols,
             const float* x, int64_t ldx, int n_tokens, float* y, int64_t ldy);

}  // namespace brisk::kern

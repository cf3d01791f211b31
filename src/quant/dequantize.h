// Scalar reference dequantisation and quantisation of ggml block formats. These are the oracle
// every fast kernel is tested against: simple, exact, and associating float operations as the
// reference (ggml / gguf-py) does so results match bit for bit.
#pragma once

#include <cstdint>

#include "quant/types.h"

namespace brisk {

// Dequantizes n values (a multiple of the type's block size) from `src` into `dst`.
// Supported: every type whose TypeTraits::supported is true.
void DequantizeRow(GgmlType type, const void* src, float* dst, int64_t n);

// Quantizes n values (a multiple of the block size) into `dst` (RowBytes(type, n) bytes).
// Supported: every type whose TypeTraits::can_quantize is true.
void QuantizeRow(GgmlType type, const float* src, void* dst, int64_t n);

}  // namespace brisk

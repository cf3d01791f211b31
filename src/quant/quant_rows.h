// Per-type scalar row routines behind DequantizeRow / QuantizeRow (internal to brisk_quant).
// Each takes a whole number of blocks: nb = n / block_size, already checked by the dispatcher.
#pragma once

#include <cstdint>
#include <cstring>

namespace brisk::quant_internal {

// Blocks go through memcpy: a row may start at any byte offset (e.g. inside a GGUF mapping with
// an unusual alignment), and a misaligned struct access would be undefined behaviour.
template <typename Block>
inline Block LoadBlock(const void* src, int64_t i) {
  Block b;
  std::memcpy(&b, static_cast<const uint8_t*>(src) + i * int64_t(sizeof(Block)), sizeof(Block));
  return b;
}
template <typename Block>
inline void StoreBlock(const Block& b, void* dst, int64_t i) {
  std::memcpy(static_cast<uint8_t*>(dst) + i * int64_t(sizeof(Block)), &b, sizeof(Block));
}

// dequantize.cc: legacy 32-value block types.
void DequantizeQ8_0(const void* src, float* dst, int64_t nb);
void DequantizeQ4_0(const void* src, float* dst, int64_t nb);
void DequantizeQ4_1(const void* src, float* dst, int64_t nb);
void DequantizeQ5_0(const void* src, float* dst, int64_t nb);
void DequantizeQ5_1(const void* src, float* dst, int64_t nb);

// dequantize_k.cc: 256-value super-block types.
void DequantizeQ2_K(const void* src, float* dst, int64_t nb);
void DequantizeQ3_K(const void* src, float* dst, int64_t nb);
void DequantizeQ4_K(const void* src, float* dst, int64_t nb);
void DequantizeQ5_K(const void* src, float* dst, int64_t nb);
void DequantizeQ6_K(const void* src, float* dst, int64_t nb);

// dequantize_iq4.cc / quantize_iq4.cc: the non-linear 4-bit types.
void DequantizeIQ4_NL(const void* src, float* dst, int64_t nb);
void DequantizeIQ4_XS(const void* src, float* dst, int64_t nb);
void QuantizeIQ4_NL(const float* src, void* dst, int64_t nb);
void QuantizeIQ4_XS(const float* src, void* dst, int64_t nb);

// quantize.cc: legacy types.
void QuantizeQ8_0(const float* src, void* dst, int64_t nb);
void QuantizeQ4_0(const float* src, void* dst, int64_t nb);
void QuantizeQ4_1(const float* src, void* dst, int64_t nb);
void QuantizeQ5_0(const float* src, void* dst, int64_t nb);
void QuantizeQ5_1(const float* src, void* dst, int64_t nb);

// quantize_k.cc: K types.
void QuantizeQ4_K(const float* src, void* dst, int64_t nb);
void QuantizeQ5_K(const float* src, void* dst, int64_t nb);
void QuantizeQ6_K(const float* src, void* dst, int64_t nb);

}  // namespace brisk::quant_internal

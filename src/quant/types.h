// The ggml tensor types brisk reads and writes: ids as stored in GGUF, block geometry, names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace brisk {

// Numeric values are the GGUF/ggml type ids (stable file format facts).
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ4_NL = 20,
  kIQ4_XS = 23,
  kBF16 = 30,
};

struct TypeTraits {
  GgmlType type;
  std::string_view name;  // as llama.cpp prints it: "Q4_K", "F16", ...
  int block_size;         // values per block (1 for float types)
  int type_size;          // bytes per block
  bool supported;         // brisk can dequantize it (and so load it)
  bool can_quantize;      // brisk has a scalar quantizer for it
};

// nullptr for an id brisk does not know (unknown ids in a file are rejected by the reader).
const TypeTraits* FindTypeTraits(uint32_t id);
const TypeTraits& GetTypeTraits(GgmlType t);  // BRISK_CHECKs that t is known
std::string_view TypeName(GgmlType t);
// Parses "q4_k", "Q8_0", "f16", ... (case-insensitive); false when unknown.
bool ParseTypeName(std::string_view s, GgmlType* out);

// Bytes of a row of n values; n must be a multiple of the block size (BRISK_CHECKed).
size_t RowBytes(GgmlType t, int64_t n);

}  // namespace brisk

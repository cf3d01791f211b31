// Quantisation recipes: which block type each tensor of a model gets for a given file type,
// chosen exactly as llama.cpp's quantizer chooses (so brisk's files have the same mix of types,
// and so the same size and speed, as the official ones).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "quant/types.h"

namespace brisk {

// llama.cpp's general.file_type ids for the recipes brisk can produce or recognise.
enum class FileType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ8_0 = 7,
  kQ5_0 = 8,
  kQ5_1 = 9,
  kQ2_K = 10,
  kQ3_K_M = 12,
  kQ4_K_M = 15,
  kQ5_K_M = 17,
  kQ6_K = 18,
  kIQ4_NL = 25,
  kIQ4_XS = 30,
  kBF16 = 32,
};

// "q4_k_m", "Q8_0", "f16", ... (case-insensitive); false when unknown.
bool ParseFileType(std::string_view s, FileType* out);
std::string FileTypeString(FileType ft);  // "Q4_K_M"
// The file types `brisk synth` / `brisk quantize` can write (every tensor type has a quantizer).
bool CanWriteFileType(FileType ft);

struct TensorPlacement {
  std::string_view name;  // GGUF tensor name, e.g. "blk.3.ffn_down.weight"
  int n_dims = 2;
  int64_t ne0 = 0;  // row length
  int layer = -1;   // block index for blk.N.* tensors
  int n_layer = 0;
  bool has_output = false;  // the model has a separate output.weight (untied)
  int n_gqa = 1;            // query heads per KV head (attention heads / KV heads)
};

// The type llama.cpp would give this tensor in a file of type `ft`. 1-D tensors (norms, biases)
// stay F32.
GgmlType ChooseTensorType(FileType ft, const TensorPlacement& t);

}  // namespace brisk

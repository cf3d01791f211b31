// `brisk quantize`: rewrites a model with another file type, choosing each tensor's type with
// llama.cpp's recipe (quant/recipe.h) so the output loads in llama.cpp unchanged.
#pragma once

#include <functional>
#include <string>

#include "quant/recipe.h"
#include "util/status.h"

namespace brisk {

struct QuantizeOptions {
  FileType type = FileType::kQ4_K_M;
  int threads = 0;
  std::function<void(double)> progress;  // fraction of values done
};

// Reads a GGUF file (any supported type) or a Hugging Face directory (whose tokenizer.json and
// chat template become GGUF metadata) and writes `output` as a GGUF of `options.type`.
// Tensors already in their target type are copied bit for bit.
Status QuantizeGguf(const std::string& input, const std::string& output,
                    const QuantizeOptions& options);

}  // namespace brisk

// The tokenizer a model carries: its GGUF metadata, or the HF directory's tokenizer.json.
#pragma once

#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace brisk {

Result<Tokenizer> TokenizerForModel(const Model& model);

}  // namespace brisk

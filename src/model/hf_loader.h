// Loading a Hugging Face model directory: config.json, one or sharded *.safetensors (with
// model.safetensors.index.json), BF16/F16/F32 tensors, for qwen2 and qwen3. Weight views point
// straight into the mapped shards (zero copy); the chat template comes from
// tokenizer_config.json (or chat_template.jinja) and tokenizer.json's path is recorded.
#pragma once

#include <memory>
#include <string>

#include "formats/hf_config.h"
#include "model/model.h"

namespace brisk {

Result<std::unique_ptr<Model>> LoadHfDirectory(const std::string& dir);

// Maps and validates config.json's fields (transformers' defaults for absent optional ones).
// tied_embeddings is config's tie_word_embeddings here; the loader also ties when the directory
// has no lm_head.weight.
Result<ModelConfig> ConfigFromHf(const hf::Config& hf);

}  // namespace brisk

// Loading a Hugging Face model directory: config.json, one or sharded *.safetensors (with
// model.safetensors.index.json), BF16/F16/F32 tensors, for qwen2 and qwen3.
#pragma once

#include <memory>
#include <string>

#include "model/model.h"

namespace brisk {

Result<std::unique_ptr<Model>> LoadHfDirectory(const std::string& dir);

}  // namespace brisk

// Parsing the JSON documents of HF model folders (config.json, tokenizer_config.json,
// model.safetensors.index.json), which are all one object at the top level.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/status.h"

namespace brisk {

// The object `text` holds; "<origin>: invalid JSON: ..." or "<origin>: not a JSON object".
Result<nlohmann::json> ParseJsonObject(std::string_view text, const std::string& origin);

}  // namespace brisk

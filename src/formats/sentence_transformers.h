// The sentence-transformers files of a Hugging Face model folder, as embedding models ship them
// (Qwen3-Embedding): modules.json lists the modules (Transformer, Pooling, Normalize, ...) and the
// Pooling module's folder holds a config.json whose pooling_mode_* flags name the pooling. Both
// files are untrusted: a module path must be a plain folder name inside the model folder.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace brisk::st_modules {

struct Info {
  bool present = false;    // the folder has a modules.json
  std::string pooling;     // "lasttoken", "mean", "cls", "max", ... ; "" without a Pooling module
  bool normalize = false;  // a Normalize module is listed
};

// Info of `dir`; present = false (and no error) when there is no modules.json.
Result<Info> Read(const std::string& dir);

// The pooling a Pooling module's config.json names: the one pooling_mode_* flag that is true
// ("lasttoken" for pooling_mode_lasttoken, ...), or its "pooling_mode" string. Several flags or
// none is an error naming `origin`.
Result<std::string> ParsePoolingConfig(std::string_view text, const std::string& origin);

}  // namespace brisk::st_modules

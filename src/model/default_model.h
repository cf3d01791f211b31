// The embedded default model: commands run without -m use a synthetic Qwen2.5-0.5B Q4_K_M file
// in $BRISK_HOME (default ~/.cache/brisk), generated on first use.
#pragma once

#include <string>

#include "util/status.h"

namespace brisk {

std::string BriskHome();
std::string DefaultModelPath();

// Returns `model` unchanged when given; otherwise the default model's path, generating the file
// first if it is missing (progress on stderr).
Result<std::string> ResolveModelPath(const std::string& model);

}  // namespace brisk

// llama.cpp's "file type" (general.file_type): the quantisation recipe of a whole file.
#pragma once

#include <cstdint>
#include <string>

namespace brisk {

// "Q4_K_M", "F16", ...; "unknown (N)" for ids brisk does not know.
std::string FileTypeName(uint32_t file_type);

}  // namespace brisk

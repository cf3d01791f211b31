// How /v1/embeddings writes a vector: a JSON array of the floats (each in its shortest form that
// reads back as the same float32), or, for encoding_format "base64", the base64 of the
// little-endian float32 bytes (what OpenAI's SDKs request by default and decode).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace brisk::server {

std::string FloatArrayJson(std::span<const float> v);
std::string Base64(std::string_view bytes);
// The base64 of v's little-endian float32 bytes, as a JSON string (quotes included).
std::string Float32Base64Json(std::span<const float> v);

}  // namespace brisk::server

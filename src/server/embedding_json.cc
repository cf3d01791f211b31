#include "server/embedding_json.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace brisk::server {

std::string FloatArrayJson(std::span<const float> v) {
  std::string out = "[";
  out.reserve(v.size() * 12 + 2);
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    // JSON has no NaN or infinity; a finite model never makes them, but never write bad JSON.
    const float x = std::isfinite(v[i]) ? v[i] : 0.0f;
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    out.append(buf, r.ptr);
  }
  out += ']';
  return out;
}

std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8 |
                       uint32_t(uint8_t(bytes[i + 2]));
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(n >> s) & 63];
  }
  if (const size_t rest = bytes.size() - i; rest > 0) {
    uint32_t n = uint32_t(uint8_t(bytes[i])) << 16;
    if (rest == 2) n |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string Float32Base64Json(std::span<const float> v) {
  std::string bytes;
  bytes.reserve(v.size() * 4);
  for (float x : v) {
    const uint32_t u = std::bit_cast<uint32_t>(x);
    for (int b = 0; b < 4; ++b) bytes += char((u >> (8 * b)) & 0xff);  // little-endian
  }
  return "\"" + Base64(bytes) + "\"";
}

}  // namespace brisk::server

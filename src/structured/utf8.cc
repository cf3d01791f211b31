// The UTF-8 helpers of grammar.h: strict decoding (no overlong forms, surrogates or values past
// U+10FFFF), so a frontend never turns invalid input into a character it did not see.
#include "structured/grammar.h"

namespace brisk::structured {

uint32_t DecodeUtf8(std::string_view s, size_t* i) {
  constexpr uint32_t kBad = 0xFFFD;
  const uint8_t b0 = uint8_t(s[*i]);
  int n = 0;
  uint32_t c = 0, min = 0;
  if (b0 < 0x80) {
    ++*i;
    return b0;
  } else if ((b0 & 0xE0) == 0xC0) {
    n = 2, c = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, c = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, c = b0 & 0x07, min = 0x10000;
  } else {
    ++*i;
    return kBad;
  }
  if (s.size() - *i < size_t(n)) {
    ++*i;
    return kBad;
  }
  for (int k = 1; k < n; ++k) {
    const uint8_t b = uint8_t(s[*i + size_t(k)]);
    if ((b & 0xC0) != 0x80) {
      ++*i;
      return kBad;
    }
    c = (c << 6) | (b & 0x3F);
  }
  if (c < min || c > kMaxCodePoint || (c >= 0xD800 && c <= 0xDFFF)) {
    ++*i;
    return kBad;
  }
  *i += size_t(n);
  return c;
}

void AppendUtf8(uint32_t c, std::string* out) {
  if (c > kMaxCodePoint || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
  if (c < 0x80) {
    out->push_back(char(c));
  } else if (c < 0x800) {
    out->push_back(char(0xC0 | (c >> 6)));
    out->push_back(char(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(char(0xE0 | (c >> 12)));
    out->push_back(char(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(char(0x80 | (c & 0x3F)));
  } else {
    out->push_back(char(0xF0 | (c >> 18)));
    out->push_back(char(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(char(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(char(0x80 | (c & 0x3F)));
  }
}

}  // namespace brisk::structured

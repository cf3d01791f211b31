// The plain UTF-8 encoder the structured tests check against (written out from RFC 3629, not
// taken from the code under test).
#pragma once

#include <cstdint>
#include <string>

namespace brisk::structured::test {

inline std::string Utf8Reference(uint32_t c) {
  std::string s;
  if (c < 0x80) {
    s += char(c);
  } else if (c < 0x800) {
    s += char(0xC0 | (c >> 6)), s += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    s += char(0xE0 | (c >> 12)), s += char(0x80 | ((c >> 6) & 0x3F)), s += char(0x80 | (c & 0x3F));
  } else {
    s += char(0xF0 | (c >> 18)), s += char(0x80 | ((c >> 12) & 0x3F));
    s += char(0x80 | ((c >> 6) & 0x3F)), s += char(0x80 | (c & 0x3F));
  }
  return s;
}

}  // namespace brisk::structured::test

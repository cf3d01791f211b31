// Unicode White_Space above ASCII: the one list shared by the tokenizer's pre-tokenizer and the
// chat templates' Python str.isspace. The two differ only below U+0080, which each checks itself.
#pragma once

#include <cstdint>

namespace brisk {

// U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F and U+3000.
constexpr bool IsNonAsciiWhiteSpace(uint32_t cp) {
  switch (cp) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

}  // namespace brisk

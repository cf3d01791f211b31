// The GPT-2 byte-level alphabet: every byte 0..255 is shown as one printable code point
// (printable Latin-1 bytes map to themselves, the other 68 bytes to U+0100..U+0143 in order).
// Vocabulary files store tokens in this alphabet ("Ġhello" is " hello").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace brisk::tok {

namespace detail {
struct ByteLevelTables {
  char32_t to_cp[256] = {};
  int16_t to_byte[324] = {};  // the alphabet lies in U+0000..U+0143
  constexpr ByteLevelTables() {
    for (auto& b : to_byte) b = -1;
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      to_cp[b] = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + extra++);
      to_byte[to_cp[b]] = static_cast<int16_t>(b);
    }
  }
};
inline constexpr ByteLevelTables kByteLevel;
}  // namespace detail

// The code point byte `b` is shown as.
inline char32_t ByteToUnicode(uint8_t b) { return detail::kByteLevel.to_cp[b]; }
// The byte shown as `cp`, or -1 when cp is not in the alphabet.
inline int UnicodeToByte(char32_t cp) { return cp < 324 ? detail::kByteLevel.to_byte[cp] : -1; }

// Byte-level text of raw bytes ("\x20hi" -> "Ġhi").
std::string BytesToByteLevel(std::string_view bytes);
// Raw bytes of a byte-level token text. Like HF's ByteLevel decoder: when some character is
// not in the alphabet, the token's own UTF-8 text is used unchanged.
std::string ByteLevelToBytes(std::string_view text);

}  // namespace brisk::tok

#include "tokenizer/byte_level.h"

#include "tokenizer/unicode.h"

namespace brisk::tok {
std::string BytesToByteLevel(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) AppendUtf8(ByteToUnicode(static_cast<uint8_t>(c)), &out);
  return out;
}

std::string ByteLevelToBytes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const Utf8Step st = DecodeUtf8(text.data() + i, text.size() - i);
    const int b = st.ok ? UnicodeToByte(st.cp) : -1;
    if (b < 0) return std::string(text);
    out.push_back(static_cast<char>(b));
    i += st.len;
  }
  return out;
}

}  // namespace brisk::tok

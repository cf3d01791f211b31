#include "tokenizer/pretokenizer.h"

#include "tokenizer/unicode.h"

namespace brisk::tok {
namespace {

struct Ch {
  char32_t cp = 0;
  uint32_t len = 0;  // 0 at the end of the text
  CharClass cls = CharClass::kOther;
};

inline Ch At(std::string_view t, size_t pos) {
  if (pos >= t.size()) return {};
  const uint8_t b = static_cast<uint8_t>(t[pos]);
  if (b < 0x80) return {b, 1, ClassOf(b)};
  const Utf8Step st = DecodeUtf8(t.data() + pos, t.size() - pos);
  if (!st.ok) return {kReplacementChar, st.len, CharClass::kOther};
  return {st.cp, st.len, ClassOf(st.cp)};
}

// End of the run of characters of class `cls` starting at `pos`.
inline size_t RunOf(std::string_view t, size_t pos, CharClass cls) {
  while (true) {
    const Ch c = At(t, pos);
    if (c.len == 0 || c.cls != cls) return pos;
    pos += c.len;
  }
}

// `[\r\n]*` from pos.
inline size_t RunOfNewlines(std::string_view t, size_t pos) {
  while (pos < t.size() && (t[pos] == '\r' || t[pos] == '\n')) ++pos;
  return pos;
}

// Case-insensitive letter for the contraction alternative: ASCII letters fold to lower case,
// and U+017F LATIN SMALL LETTER LONG S folds to 's' (Unicode simple case folding).
inline char32_t Fold(char32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + ('a' - 'A');
  if (cp == 0x17F) return 's';
  return cp;
}

}  // namespace

size_t NextQwen2Piece(std::string_view t, size_t pos) {
  const Ch c0 = At(t, pos);
  if (c0.len == 0) return t.size();
  const size_t p1 = pos + c0.len;

  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
  if (c0.cp == '\'') {
    const Ch c1 = At(t, p1);
    const char32_t f1 = Fold(c1.cp);
    if (f1 == 's' || f1 == 't' || f1 == 'm' || f1 == 'd') return p1 + c1.len;
    if (f1 == 'r' || f1 == 'v' || f1 == 'l') {
      const Ch c2 = At(t, p1 + c1.len);
      const char32_t f2 = Fold(c2.cp);
      if (f2 == (f1 == 'l' ? 'l' : 'e')) return p1 + c1.len + c2.len;
    }
  }

  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c0.cls == CharClass::kLetter) return RunOf(t, p1, CharClass::kLetter);
  if (c0.cls == CharClass::kOther || c0.cls == CharClass::kSpace) {
    const Ch c1 = At(t, p1);
    if (c1.cls == CharClass::kLetter && c1.len > 0) {
      return RunOf(t, p1 + c1.len, CharClass::kLetter);
    }
  }

  // \p{N}
  if (c0.cls == CharClass::kNumber) return p1;

  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  if (c0.cp == ' ') {
    const Ch c1 = At(t, p1);
    if (c1.len > 0 && c1.cls == CharClass::kOther) {
      return RunOfNewlines(t, RunOf(t, p1 + c1.len, CharClass::kOther));
    }
  }
  if (c0.cls == CharClass::kOther) return RunOfNewlines(t, RunOf(t, p1, CharClass::kOther));

  // c0 is whitespace. Scan the whole run, noting its last \r/\n and its last character.
  size_t end = pos, last_newline_end = 0, last_start = pos;
  bool saw_newline = false;
  while (true) {
    const Ch c = At(t, end);
    if (c.len == 0 || (c.cls != CharClass::kSpace && c.cls != CharClass::kNewline)) break;
    last_start = end;
    end += c.len;
    if (c.cls == CharClass::kNewline) {
      saw_newline = true;
      last_newline_end = end;
    }
  }
  // \s*[\r\n]+ : the run up to and including its last newline.
  if (saw_newline) return last_newline_end;
  // \s+(?!\S) : the whole run at the end of the text, else all of it but its last character.
  if (end == t.size()) return end;
  if (last_start > pos) return last_start;
  // \s+
  return end;
}

}  // namespace brisk::tok

#include "tokenizer/unicode.h"

#include <utf8proc.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "util/unicode_space.h"

namespace brisk::tok {

Utf8Step DecodeUtf8(const char* s, size_t n) {
  const auto* p = reinterpret_cast<const uint8_t*>(s);
  const uint8_t b0 = p[0];
  if (b0 < 0x80) return {b0, 1, true, false};
  // Well-formed sequences (Unicode Table 3-7): the second byte's range depends on the lead.
  int need = 0;
  char32_t cp = 0;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    cp = b0 & 0x0F;
    if (b0 == 0xE0)
      lo = 0xA0;  // no overlongs
    else if (b0 == 0xED)
      hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    cp = b0 & 0x07;
    if (b0 == 0xF0)
      lo = 0x90;  // no overlongs
    else if (b0 == 0xF4)
      hi = 0x8F;  // <= U+10FFFF
  } else {
    return {kReplacementChar, 1, false, false};  // 80..C1, F5..FF never start a sequence
  }
  uint32_t i = 1;
  for (int k = 0; k < need; ++k, ++i) {
    if (i >= n) return {kReplacementChar, i, false, true};
    const uint8_t b = p[i];
    if (b < lo || b > hi) return {kReplacementChar, i, false, false};
    cp = (cp << 6) | (b & 0x3F);
    lo = 0x80;
    hi = 0xBF;
  }
  return {cp, i, true, false};
}

namespace {

// Index of the first byte >= 0x80 at or after `i`, or n.
size_t SkipAscii(const char* s, size_t i, size_t n) {
  while (i + 8 <= n) {
    uint64_t w;
    std::memcpy(&w, s + i, 8);
    if (w & 0x8080808080808080ull) break;
    i += 8;
  }
  while (i < n && static_cast<uint8_t>(s[i]) < 0x80) ++i;
  return i;
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  const size_t n = s.size();
  size_t i = 0;
  while (true) {
    i = SkipAscii(s.data(), i, n);
    if (i >= n) return true;
    const Utf8Step st = DecodeUtf8(s.data() + i, n - i);
    if (!st.ok) return false;
    i += st.len;
  }
}

size_t AppendUtf8Lossy(std::string_view s, bool final, std::string* out) {
  const size_t n = s.size();
  size_t i = 0, run = 0;  // [run, i) is valid and not yet appended
  while (true) {
    i = SkipAscii(s.data(), i, n);
    if (i >= n) break;
    const Utf8Step st = DecodeUtf8(s.data() + i, n - i);
    if (st.ok) {
      i += st.len;
      continue;
    }
    out->append(s.data() + run, i - run);
    if (st.truncated && !final) return i;  // hold back: more bytes may complete it
    AppendUtf8(kReplacementChar, out);
    i += st.len;
    run = i;
  }
  out->append(s.data() + run, n - run);
  return n;
}

std::string ToValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  AppendUtf8Lossy(s, /*final=*/true, &out);
  return out;
}

void AppendUtf8(char32_t cp, std::string* out) {
  char buf[4];
  size_t n;
  if (cp < 0x80) {
    buf[0] = static_cast<char>(cp);
    n = 1;
  } else if (cp < 0x800) {
    buf[0] = static_cast<char>(0xC0 | (cp >> 6));
    buf[1] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    buf[0] = static_cast<char>(0xE0 | (cp >> 12));
    buf[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    buf[2] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    buf[0] = static_cast<char>(0xF0 | (cp >> 18));
    buf[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    buf[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    buf[3] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 4;
  }
  out->append(buf, n);
}

bool IsWhiteSpace(char32_t cp) {
  if (cp < 0x80) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  return IsNonAsciiWhiteSpace(cp);
}

namespace {

struct AsciiClasses {
  CharClass c[128] = {};
  constexpr AsciiClasses() {
    for (int i = 0; i < 128; ++i) {
      CharClass k = CharClass::kOther;
      if ((i >= 'a' && i <= 'z') || (i >= 'A' && i <= 'Z'))
        k = CharClass::kLetter;
      else if (i >= '0' && i <= '9')
        k = CharClass::kNumber;
      else if (i == '\r' || i == '\n')
        k = CharClass::kNewline;
      else if (i == '\t' || i == '\v' || i == '\f' || i == ' ')
        k = CharClass::kSpace;
      c[i] = k;
    }
  }
};
constexpr AsciiClasses kAscii;

}  // namespace

CharClass ClassOf(char32_t cp) {
  if (cp < 128) return kAscii.c[cp];
  if (IsWhiteSpace(cp)) return CharClass::kSpace;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
      return CharClass::kLetter;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return CharClass::kNumber;
    default:
      return CharClass::kOther;
  }
}

// ---- NFC ------------------------------------------------------------------------------------
//
// A code point is "NFC-stable" here when it has combining class 0, no canonical decomposition,
// and never occurs as a non-initial character of a canonical decomposition (so it can never be
// the second half of a composition). A string made only of such characters is unchanged by NFC.
// ASCII characters are all stable, and text may be cut before any of them without changing the
// result, so NFC only has to run on [ASCII char before a non-ASCII run, end of that run) units
// that contain an unstable character. The table is built once from utf8proc's own data, so it
// follows whatever Unicode version the linked utf8proc has.

namespace {

class NfcUnstableTable {
 public:
  NfcUnstableTable() : bits_(0x110000 / 64, 0) {
    for (char32_t cp = 0x80; cp < 0x110000; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
      if (p->combining_class != 0) Set(cp);
      const bool canonical_decomp = p->decomp_seqindex != UINT16_MAX && p->decomp_type == 0;
      const bool hangul = cp >= 0xAC00 && cp <= 0xD7A3;
      if (!canonical_decomp && !hangul) continue;
      if (!hangul) Set(cp);  // Hangul syllables recompose to themselves
      utf8proc_int32_t buf[32];
      utf8proc_int32_t last_boundclass = 0;
      const utf8proc_ssize_t m = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buf, 32,
                                                         UTF8PROC_DECOMPOSE, &last_boundclass);
      for (utf8proc_ssize_t k = 1; k < m && k < 32; ++k) Set(static_cast<char32_t>(buf[k]));
    }
    for (char32_t cp = 0x1100; cp <= 0x11FF; ++cp) Set(cp);  // conjoining jamo
  }
  bool Unstable(char32_t cp) const { return cp < 0x110000 && ((bits_[cp >> 6] >> (cp & 63)) & 1); }

 private:
  void Set(char32_t cp) {
    if (cp < 0x110000) bits_[cp >> 6] |= uint64_t{1} << (cp & 63);
  }
  std::vector<uint64_t> bits_;
};

const NfcUnstableTable& Unstable() {
  static const NfcUnstableTable table;
  return table;
}

// True when the non-ASCII bytes s[b, e) (valid UTF-8) hold only NFC-stable characters.
bool AllStable(const NfcUnstableTable& t, const char* s, size_t b, size_t e) {
  while (b < e) {
    const Utf8Step st = DecodeUtf8(s + b, e - b);
    if (!st.ok || t.Unstable(st.cp)) return false;
    b += st.len;
  }
  return true;
}

void AppendNfcUnit(std::string_view unit, std::string* out) {
  utf8proc_uint8_t* dst = nullptr;
  const utf8proc_ssize_t m =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(unit.data()),
                   static_cast<utf8proc_ssize_t>(unit.size()), &dst,
                   static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (m >= 0 && dst != nullptr) {
    out->append(reinterpret_cast<const char*>(dst), static_cast<size_t>(m));
  } else {
    out->append(unit);  // not reachable for valid UTF-8; keep the text rather than lose it
  }
  std::free(dst);
}

}  // namespace

std::string_view NfcView(std::string_view s, std::string* storage) {
  const char* d = s.data();
  const size_t n = s.size();
  size_t pos = SkipAscii(d, 0, n);
  if (pos >= n) return s;
  const NfcUnstableTable& table = Unstable();
  bool building = false;
  size_t copied = 0;  // s[0, copied) is already in *storage (when building)
  while (pos < n) {
    size_t end = pos;
    while (end < n && static_cast<uint8_t>(d[end]) >= 0x80) ++end;
    if (!AllStable(table, d, pos, end)) {
      const size_t unit_begin = pos > copied ? pos - 1 : pos;  // include the ASCII starter
      if (!building) {
        building = true;
        storage->clear();
        storage->reserve(n + n / 8 + 16);
      }
      storage->append(d + copied, unit_begin - copied);
      AppendNfcUnit(std::string_view(d + unit_begin, end - unit_begin), storage);
      copied = end;
    }
    pos = SkipAscii(d, end, n);
  }
  if (!building) return s;
  storage->append(d + copied, n - copied);
  return *storage;
}

std::string Nfc(std::string_view s) {
  std::string storage;
  const std::string_view v = NfcView(s, &storage);
  if (v.data() == storage.data() && !storage.empty()) return storage;
  return std::string(v);
}

std::string NfcReference(std::string_view s) {
  std::string out;
  AppendNfcUnit(s, &out);
  return out;
}

}  // namespace brisk::tok

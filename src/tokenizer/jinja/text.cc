#include "tokenizer/jinja/text.h"

#include <algorithm>

#include "util/unicode_space.h"

namespace brisk::jinja::text {

uint32_t Decode(std::string_view s, size_t* pos) {
  const size_t i = *pos;
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    *pos = i + 1;
    return b0;
  }
  int len = 0;
  uint32_t cp = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    *pos = i + 1;
    return b0;
  }
  if (i + len > s.size()) {
    *pos = i + 1;
    return b0;
  }
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      *pos = i + 1;
      return b0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  *pos = i + len;
  return cp;
}

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool IsAscii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

size_t Length(std::string_view s) {
  if (IsAscii(s)) return s.size();
  size_t n = 0;
  for (size_t pos = 0; pos < s.size(); ++n) Decode(s, &pos);
  return n;
}

std::vector<size_t> CodePointOffsets(std::string_view s) {
  std::vector<size_t> offsets;
  offsets.reserve(s.size() + 1);
  for (size_t pos = 0; pos < s.size();) {
    offsets.push_back(pos);
    Decode(s, &pos);
  }
  offsets.push_back(s.size());
  return offsets;
}

size_t CodePointIndex(std::string_view s, size_t byte_offset) {
  size_t n = 0;
  for (size_t pos = 0; pos < byte_offset && pos < s.size(); ++n) Decode(s, &pos);
  return n;
}

bool IsSpace(uint32_t cp) {
  // Python also counts the ASCII separators U+001C..U+001F as space.
  if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
  return IsNonAsciiWhiteSpace(cp);
}

namespace {

bool InSet(uint32_t cp, const std::string* chars) {
  if (chars == nullptr) return IsSpace(cp);
  for (size_t pos = 0; pos < chars->size();) {
    if (Decode(*chars, &pos) == cp) return true;
  }
  return false;
}

// Byte offset where the code point ending at `end` starts.
size_t PrevStart(std::string_view s, size_t end) {
  size_t i = end - 1;
  int back = 0;
  while (i > 0 && back < 3 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) {
    --i;
    ++back;
  }
  size_t pos = i;
  Decode(s, &pos);
  return pos == end ? i : end - 1;
}

}  // namespace

std::string_view Strip(std::string_view s, const std::string* chars, bool left, bool right) {
  size_t begin = 0;
  size_t end = s.size();
  if (left) {
    while (begin < end) {
      size_t next = begin;
      if (!InSet(Decode(s, &next), chars)) break;
      begin = next;
    }
  }
  if (right) {
    while (end > begin) {
      const size_t start = PrevStart(s, end);
      size_t pos = start;
      if (!InSet(Decode(s, &pos), chars)) break;
      end = start;
    }
  }
  return s.substr(begin, end - begin);
}

namespace {

std::vector<std::string> SplitWhitespace(std::string_view s, int64_t maxsplit, bool from_right) {
  // Collect all whitespace-separated words with their byte ranges, then merge the unsplit part.
  struct Word {
    size_t begin, end;
  };
  std::vector<Word> words;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t next = pos;
    if (IsSpace(Decode(s, &next))) {
      pos = next;
      continue;
    }
    Word w{pos, pos};
    while (pos < s.size()) {
      next = pos;
      if (IsSpace(Decode(s, &next))) break;
      pos = next;
    }
    w.end = pos;
    words.push_back(w);
  }
  std::vector<std::string> out;
  if (maxsplit < 0 || static_cast<size_t>(maxsplit) + 1 >= words.size()) {
    for (const Word& w : words) out.emplace_back(s.substr(w.begin, w.end - w.begin));
    return out;
  }
  const size_t keep = static_cast<size_t>(maxsplit);
  if (!from_right) {
    for (size_t i = 0; i < keep; ++i) {
      out.emplace_back(s.substr(words[i].begin, words[i].end - words[i].begin));
    }
    // Python keeps the remainder verbatim from the next word start.
    out.emplace_back(s.substr(words[keep].begin));
  } else {
    const size_t first = words.size() - keep;
    out.emplace_back(s.substr(0, words[first - 1].end));
    for (size_t i = first; i < words.size(); ++i) {
      out.emplace_back(s.substr(words[i].begin, words[i].end - words[i].begin));
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> Split(std::string_view s, const std::string* sep, int64_t maxsplit,
                               bool from_right) {
  if (sep == nullptr) return SplitWhitespace(s, maxsplit, from_right);
  std::vector<std::string> out;
  const std::string_view d = *sep;
  if (!from_right) {
    size_t start = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      const size_t hit = s.find(d, start);
      if (hit == std::string_view::npos) break;
      out.emplace_back(s.substr(start, hit - start));
      start = hit + d.size();
    }
    out.emplace_back(s.substr(start));
    return out;
  }
  size_t end = s.size();
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    if (end < d.size()) break;
    const size_t hit = s.rfind(d, end - d.size());
    if (hit == std::string_view::npos) break;
    out.emplace_back(s.substr(hit + d.size(), end - hit - d.size()));
    end = hit;
  }
  out.emplace_back(s.substr(0, end));
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string_view> SplitLines(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t here = pos;
    const uint32_t cp = Decode(s, &pos);
    const bool brk = cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || cp == 0x1C ||
                     cp == 0x1D || cp == 0x1E || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
    if (!brk) continue;
    out.push_back(s.substr(start, here - start));
    if (cp == '\r' && pos < s.size() && s[pos] == '\n') ++pos;
    start = pos;
  }
  if (start < s.size()) out.push_back(s.substr(start));
  return out;
}

std::string Replace(std::string_view s, std::string_view from, std::string_view to, int64_t count) {
  std::string out;
  out.reserve(s.size());
  int64_t done = 0;
  if (from.empty()) {
    // Python inserts `to` before every code point and at the end.
    size_t pos = 0;
    while (pos < s.size()) {
      if (count < 0 || done < count) {
        out.append(to);
        ++done;
      }
      const size_t start = pos;
      Decode(s, &pos);
      out.append(s.substr(start, pos - start));
    }
    if (count < 0 || done < count) out.append(to);
    return out;
  }
  size_t start = 0;
  while (count < 0 || done < count) {
    const size_t hit = s.find(from, start);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(start, hit - start));
    out.append(to);
    start = hit + from.size();
    ++done;
  }
  out.append(s.substr(start));
  return out;
}

namespace {

// Simple (one-to-one) case mappings for the scripts chat templates plausibly touch: ASCII,
// Latin-1, Latin Extended-A, Greek, Cyrillic, Armenian and fullwidth Latin.
uint32_t LowerCp(uint32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7) || (c >= 0x391 && c <= 0x3AB && c != 0x3A2) ||
      (c >= 0x410 && c <= 0x42F) || (c >= 0xFF21 && c <= 0xFF3A)) {
    return c + 0x20;
  }
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  if (c >= 0x531 && c <= 0x556) return c + 0x30;
  if (c == 0x178) return 0xFF;
  if (c == 0x130) return 'i';
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 0x25;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 0x3F;
  if ((c >= 0x100 && c <= 0x12F) || (c >= 0x132 && c <= 0x137) || (c >= 0x14A && c <= 0x177) ||
      (c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF)) {
    return c | 1;
  }
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1) ? c + 1 : c;
  return c;
}

uint32_t UpperCp(uint32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7) || (c >= 0x3B1 && c <= 0x3CB && c != 0x3C2) ||
      (c >= 0x430 && c <= 0x44F) || (c >= 0xFF41 && c <= 0xFF5A)) {
    return c - 0x20;
  }
  if (c == 0x3C2) return 0x3A3;
  if (c >= 0x450 && c <= 0x45F) return c - 0x50;
  if (c >= 0x561 && c <= 0x586) return c - 0x30;
  if (c == 0xFF) return 0x178;
  if (c == 0x131) return 'I';
  if (c == 0xB5) return 0x39C;
  if (c == 0x17F) return 'S';
  if (c == 0x3AC) return 0x386;
  if (c >= 0x3AD && c <= 0x3AF) return c - 0x25;
  if (c == 0x3CC) return 0x38C;
  if (c == 0x3CD || c == 0x3CE) return c - 0x3F;
  if ((c >= 0x100 && c <= 0x12F) || (c >= 0x132 && c <= 0x137) || (c >= 0x14A && c <= 0x177) ||
      (c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF)) {
    return c & ~1u;
  }
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c & 1) ? c : c - 1;
  return c;
}

bool IsCased(uint32_t c) { return LowerCp(c) != c || UpperCp(c) != c || c == 0xDF; }

void AppendUpper(uint32_t c, std::string* out) {
  if (c == 0xDF) {  // ß -> SS (Python's full case mapping)
    out->append("SS");
    return;
  }
  AppendUtf8(out, UpperCp(c));
}

enum class Case { kUpper, kLower, kCapitalize, kTitle };

std::string MapCase(std::string_view s, Case mode) {
  std::string out;
  out.reserve(s.size());
  bool prev_cased = false;
  bool first = true;
  for (size_t pos = 0; pos < s.size();) {
    const auto b = static_cast<unsigned char>(s[pos]);
    uint32_t c;
    if (b < 0x80) {
      c = b;
      ++pos;
    } else {
      c = Decode(s, &pos);
    }
    bool up = false;
    switch (mode) {
      case Case::kUpper:
        up = true;
        break;
      case Case::kLower:
        break;
      case Case::kCapitalize:
        up = first;
        break;
      case Case::kTitle:
        up = !prev_cased;
        break;
    }
    if (up) {
      AppendUpper(c, &out);
    } else {
      AppendUtf8(&out, LowerCp(c));
    }
    prev_cased = IsCased(c);
    first = false;
  }
  return out;
}

}  // namespace

std::string Upper(std::string_view s) { return MapCase(s, Case::kUpper); }
std::string Lower(std::string_view s) { return MapCase(s, Case::kLower); }
std::string Capitalize(std::string_view s) { return MapCase(s, Case::kCapitalize); }
std::string Title(std::string_view s) { return MapCase(s, Case::kTitle); }

}  // namespace brisk::jinja::text

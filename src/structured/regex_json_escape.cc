#include "structured/regex_json_escape.h"

#include <algorithm>
#include <utility>

namespace brisk::structured {
namespace {

// The characters with a two-character escape, and the letter after the backslash.
constexpr std::pair<uint32_t, uint32_t> kShortEscapes[] = {
    {'"', '"'}, {'\\', '\\'}, {0x08, 'b'}, {0x0C, 'f'}, {0x0A, 'n'}, {0x0D, 'r'}, {0x09, 't'}};

bool HasShortEscape(uint32_t c) {
  for (auto [ch, letter] : kShortEscapes)
    if (ch == c) return true;
  return false;
}

bool Contains(const std::vector<CharRange>& set, uint32_t c) {
  for (const CharRange& r : set) {
    if (c < r.lo) return false;  // sorted: nothing later can hold c
    if (c <= r.hi) return true;
  }
  return false;
}

// a ∩ b, both normalised.
std::vector<CharRange> Intersect(const std::vector<CharRange>& a, const std::vector<CharRange>& b) {
  std::vector<CharRange> out;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    const uint32_t lo = std::max(a[i].lo, b[j].lo), hi = std::min(a[i].hi, b[j].hi);
    if (lo <= hi) out.push_back({lo, hi});
    (a[i].hi < b[j].hi) ? ++i : ++j;
  }
  return out;
}

uint32_t HexChar(uint32_t v) { return v < 10 ? '0' + v : 'a' + (v - 10); }

}  // namespace

Sequence JsonEscapes::Spell(const std::vector<CharRange>& chars) {
  static const std::vector<CharRange> kPlain =
      Symbol::NotSet({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}).chars;
  std::vector<Sequence> spellings;
  if (std::vector<CharRange> plain = Intersect(chars, kPlain); !plain.empty())
    spellings.push_back({Symbol{std::move(plain), -1}});
  std::vector<CharRange> letters;
  for (auto [c, letter] : kShortEscapes)
    if (Contains(chars, c)) letters.push_back({letter, letter});
  if (!letters.empty()) spellings.push_back({Symbol::Char('\\'), Symbol::Set(std::move(letters))});
  for (uint32_t high : {0u, 1u}) {  // \u0000-\u000f and \u0010-\u001f
    std::vector<CharRange> lows;
    for (uint32_t low = 0; low < 16; ++low) {
      const uint32_t c = high * 16 + low;
      if (Contains(chars, c) && !HasShortEscape(c)) lows.push_back({HexChar(low), HexChar(low)});
    }
    if (lows.empty()) continue;
    Sequence s = GrammarBuilder::Literal("\\u00");
    s.push_back(Symbol::Char(HexChar(high)));
    s.push_back(Symbol::Set(std::move(lows)));
    spellings.push_back(std::move(s));
  }
  if (spellings.size() == 1) return spellings[0];
  std::vector<std::pair<uint32_t, uint32_t>> key;
  for (const CharRange& r : chars) key.emplace_back(r.lo, r.hi);
  auto it = rules_.find(key);
  if (it == rules_.end()) it = rules_.emplace(key, b_.AddRule(name_, std::move(spellings))).first;
  return {Symbol::Ref(it->second)};
}

}  // namespace brisk::structured

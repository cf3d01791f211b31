// Reads an ECMAScript regular expression (the syntax JSON Schema's "pattern" and guided_regex
// use, with the Unicode-mode meaning of characters: one code point each) into a RegexAst.
// Offsets in messages count characters from 0. Where the standard's web-compatibility rules
// read a stray '{', '}' or ']' as itself, so does this parser.
#include <algorithm>
#include <string>
#include <utility>

#include "structured/regex_ast.h"

namespace brisk::structured {
namespace {

using Kind = RegexNode::Kind;
using Ranges = std::vector<CharRange>;

const Ranges kDigit = {{'0', '9'}};
const Ranges kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
// ECMAScript WhiteSpace and LineTerminator.
const Ranges kSpace = {{0x09, 0x0D},     {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680},
                       {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F},
                       {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
// '.' matches everything but the line terminators.
const Ranges kLineTerminators = {{0x0A, 0x0A}, {0x0D, 0x0D}, {0x2028, 0x2029}};

int HexValue(uint32_t c) {
  if (c >= '0' && c <= '9') return int(c - '0');
  if (c >= 'a' && c <= 'f') return int(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return int(c - 'A' + 10);
  return -1;
}

bool IsDigit(uint32_t c) { return c >= '0' && c <= '9'; }
bool IsAsciiAlnum(uint32_t c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// A class atom or escape: one character, or a set (\d, \w, \s and their negations).
struct ClassItem {
  bool is_set = false;
  uint32_t c = 0;
  Ranges set;
};

class RegexParser {
 public:
  explicit RegexParser(std::vector<uint32_t> cps) : cps_(std::move(cps)) {}

  Result<RegexAst> Run() {
    BRISK_ASSIGN_OR_RETURN(ast_.root, ParseAlternation(0));
    if (!AtEnd()) return Error(i_, "')' without a matching '('");
    return std::move(ast_);
  }

 private:
  bool AtEnd() const { return i_ >= cps_.size(); }
  uint32_t Peek(size_t ahead = 0) const {
    return i_ + ahead < cps_.size() ? cps_[i_ + ahead] : 0xFFFFFFFF;
  }
  static Status Error(size_t at, const std::string& what) {
    return Status::InvalidArgument("regex offset " + std::to_string(at) + ": " + what);
  }
  int32_t Leaf(Kind kind, size_t at, Ranges chars = {}) {
    RegexNode n;
    n.kind = kind;
    n.chars = std::move(chars);
    n.offset = at;
    return ast_.Add(std::move(n));
  }
  int32_t Inner(Kind kind, size_t at, std::vector<int32_t> children) {
    RegexNode n;
    n.kind = kind;
    n.children = std::move(children);
    n.offset = at;
    return ast_.Add(std::move(n));
  }

  Result<int32_t> ParseAlternation(int depth) {
    const size_t at = i_;
    std::vector<int32_t> branches;
    BRISK_ASSIGN_OR_RETURN(int32_t first, ParseConcat(depth));
    branches.push_back(first);
    while (Peek() == '|') {
      ++i_;
      BRISK_ASSIGN_OR_RETURN(int32_t next, ParseConcat(depth));
      branches.push_back(next);
    }
    return branches.size() == 1 ? branches[0] : Inner(Kind::kAlt, at, std::move(branches));
  }

  Result<int32_t> ParseConcat(int depth) {
    const size_t at = i_;
    std::vector<int32_t> items;
    while (!AtEnd() && Peek() != '|' && Peek() != ')') {
      BRISK_ASSIGN_OR_RETURN(int32_t item, ParseQuantified(depth));
      const RegexNode& n = ast_.nodes[size_t(item)];
      if (n.kind == Kind::kConcat) {  // a group's sequence: splice (the language is the same)
        const std::vector<int32_t> inner = n.children;
        items.insert(items.end(), inner.begin(), inner.end());
      } else {
        items.push_back(item);
      }
    }
    if (items.empty()) return Leaf(Kind::kEmpty, at);
    return items.size() == 1 ? items[0] : Inner(Kind::kConcat, at, std::move(items));
  }

  Result<int32_t> ParseQuantified(int depth) {
    const size_t at = i_;
    BRISK_ASSIGN_OR_RETURN(int32_t atom, ParseAtom(depth));
    int min = 0, max = -1;
    const size_t q = i_;
    BRISK_ASSIGN_OR_RETURN(bool quantified, ParseQuantifier(&min, &max));
    if (!quantified) return atom;
    const Kind kind = ast_.nodes[size_t(atom)].kind;
    if (kind == Kind::kStart || kind == Kind::kEnd)
      return Error(q, "nothing to repeat (an anchor cannot be quantified)");
    if (Peek() == '?') ++i_;  // lazy: the same strings, in another order of preference
    int dummy_min = 0, dummy_max = 0;
    const size_t after = i_;
    BRISK_ASSIGN_OR_RETURN(bool again, ParseQuantifier(&dummy_min, &dummy_max));
    if (again) return Error(after, "nothing to repeat (a quantifier follows a quantifier)");
    const int32_t node = Inner(Kind::kRepeat, at, {atom});
    ast_.nodes[size_t(node)].min = min;
    ast_.nodes[size_t(node)].max = max;
    return node;
  }

  // * + ? {m} {m,} {m,n} at i_ (consumed when present); a '{' that does not form a quantifier
  // is no quantifier (it is then read as itself).
  Result<bool> ParseQuantifier(int* min, int* max) {
    const uint32_t c = Peek();
    if (c == '*' || c == '+' || c == '?') {
      ++i_;
      *min = c == '+' ? 1 : 0;
      *max = c == '?' ? 1 : -1;
      return true;
    }
    if (c != '{') return false;
    size_t j = i_ + 1;
    long long lo = 0, hi = -1;
    if (!ReadNumber(&j, &lo)) return false;
    if (j < cps_.size() && cps_[j] == ',') {
      ++j;
      if (j < cps_.size() && IsDigit(cps_[j]) && !ReadNumber(&j, &hi)) return false;
    } else {
      hi = lo;
    }
    if (j >= cps_.size() || cps_[j] != '}') return false;
    constexpr long long kLimit = GrammarLimits::kMaxRepeat;
    if (lo > kLimit || hi > kLimit)
      return Error(i_, "repetition bound exceeds the limit of " + std::to_string(kLimit));
    if (hi >= 0 && lo > hi) return Error(i_, "numbers out of order in {m,n} quantifier");
    i_ = j + 1;
    *min = int(lo);
    *max = int(hi);
    return true;
  }

  // Digits at *j; saturates past the repeat limit (the caller refuses the value).
  bool ReadNumber(size_t* j, long long* out) const {
    if (*j >= cps_.size() || !IsDigit(cps_[*j])) return false;
    long long n = 0;
    for (; *j < cps_.size() && IsDigit(cps_[*j]); ++*j)
      n = std::min<long long>(n * 10 + (cps_[*j] - '0'), GrammarLimits::kMaxRepeat + 1LL);
    *out = n;
    return true;
  }

  Result<int32_t> ParseAtom(int depth) {
    const size_t at = i_;
    const uint32_t c = Peek();
    switch (c) {
      case '(':
        return ParseGroup(depth);
      case '[':
        return ParseClass();
      case '.':
        ++i_;
        return Leaf(Kind::kChars, at, Symbol::NotSet(kLineTerminators).chars);
      case '^':
        ++i_;
        return Leaf(Kind::kStart, at);
      case '$':
        ++i_;
        return Leaf(Kind::kEnd, at);
      case '*':
      case '+':
      case '?':
        return Error(at, "nothing to repeat");
      default:
        break;
    }
    if (c == '{') {
      int min = 0, max = 0;
      BRISK_ASSIGN_OR_RETURN(bool quantifier, ParseQuantifier(&min, &max));
      if (quantifier) return Error(at, "nothing to repeat");
    }
    if (c == '\\') {
      BRISK_ASSIGN_OR_RETURN(ClassItem e, ParseEscape(false));
      return Leaf(Kind::kChars, at, e.is_set ? std::move(e.set) : Ranges{{e.c, e.c}});
    }
    ++i_;
    return Leaf(Kind::kChars, at, {{c, c}});
  }

  Result<int32_t> ParseGroup(int depth) {
    const size_t open = i_++;
    if (depth + 1 > kMaxRegexNesting)
      return Error(open, "groups nest deeper than " + std::to_string(kMaxRegexNesting));
    if (Peek() == '?') BRISK_RETURN_IF_ERROR(ParseGroupPrefix(open));
    BRISK_ASSIGN_OR_RETURN(int32_t inner, ParseAlternation(depth + 1));
    if (Peek() != ')')
      return Error(open, "group is not closed (expected ')' before the end of the pattern)");
    ++i_;
    return inner;
  }

  // After "(?": accepts ":" and a group name "<name>" (also Python's "P<name>"); refuses
  // lookaround and modifiers, which no grammar can enforce or which change the language.
  Status ParseGroupPrefix(size_t open) {
    const uint32_t c = Peek(1);
    if (c == ':') {
      i_ += 2;
      return Status::Ok();
    }
    if (c == '=' || c == '!')
      return Error(open, "lookahead (?" + std::string(1, char(c)) + "...) is not supported");
    const bool python = c == 'P' && Peek(2) == '<';
    if (c == '<' && (Peek(2) == '=' || Peek(2) == '!'))
      return Error(open,
                   "lookbehind (?<" + std::string(1, char(Peek(2))) + "...) is not supported");
    if (c != '<' && !python)
      return Error(open, "inline flags or modifiers (?...) are not supported");
    i_ += python ? 3 : 2;
    const size_t name = i_;
    while (!AtEnd() && Peek() != '>' && (IsAsciiAlnum(Peek()) || Peek() == '_' || Peek() == '$'))
      ++i_;
    if (Peek() != '>' || i_ == name) return Error(open, "group name is not a name closed by '>'");
    ++i_;
    return Status::Ok();
  }

  Result<int32_t> ParseClass() {
    const size_t open = i_++;
    const bool negated = Peek() == '^';
    if (negated) ++i_;
    Ranges ranges;
    while (Peek() != ']') {
      if (AtEnd()) return Error(open, "character class is not closed (expected ']')");
      const size_t at = i_;
      BRISK_ASSIGN_OR_RETURN(ClassItem lo, ParseClassItem());
      if (Peek() == '-' && Peek(1) != ']' && i_ + 1 < cps_.size()) {
        ++i_;
        BRISK_ASSIGN_OR_RETURN(ClassItem hi, ParseClassItem());
        if (lo.is_set || hi.is_set)
          return Error(at, "a class escape such as \\d cannot be the end of a range");
        if (hi.c < lo.c) return Error(at, "range out of order in character class");
        ranges.push_back({lo.c, hi.c});
      } else if (lo.is_set) {
        ranges.insert(ranges.end(), lo.set.begin(), lo.set.end());
      } else {
        ranges.push_back({lo.c, lo.c});
      }
    }
    ++i_;
    Ranges chars = negated ? Symbol::NotSet(ranges).chars : Symbol::Set(ranges).chars;
    if (chars.empty()) return Error(open, "character class matches nothing");
    return Leaf(Kind::kChars, open, std::move(chars));
  }

  Result<ClassItem> ParseClassItem() {
    if (Peek() == '\\') return ParseEscape(true);
    ClassItem item;
    item.c = cps_[i_++];
    return item;
  }

  Result<ClassItem> ParseEscape(bool in_class) {
    const size_t at = i_;
    if (i_ + 1 >= cps_.size()) return Error(at, "the pattern ends with a lone '\\'");
    const uint32_t e = cps_[i_ + 1];
    i_ += 2;
    ClassItem item;
    if (e == 'd' || e == 'w' || e == 's' || e == 'D' || e == 'W' || e == 'S') {
      const Ranges& base = (e == 'd' || e == 'D')   ? kDigit
                           : (e == 'w' || e == 'W') ? kWord
                                                    : kSpace;
      item.is_set = true;
      item.set = (e >= 'a') ? base : Symbol::NotSet(base).chars;
      return item;
    }
    BRISK_ASSIGN_OR_RETURN(item.c, ParseCharEscape(at, e, in_class));
    return item;
  }

  // The character an escape (other than a class escape) stands for; i_ is past "\e".
  Result<uint32_t> ParseCharEscape(size_t at, uint32_t e, bool in_class) {
    switch (e) {
      case 't':
        return 0x09u;
      case 'n':
        return 0x0Au;
      case 'v':
        return 0x0Bu;
      case 'f':
        return 0x0Cu;
      case 'r':
        return 0x0Du;
      case 'x':
        return ParseHexDigits(at, 2);
      case 'u':
        return ParseUnicodeEscape(at);
      case 'c':
        return ParseControl(at);
      case '0':
        if (IsDigit(Peek())) return Error(at, "octal escapes and backreferences are not supported");
        return 0u;
      case 'b':
        if (in_class) return 0x08u;  // [\b] is backspace
        return Error(at, "word boundary \\b is not supported");
      case 'B':
        return Error(at, "non-word-boundary \\B is not supported");
      case 'k':
        return Error(at, "backreference \\k<...> is not supported");
      case 'p':
      case 'P':
        return Error(at, "Unicode property escapes \\p{...} are not supported");
      default:
        break;
    }
    if (IsDigit(e))
      return Error(at, "backreference \\" + std::string(1, char(e)) +
                           " is not supported (a grammar cannot compare text)");
    if (IsAsciiAlnum(e)) return Error(at, "unknown escape \\" + std::string(1, char(e)));
    return e;  // an escaped punctuation or other character stands for itself
  }

  Result<uint32_t> ParseHexDigits(size_t at, int digits) {
    uint32_t value = 0;
    for (int k = 0; k < digits; ++k, ++i_) {
      const int h = HexValue(Peek());
      if (h < 0) return Error(at, "escape expects " + std::to_string(digits) + " hex digits");
      value = value * 16 + uint32_t(h);
    }
    return value;
  }

  // \uHHHH (a surrogate pair of two such escapes is one character) or \u{H...}.
  Result<uint32_t> ParseUnicodeEscape(size_t at) {
    if (Peek() == '{') {
      ++i_;
      uint32_t value = 0;
      const size_t first = i_;
      for (; HexValue(Peek()) >= 0; ++i_) {
        value = value * 16 + uint32_t(HexValue(Peek()));
        if (value > kMaxCodePoint) return Error(at, "\\u{...} above U+10FFFF");
      }
      if (i_ == first || Peek() != '}') return Error(at, "\\u{ expects hex digits and '}'");
      ++i_;
      return value;
    }
    BRISK_ASSIGN_OR_RETURN(uint32_t c, ParseHexDigits(at, 4));
    if (c >= 0xD800 && c <= 0xDBFF && Peek() == '\\' && Peek(1) == 'u') {
      const size_t save = i_;
      i_ += 2;
      Result<uint32_t> low = ParseHexDigits(save, 4);
      if (low.ok() && *low >= 0xDC00 && *low <= 0xDFFF)
        return 0x10000 + ((c - 0xD800) << 10) + (*low - 0xDC00);
      i_ = save;
    }
    return c;
  }

  Result<uint32_t> ParseControl(size_t at) {
    const uint32_t l = Peek();
    if (!((l >= 'a' && l <= 'z') || (l >= 'A' && l <= 'Z')))
      return Error(at, "\\c expects a letter");
    ++i_;
    return l % 32;
  }

  std::vector<uint32_t> cps_;
  size_t i_ = 0;
  RegexAst ast_;
};

}  // namespace

Result<RegexAst> ParseRegex(std::string_view pattern) {
  std::vector<uint32_t> cps;
  for (size_t i = 0; i < pattern.size();) {
    const size_t at = i;
    const uint32_t c = DecodeUtf8(pattern, &i);
    if (c == 0xFFFD && i - at == 1)
      return Status::InvalidArgument("regex byte " + std::to_string(at) + ": invalid UTF-8");
    cps.push_back(c);
  }
  return RegexParser(std::move(cps)).Run();
}

}  // namespace brisk::structured

// A recursive-descent reader of GBNF (gbnf.h) that builds rules as it reads: groups with
// alternatives and repetitions become rules of their own, named after the rule they occur in.
// Whitespace follows llama.cpp: newlines end a rule except inside parentheses or after '|'.
#include "structured/gbnf.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace brisk::structured {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A rule named in the text: created at its first mention, so rules may be used before they
// are defined.
struct NamedRule {
  int32_t id = -1;
  size_t first_use = std::string_view::npos;  // offset of the first reference
  size_t defined_at = std::string_view::npos;
};

class GbnfParser {
 public:
  explicit GbnfParser(std::string_view text) : text_(text) {}

  Result<Grammar> Run() {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // a byte-order mark
    SkipSpace(true);
    while (!AtEnd()) {
      BRISK_RETURN_IF_ERROR(ParseRule());
      SkipSpace(true);
    }
    BRISK_RETURN_IF_ERROR(CheckAllDefined());
    auto root = named_.find("root");
    if (root == named_.end() || root->second.defined_at == std::string_view::npos)
      return Status::InvalidArgument(
          "grammar has no 'root' rule (the rule every sentence starts from)");
    return std::move(b_).Build(root->second.id);
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  // "line L, column C" (1-based, in characters) of byte offset `at`.
  std::string Where(size_t at) const {
    int line = 1, column = 1;
    for (size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line, column = 1;
      } else if ((uint8_t(text_[i]) & 0xC0) != 0x80) {  // count characters, not bytes
        ++column;
      }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
  }

  Status ErrorAt(size_t at, const std::string& what) const {
    return Status::InvalidArgument("grammar " + Where(at) + ": " + what);
  }

  // What stands at `at`, for messages: a quoted character or "the end".
  std::string Found(size_t at) const {
    if (at >= text_.size()) return "the end of the grammar";
    if (text_[at] == '\n' || text_[at] == '\r') return "the end of the line";
    size_t i = at;
    std::string c;
    AppendUtf8(DecodeUtf8(text_, &i), &c);
    return "'" + c + "'";
  }

  // Spaces, tabs and comments; line breaks too when `newline_ok`.
  void SkipSpace(bool newline_ok) {
    while (!AtEnd()) {
      const char c = Peek();
      if (c == ' ' || c == '\t' || (newline_ok && (c == '\n' || c == '\r'))) {
        ++pos_;
      } else if (c == '#') {
        while (!AtEnd() && Peek() != '\n' && Peek() != '\r') ++pos_;
      } else {
        return;
      }
    }
  }

  std::string_view ParseName() {
    const size_t start = pos_;
    while (!AtEnd() && IsNameChar(Peek())) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  NamedRule& Named(std::string_view name) {
    auto [it, fresh] = named_.try_emplace(std::string(name));
    if (fresh) it->second.id = b_.NewRule(name);
    return it->second;
  }

  Status ParseRule() {
    const size_t start = pos_;
    const std::string_view name = ParseName();
    if (name.empty()) {
      if (Peek() == '|')
        return ErrorAt(start,
                       "expected a rule name, found '|' (outside parentheses an alternative "
                       "continues a rule only when '|' ends the previous line)");
      return ErrorAt(start, "expected a rule name, found " + Found(start));
    }
    SkipSpace(false);
    if (text_.substr(pos_, 3) != "::=")
      return ErrorAt(
          pos_, "expected '::=' after rule name '" + std::string(name) + "', found " + Found(pos_));
    pos_ += 3;
    NamedRule& rule = Named(name);
    if (rule.defined_at != std::string_view::npos)
      return ErrorAt(start, "rule '" + std::string(name) + "' is defined twice (first at " +
                                Where(rule.defined_at) + ")");
    rule.defined_at = start;
    current_ = std::string(name);
    SkipSpace(true);
    BRISK_ASSIGN_OR_RETURN(std::vector<Sequence> alternatives, ParseAlternates(false, 0));
    if (!AtEnd() && Peek() != '\n' && Peek() != '\r') return UnexpectedAfterRule();
    b_.Define(rule.id, std::move(alternatives));
    return Status::Ok();
  }

  Status UnexpectedAfterRule() const {
    if (text_.substr(pos_, 3) == "::=")
      return ErrorAt(pos_, "found '::=' inside a rule: each rule must start on a new line");
    if (Peek() == ')') return ErrorAt(pos_, "found ')' without a matching '('");
    if (Peek() == '<' || Peek() == '!') return TokenRefused();
    return ErrorAt(pos_, "expected a symbol, '|' or the end of the line, found " + Found(pos_));
  }

  Status TokenRefused() const {
    return ErrorAt(pos_,
                   "token references (<[id]>, <text>, !<...>) are not supported: they name "
                   "tokens of one tokenizer; write the text as a string literal instead");
  }

  Result<std::vector<Sequence>> ParseAlternates(bool nested, int depth) {
    std::vector<Sequence> alternatives;
    BRISK_ASSIGN_OR_RETURN(Sequence first, ParseSequence(nested, depth));
    alternatives.push_back(std::move(first));
    while (Peek() == '|') {
      ++pos_;
      SkipSpace(true);
      BRISK_ASSIGN_OR_RETURN(Sequence next, ParseSequence(nested, depth));
      alternatives.push_back(std::move(next));
    }
    return alternatives;
  }

  // Symbols until something that is not one (')', '|', a line end outside parentheses, the
  // end); a repetition operator applies to the item just before it.
  Result<Sequence> ParseSequence(bool nested, int depth) {
    Sequence seq;
    size_t last = std::string_view::npos;  // where the last item starts in seq
    while (!AtEnd()) {
      const char c = Peek();
      const size_t item_start = seq.size();
      if (c == '*' || c == '+' || c == '?' || c == '{') {
        BRISK_RETURN_IF_ERROR(ParseRepetition(&seq, last));
      } else if (c == '"') {
        BRISK_ASSIGN_OR_RETURN(Sequence lit, ParseLiteral());
        seq.insert(seq.end(), lit.begin(), lit.end());
        last = item_start;
      } else if (c == '[') {
        BRISK_ASSIGN_OR_RETURN(Symbol set, ParseClass());
        seq.push_back(std::move(set));
        last = item_start;
      } else if (c == '.') {
        ++pos_;
        seq.push_back(Symbol::NotSet({}));
        last = item_start;
      } else if (c == '(') {
        BRISK_ASSIGN_OR_RETURN(Sequence group, ParseGroup(depth));
        seq.insert(seq.end(), group.begin(), group.end());
        last = item_start;
      } else if (IsNameChar(c)) {
        ParseReference(&seq);
        last = item_start;
      } else if (c == '<' || c == '!') {
        return TokenRefused();
      } else {
        break;
      }
      SkipSpace(nested);
    }
    return seq;
  }

  void ParseReference(Sequence* seq) {
    const size_t start = pos_;
    NamedRule& rule = Named(ParseName());
    if (rule.first_use == std::string_view::npos) rule.first_use = start;
    seq->push_back(Symbol::Ref(rule.id));
  }

  // "(" alternatives ")": one alternative is spliced in place, several become a rule.
  Result<Sequence> ParseGroup(int depth) {
    const size_t open = pos_;
    if (depth + 1 > kMaxGbnfNesting)
      return ErrorAt(open, "parentheses nest deeper than " + std::to_string(kMaxGbnfNesting));
    if (b_.rule_count() >= GrammarLimits::kMaxRules)
      return ErrorAt(open, "grammar too large: more than " +
                               std::to_string(GrammarLimits::kMaxRules) + " rules");
    ++pos_;
    SkipSpace(true);
    BRISK_ASSIGN_OR_RETURN(std::vector<Sequence> alternatives, ParseAlternates(true, depth + 1));
    if (Peek() != ')') {
      if (Peek() == '<' || Peek() == '!') return TokenRefused();
      return ErrorAt(pos_,
                     "expected ')' to close the '(' at " + Where(open) + ", found " + Found(pos_));
    }
    ++pos_;
    if (alternatives.size() == 1) return std::move(alternatives[0]);
    return Sequence{Symbol::Ref(b_.AddRule(current_, std::move(alternatives)))};
  }

  Status ParseRepetition(Sequence* seq, size_t last) {
    const size_t at = pos_;
    const char op = Peek();
    if (last == std::string_view::npos)
      return ErrorAt(at, std::string("expected a symbol before '") + op + "' to repeat");
    int min = 0, max = -1;
    ++pos_;
    if (op == '+') min = 1;
    if (op == '?') max = 1;
    if (op == '{') BRISK_RETURN_IF_ERROR(ParseBraces(&min, &max));
    Sequence item(seq->begin() + std::ptrdiff_t(last), seq->end());
    seq->resize(last);
    Result<int32_t> rule = b_.Repeat(current_, std::move(item), min, max);
    if (!rule.ok()) return ErrorAt(at, rule.message());
    seq->push_back(Symbol::Ref(*rule));
    return Status::Ok();
  }

  // After '{': "m}", "m,}" or "m,n}", spaces allowed between the parts.
  Status ParseBraces(int* min, int* max) {
    SkipSpace(true);
    BRISK_RETURN_IF_ERROR(ParseCount(min));
    SkipSpace(true);
    *max = *min;
    if (Peek() == ',') {
      ++pos_;
      SkipSpace(true);
      *max = -1;
      if (Peek() >= '0' && Peek() <= '9') BRISK_RETURN_IF_ERROR(ParseCount(max));
      SkipSpace(true);
    }
    if (Peek() != '}')
      return ErrorAt(pos_, "expected '}' to end the repetition, found " + Found(pos_));
    ++pos_;
    if (*max >= 0 && *min > *max)
      return ErrorAt(pos_ - 1, "repetition {" + std::to_string(*min) + "," + std::to_string(*max) +
                                   "}: the minimum exceeds the maximum");
    return Status::Ok();
  }

  Status ParseCount(int* out) {
    const size_t start = pos_;
    if (!(Peek() >= '0' && Peek() <= '9'))
      return ErrorAt(pos_, "expected a number in the repetition, found " + Found(pos_));
    long long n = 0;
    for (; Peek() >= '0' && Peek() <= '9'; ++pos_) {
      n = n * 10 + (Peek() - '0');
      if (n > GrammarLimits::kMaxRepeat)
        return ErrorAt(start, "repetition count exceeds the limit of " +
                                  std::to_string(GrammarLimits::kMaxRepeat));
    }
    *out = int(n);
    return Status::Ok();
  }

  Result<Sequence> ParseLiteral() {
    const size_t open = pos_++;
    Sequence out;
    while (Peek() != '"') {
      if (AtEnd())
        return ErrorAt(open, "string literal is not closed (expected '\"' before the end)");
      BRISK_ASSIGN_OR_RETURN(uint32_t c, ParseChar());
      out.push_back(Symbol::Char(c));
    }
    ++pos_;
    return out;
  }

  Result<Symbol> ParseClass() {
    const size_t open = pos_++;
    const bool negated = Peek() == '^';
    if (negated) ++pos_;
    std::vector<CharRange> ranges;
    while (Peek() != ']') {
      if (AtEnd())
        return ErrorAt(open, "character class is not closed (expected ']' before the end)");
      const size_t at = pos_;
      BRISK_ASSIGN_OR_RETURN(uint32_t lo, ParseChar());
      uint32_t hi = lo;
      if (Peek() == '-' && Peek(1) != ']' && pos_ + 1 < text_.size()) {
        ++pos_;
        BRISK_ASSIGN_OR_RETURN(hi, ParseChar());
        if (hi < lo) return ErrorAt(at, "character range is reversed (its end is below its start)");
      }
      ranges.push_back({lo, hi});
    }
    ++pos_;
    if (!negated && ranges.empty())
      return ErrorAt(open, "empty character class [] matches nothing");
    return negated ? Symbol::NotSet(std::move(ranges)) : Symbol::Set(std::move(ranges));
  }

  // One character of a literal or class: an escape or one UTF-8 character.
  Result<uint32_t> ParseChar() {
    const size_t at = pos_;
    if (Peek() != '\\') {
      const uint32_t c = DecodeUtf8(text_, &pos_);
      if (c == 0xFFFD && pos_ - at == 1) return ErrorAt(at, "invalid UTF-8");
      return c;
    }
    const char e = Peek(1);
    pos_ += 2;
    switch (e) {
      case 'x':
        return ParseHex(at, 2);
      case 'u':
        return ParseHex(at, 4);
      case 'U':
        return ParseHex(at, 8);
      case 't':
        return uint32_t('\t');
      case 'r':
        return uint32_t('\r');
      case 'n':
        return uint32_t('\n');
      case '\\':
      case '"':
      case '[':
      case ']':
        return uint32_t(uint8_t(e));
      default:
        break;
    }
    if (at + 1 >= text_.size()) return ErrorAt(at, "a '\\' ends the grammar");
    return ErrorAt(at, "unknown escape '\\' " + Found(at + 1) +
                           " (expected one of \\n \\r \\t \\\\ \\\" \\[ \\] \\x \\u \\U)");
  }

  Result<uint32_t> ParseHex(size_t at, int digits) {
    uint32_t value = 0;
    for (int k = 0; k < digits; ++k, ++pos_) {
      const int h = HexValue(Peek());
      if (h < 0)
        return ErrorAt(
            at, "escape expects " + std::to_string(digits) + " hex digits, found " + Found(pos_));
      value = value * 16 + uint32_t(h);
    }
    if (value > kMaxCodePoint) return ErrorAt(at, "code point above U+10FFFF");
    return value;
  }

  Status CheckAllDefined() const {
    const std::pair<const std::string, NamedRule>* first = nullptr;
    for (const auto& entry : named_) {
      if (entry.second.defined_at != std::string_view::npos) continue;
      if (!first || entry.second.first_use < first->second.first_use) first = &entry;
    }
    if (!first) return Status::Ok();
    return ErrorAt(first->second.first_use, "undefined rule '" + first->first + "'");
  }

  std::string_view text_;
  size_t pos_ = 0;
  GrammarBuilder b_;
  std::unordered_map<std::string, NamedRule> named_;
  std::string current_;  // the rule being read: generated rules are named after it
};

}  // namespace

Result<Grammar> ParseGbnf(std::string_view text) { return GbnfParser(text).Run(); }

}  // namespace brisk::structured

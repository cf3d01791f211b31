#include "engine/token_constraint.h"

#include "tokenizer/tokenizer.h"

namespace brisk {
namespace {

bool IsSpace(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
bool IsHex(unsigned char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

bool JsonPrefixChecker::Feed(std::string_view bytes) {
  for (char c : bytes)
    if (!Byte(static_cast<unsigned char>(c))) return false;
  return true;
}

bool JsonPrefixChecker::Close(char bracket) {
  if (stack_.empty() || stack_.back() != bracket) return false;
  stack_.pop_back();
  mode_ = stack_.empty() ? Mode::kDone : Mode::kAfterValue;
  return true;
}

bool JsonPrefixChecker::ValueStart(unsigned char c) {
  switch (c) {
    case '{':
    case '[':
      if (int(stack_.size()) >= kMaxDepth) return false;
      stack_.push_back(char(c));
      mode_ = c == '{' ? Mode::kObjectFirst : Mode::kArrayFirst;
      return true;
    case '"':
      mode_ = Mode::kString;
      key_ = false;
      return true;
    case 't':
      literal_ = "true";
      break;
    case 'f':
      literal_ = "false";
      break;
    case 'n':
      literal_ = "null";
      break;
    default:
      if (c == '-' || IsDigit(c)) {
        mode_ = Mode::kNumber;
        num_ = c == '-' ? Num::kSign : c == '0' ? Num::kZero : Num::kInt;
        return true;
      }
      return false;
  }
  mode_ = Mode::kLiteral;
  pending_ = 1;
  return true;
}

bool JsonPrefixChecker::Byte(unsigned char c) {
  // Whitespace between tokens: allowed where the grammar allows it, in bounded runs.
  const bool between_tokens = mode_ != Mode::kString && mode_ != Mode::kEscape &&
                              mode_ != Mode::kUnicode && mode_ != Mode::kLiteral &&
                              mode_ != Mode::kNumber;
  if (IsSpace(c) && between_tokens) return ++whitespace_run_ <= kMaxWhitespaceRun;
  if (mode_ != Mode::kString) whitespace_run_ = 0;

  switch (mode_) {
    case Mode::kTop:
      return c == '{' && ValueStart(c);
    case Mode::kValue:
      return ValueStart(c);
    case Mode::kArrayFirst:
      return c == ']' ? Close('[') : ValueStart(c);
    case Mode::kObjectFirst:
      if (c == '}') return Close('{');
      [[fallthrough]];
    case Mode::kKey:
      if (c != '"') return false;
      mode_ = Mode::kString;
      key_ = true;
      return true;
    case Mode::kColon:
      if (c != ':') return false;
      mode_ = Mode::kValue;
      return true;
    case Mode::kAfterValue:
      if (c == ',') {
        mode_ = stack_.back() == '{' ? Mode::kKey : Mode::kValue;
        return true;
      }
      return (c == '}' || c == ']') && Close(c == '}' ? '{' : '[');
    case Mode::kString:
      if (c == '"') {
        mode_ = key_ ? Mode::kColon : Mode::kAfterValue;
        return true;
      }
      if (c == '\\') mode_ = Mode::kEscape;
      return c >= 0x20;  // raw control characters are not allowed in JSON strings
    case Mode::kEscape:
      if (c == 'u') {
        mode_ = Mode::kUnicode;
        pending_ = 4;
        return true;
      }
      mode_ = Mode::kString;
      return c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' ||
             c == 't';
    case Mode::kUnicode:
      if (!IsHex(c)) return false;
      if (--pending_ == 0) mode_ = Mode::kString;
      return true;
    case Mode::kLiteral:
      if (literal_[pending_] != char(c)) return false;
      if (literal_[++pending_] == '\0') mode_ = Mode::kAfterValue;
      return true;
    case Mode::kNumber:
      switch (num_) {
        case Num::kSign:
          if (!IsDigit(c)) return false;
          num_ = c == '0' ? Num::kZero : Num::kInt;
          return true;
        case Num::kInt:
          if (IsDigit(c)) return true;
          [[fallthrough]];
        case Num::kZero:
          if (c == '.') return num_ = Num::kDot, true;
          if (c == 'e' || c == 'E') return num_ = Num::kExp, true;
          break;  // the number ends here; c belongs to what follows
        case Num::kDot:
          return IsDigit(c) && (num_ = Num::kFrac, true);
        case Num::kFrac:
          if (IsDigit(c)) return true;
          if (c == 'e' || c == 'E') return num_ = Num::kExp, true;
          break;
        case Num::kExp:
          if (c == '+' || c == '-') return num_ = Num::kExpSign, true;
          [[fallthrough]];
        case Num::kExpSign:
          return IsDigit(c) && (num_ = Num::kExpDigits, true);
        case Num::kExpDigits:
          if (IsDigit(c)) return true;
          break;
      }
      mode_ = Mode::kAfterValue;
      return IsSpace(c) ? ++whitespace_run_ <= kMaxWhitespaceRun : Byte(c);
    case Mode::kDone:
      return false;  // one object, then the end
  }
  return false;
}

bool JsonObjectConstraint::Allows(int32_t token) const {
  if (tokenizer_.IsEog(token)) return checker_.complete();
  const std::string_view bytes = tokenizer_.PieceBytes(token, /*show_special=*/false);
  if (bytes.empty()) return false;  // control tokens carry no JSON text
  JsonPrefixChecker probe = checker_;
  return probe.Feed(bytes);
}

void JsonObjectConstraint::Accept(int32_t token) {
  if (!tokenizer_.IsEog(token)) checker_.Feed(tokenizer_.PieceBytes(token, false));
}

}  // namespace brisk

#include "tokenizer/jinja/lexer.h"

#include <charconv>
#include <cstring>

#include "tokenizer/jinja/text.h"

namespace brisk::jinja {

namespace {

bool IsWs(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }

std::string_view RStripWs(std::string_view s) {
  while (!s.empty() && IsWs(s.back())) s.remove_suffix(1);
  return s;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) {
    // Jinja normalises \r\n and \r to \n and drops one trailing newline
    // (keep_trailing_newline=False).
    src_.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\r') {
        src_.push_back('\n');
        if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      } else {
        src_.push_back(source[i]);
      }
    }
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();
  }

  Result<std::vector<Token>> Run() {
    const size_t n = src_.size();
    while (pos_ < n) {
      const size_t start = FindTagStart(pos_);
      std::string_view text(src_.data() + pos_, (start == std::string::npos ? n : start) - pos_);
      if (start == std::string::npos) {
        EmitText(text, pos_);
        break;
      }
      const char kind = src_[start + 1];
      const char mod = start + 2 < n ? src_[start + 2] : '\0';
      const bool has_mod = mod == '-' || mod == '+';
      if (mod == '-') {
        text = RStripWs(text);
      } else if (mod != '+' && kind != '{') {
        text = LStripBlock(text);
      }
      EmitText(text, pos_);
      const int line = LineAt(start);
      pos_ = start + 2 + (has_mod ? 1 : 0);
      if (kind == '#') {
        BRISK_RETURN_IF_ERROR(LexComment(line));
      } else if (kind == '%') {
        if (TryRaw()) {
          BRISK_RETURN_IF_ERROR(LexRaw(line));
        } else {
          Push(TokenType::kBlockBegin, line, "");
          BRISK_RETURN_IF_ERROR(LexExpression(line, '%'));
        }
      } else {
        Push(TokenType::kVarBegin, line, "");
        BRISK_RETURN_IF_ERROR(LexExpression(line, '}'));
      }
    }
    Push(TokenType::kEnd, LineAt(n), "");
    return std::move(tokens_);
  }

 private:
  size_t FindTagStart(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) {
        return i;
      }
    }
    return std::string::npos;
  }

  // lstrip_blocks: drop spaces/tabs between the start of the line and a block/comment tag.
  std::string_view LStripBlock(std::string_view text) const {
    const size_t nl = text.rfind('\n');
    const size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
    if (l_pos == 0 && !line_starting_) return text;
    if (l_pos == text.size()) return text;
    for (size_t i = l_pos; i < text.size(); ++i) {
      if (!IsWs(text[i])) return text;
    }
    return text.substr(0, l_pos);
  }

  int LineAt(size_t pos) {
    for (; line_pos_ < pos && line_pos_ < src_.size(); ++line_pos_) {
      if (src_[line_pos_] == '\n') ++line_;
    }
    return line_;
  }

  void Push(TokenType type, int line, std::string text) {
    tokens_.push_back(Token{type, line, std::move(text)});
  }

  void EmitText(std::string_view text, size_t at) {
    if (!text.empty()) Push(TokenType::kText, LineAt(at), std::string(text));
  }

  // Handles what follows a tag's closing delimiter: `-` strips all whitespace, `+` keeps it,
  // otherwise trim_blocks removes one newline (block and comment tags only).
  void AfterTagEnd(char mod, bool trim_newline) {
    const size_t begin = pos_;
    if (mod == '-') {
      while (pos_ < src_.size() && IsWs(src_[pos_])) ++pos_;
    } else if (mod != '+' && trim_newline && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
    }
    if (pos_ > begin) {
      line_starting_ = src_[pos_ - 1] == '\n';
    } else {
      line_starting_ = false;
    }
  }

  Status LexComment(int line) {
    const size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) return Error(line, "unclosed comment");
    char mod = '\0';
    if (end > pos_ && (src_[end - 1] == '-' || src_[end - 1] == '+')) mod = src_[end - 1];
    pos_ = end + 2;
    AfterTagEnd(mod, true);
    return Status::Ok();
  }

  // Recognises `{% raw %}` / `{%- raw -%}` at pos_ (just after the tag opener).
  bool TryRaw() {
    size_t p = pos_;
    while (p < src_.size() && IsWs(src_[p])) ++p;
    if (src_.compare(p, 3, "raw") != 0 || (p + 3 < src_.size() && IsNameChar(src_[p + 3]))) {
      return false;
    }
    p += 3;
    while (p < src_.size() && IsWs(src_[p])) ++p;
    if (src_.compare(p, 3, "-%}") == 0) {
      pos_ = p + 3;
      AfterTagEnd('-', false);
      return true;
    }
    if (src_.compare(p, 2, "%}") == 0) {
      pos_ = p + 2;
      line_starting_ = false;
      return true;
    }
    return false;
  }

  Status LexRaw(int line) {
    for (size_t i = src_.find("{%", pos_); i != std::string::npos; i = src_.find("{%", i + 1)) {
      size_t p = i + 2;
      char open_mod = '\0';
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) open_mod = src_[p++];
      while (p < src_.size() && IsWs(src_[p])) ++p;
      if (src_.compare(p, 6, "endraw") != 0) continue;
      p += 6;
      while (p < src_.size() && IsWs(src_[p])) ++p;
      char close_mod = '\0';
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) close_mod = src_[p++];
      if (src_.compare(p, 2, "%}") != 0) continue;
      std::string_view body(src_.data() + pos_, i - pos_);
      if (open_mod == '-') {
        body = RStripWs(body);
      } else if (open_mod != '+') {
        body = LStripBlock(body);
      }
      EmitText(body, pos_);
      pos_ = p + 2;
      AfterTagEnd(close_mod, true);
      return Status::Ok();
    }
    return Error(line, "missing endraw for raw block");
  }

  // Lexes expression tokens up to the closing `}}` (close == '}') or `%}` (close == '%').
  Status LexExpression(int open_line, char close) {
    std::vector<char> balance;
    const size_t n = src_.size();
    while (true) {
      while (pos_ < n && IsWs(src_[pos_])) ++pos_;
      if (pos_ >= n) {
        return Error(open_line, close == '}' ? "unclosed '{{'" : "unclosed '{%'");
      }
      const int line = LineAt(pos_);
      const char c = src_[pos_];
      if (balance.empty()) {
        char mod = '\0';
        size_t p = pos_;
        if (c == '-' || (c == '+' && close == '%')) mod = src_[p++];
        if (p + 1 < n && src_[p] == close && src_[p + 1] == '}') {
          pos_ = p + 2;
          Push(close == '}' ? TokenType::kVarEnd : TokenType::kBlockEnd, line, "");
          AfterTagEnd(mod, close == '%');
          return Status::Ok();
        }
      }
      if (IsNameStart(c)) {
        const size_t b = pos_;
        while (pos_ < n && IsNameChar(src_[pos_])) ++pos_;
        Push(TokenType::kName, line, src_.substr(b, pos_ - b));
      } else if (IsDigit(c)) {
        BRISK_RETURN_IF_ERROR(LexNumber(line));
      } else if (c == '\'' || c == '"') {
        BRISK_RETURN_IF_ERROR(LexString(line));
      } else {
        static constexpr const char* kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
        std::string op;
        for (const char* t : kTwo) {
          if (src_.compare(pos_, 2, t) == 0) op = t;
        }
        if (op.empty()) {
          if (std::strchr("+-*/%~<>=()[]{},.:|", c) == nullptr) {
            return Error(line, std::string("unexpected character '") + c + "'");
          }
          op = std::string(1, c);
          if (c == '(' || c == '[' || c == '{') {
            balance.push_back(c == '(' ? ')' : (c == '[' ? ']' : '}'));
          } else if (c == ')' || c == ']' || c == '}') {
            if (balance.empty() || balance.back() != c) {
              return Error(line, std::string("unexpected '") + c + "'");
            }
            balance.pop_back();
          }
        }
        pos_ += op.size();
        Push(TokenType::kOp, line, std::move(op));
      }
    }
  }

  size_t ScanDigits(size_t p) const {
    // \d+(_\d+)*
    while (true) {
      while (p < src_.size() && IsDigit(src_[p])) ++p;
      if (p + 1 < src_.size() && src_[p] == '_' && IsDigit(src_[p + 1])) {
        ++p;
        continue;
      }
      return p;
    }
  }

  Status LexNumber(int line) {
    const size_t b = pos_;
    size_t p = ScanDigits(pos_);
    bool is_float = false;
    const bool after_dot =
        !tokens_.empty() && tokens_.back().type == TokenType::kOp && tokens_.back().text == ".";
    if (!after_dot && p + 1 < src_.size() && src_[p] == '.' && IsDigit(src_[p + 1])) {
      p = ScanDigits(p + 1);
      is_float = true;
    }
    if (!after_dot && p < src_.size() && (src_[p] == 'e' || src_[p] == 'E')) {
      size_t q = p + 1;
      if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
      if (q < src_.size() && IsDigit(src_[q])) {
        p = ScanDigits(q);
        is_float = true;
      }
    }
    std::string digits;
    for (size_t i = b; i < p; ++i) {
      if (src_[i] != '_') digits.push_back(src_[i]);
    }
    pos_ = p;
    Token tok{is_float ? TokenType::kFloat : TokenType::kInt, line, digits};
    const char* first = digits.data();
    const char* last = digits.data() + digits.size();
    if (is_float) {
      auto r = std::from_chars(first, last, tok.float_value);
      if (r.ec != std::errc() && r.ec != std::errc::result_out_of_range) {
        return Error(line, "bad number '" + digits + "'");
      }
    } else {
      auto r = std::from_chars(first, last, tok.int_value);
      if (r.ec != std::errc()) return Error(line, "integer literal too large '" + digits + "'");
    }
    tokens_.push_back(std::move(tok));
    return Status::Ok();
  }

  Status LexString(int line) {
    const char quote = src_[pos_++];
    std::string value;
    const size_t n = src_.size();
    while (true) {
      if (pos_ >= n) return Error(line, "unterminated string literal");
      const char c = src_[pos_++];
      if (c == quote) break;
      if (c != '\\') {
        value.push_back(c);
        continue;
      }
      if (pos_ >= n) return Error(line, "unterminated string literal");
      const char e = src_[pos_++];
      switch (e) {
        case '\n':
          break;  // line continuation
        case '\\':
        case '\'':
        case '"':
          value.push_back(e);
          break;
        case 'n':
          value.push_back('\n');
          break;
        case 't':
          value.push_back('\t');
          break;
        case 'r':
          value.push_back('\r');
          break;
        case 'a':
          value.push_back('\a');
          break;
        case 'b':
          value.push_back('\b');
          break;
        case 'f':
          value.push_back('\f');
          break;
        case 'v':
          value.push_back('\v');
          break;
        case 'x':
        case 'u':
        case 'U': {
          const int len = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
          uint32_t cp = 0;
          for (int k = 0; k < len; ++k) {
            const int h = pos_ < n ? HexDigit(src_[pos_]) : -1;
            if (h < 0) return Error(line, std::string("bad \\") + e + " escape in string literal");
            cp = cp * 16 + static_cast<uint32_t>(h);
            ++pos_;
          }
          // Join a UTF-16 surrogate pair written as two \u escapes.
          if (cp >= 0xD800 && cp <= 0xDBFF && src_.compare(pos_, 2, "\\u") == 0) {
            uint32_t lo = 0;
            bool ok = pos_ + 6 <= n;
            for (int k = 0; ok && k < 4; ++k) {
              const int h = HexDigit(src_[pos_ + 2 + k]);
              ok = h >= 0;
              lo = lo * 16 + static_cast<uint32_t>(h);
            }
            if (ok && lo >= 0xDC00 && lo <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
              pos_ += 6;
            }
          }
          if (cp > 0x10FFFF) return Error(line, "bad unicode escape in string literal");
          text::AppendUtf8(&value, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            uint32_t cp = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2 && pos_ < n && src_[pos_] >= '0' && src_[pos_] <= '7'; ++k) {
              cp = cp * 8 + static_cast<uint32_t>(src_[pos_++] - '0');
            }
            text::AppendUtf8(&value, cp);
          } else {
            value.push_back('\\');
            value.push_back(e);
          }
      }
    }
    Push(TokenType::kString, line, std::move(value));
    return Status::Ok();
  }

  static Status Error(int line, const std::string& msg) {
    return Status::Error(msg + " at line " + std::to_string(line));
  }

  std::string src_;
  size_t pos_ = 0;
  size_t line_pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
  std::vector<Token> tokens_;
};

}  // namespace

Result<std::vector<Token>> Lex(std::string_view source) { return Lexer(source).Run(); }

}  // namespace brisk::jinja

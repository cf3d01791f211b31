// Tokenizer for Jinja templates with HF's settings (trim_blocks, lstrip_blocks). Whitespace
// control is resolved here: text tokens come out already trimmed, comments are dropped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace brisk::jinja {

enum class TokenType : uint8_t {
  kText,        // literal template text
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,
  kString,  // text holds the unescaped value
  kInt,
  kFloat,
  kOp,  // text holds the operator: + - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : |
  kEnd,
};

struct Token {
  TokenType type;
  int line;
  std::string text;
  int64_t int_value = 0;
  double float_value = 0;
};

// Tokenizes a whole template. The last token is always kEnd.
Result<std::vector<Token>> Lex(std::string_view source);

}  // namespace brisk::jinja

// The syntax tree of a regular expression (internal to structured/): what regex_parser.cc reads
// and regex.cc lowers to grammar rules. Groups leave no node of their own (captures do not
// change the language); anchors stay as nodes until the lowering checks where they stand.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "structured/grammar.h"
#include "util/status.h"

namespace brisk::structured {

// Groups nest at most this deep: a hostile pattern cannot exhaust the parser's stack.
inline constexpr int kMaxRegexNesting = 128;

struct RegexNode {
  enum class Kind : uint8_t {
    kEmpty,   // the empty string
    kChars,   // one character of `chars` (normalised, non-empty)
    kConcat,  // children in order
    kAlt,     // any one child
    kRepeat,  // children[0]{min,max}, max < 0: unbounded
    kStart,   // ^
    kEnd,     // $
    kShared,  // children[0], lowered once into a rule that every use refers to
  };
  Kind kind = Kind::kEmpty;
  std::vector<CharRange> chars;
  std::vector<int32_t> children;
  int min = 0, max = -1;
  size_t offset = 0;  // where it starts in the pattern, in characters
};

struct RegexAst {
  std::vector<RegexNode> nodes;
  int32_t root = -1;

  int32_t Add(RegexNode n) {
    nodes.push_back(std::move(n));
    return int32_t(nodes.size() - 1);
  }
};

// The tree of an ECMAScript pattern, or invalid_argument "regex offset N: ..." naming the
// construct that cannot be enforced (backreference, lookaround, \b, flags) or is malformed.
Result<RegexAst> ParseRegex(std::string_view pattern);

}  // namespace brisk::structured

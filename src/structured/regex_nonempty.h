// The non-empty part of a regex node (internal to structured/). A repetition of a sub-pattern
// that matches "" would give a left-recursive rule (x* ::= x x* | "" with x nullable), so
// regex.cc repeats the sub-pattern's non-empty part instead: x{m,n} = NE(x){0,n}, (a?)* = (a)*.
//
// New nodes are appended to the tree. Each new node's children have smaller indices, and
// suffixes used twice are kShared (one rule), so lowering the new nodes in index order keeps
// both the recursion shallow and the grammar linear in the pattern.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "structured/regex_ast.h"

namespace brisk::structured {

class RegexNonEmpty {
 public:
  explicit RegexNonEmpty(RegexAst& ast) : ast_(ast) {}

  // Whether `node` matches "" (anchors count as empty).
  bool Nullable(int32_t node);
  // A node matching exactly the non-empty strings of `node`, or -1 when it matches only "".
  int32_t NonEmpty(int32_t node);

 private:
  int32_t NonEmptyOnce(int32_t node);
  int32_t NonEmptyConcat(const RegexNode& n);
  int32_t Add(RegexNode::Kind kind, std::vector<int32_t> children, size_t offset, bool nullable);

  RegexAst& ast_;
  std::vector<int8_t> nullable_;  // per node: -1 unknown, 0, 1
  std::unordered_map<int32_t, int32_t> non_empty_;
};

}  // namespace brisk::structured

#include "structured/regex_nonempty.h"

#include <utility>

namespace brisk::structured {

using Kind = RegexNode::Kind;

bool RegexNonEmpty::Nullable(int32_t node) {
  if (size_t(node) >= nullable_.size()) nullable_.resize(ast_.nodes.size(), -1);
  if (nullable_[size_t(node)] >= 0) return nullable_[size_t(node)] == 1;
  const RegexNode& n = ast_.nodes[size_t(node)];  // (no nodes are added below)
  bool result = false;
  switch (n.kind) {
    case Kind::kEmpty:
    case Kind::kStart:
    case Kind::kEnd:
      result = true;
      break;
    case Kind::kChars:
      result = false;
      break;
    case Kind::kConcat:
      result = true;
      for (int32_t c : n.children) result = result && Nullable(c);
      break;
    case Kind::kAlt:
      for (int32_t c : n.children) result = result || Nullable(c);
      break;
    case Kind::kRepeat:
      result = n.min == 0 || n.max == 0 || Nullable(n.children[0]);
      break;
    case Kind::kShared:
      result = Nullable(n.children[0]);
      break;
  }
  nullable_[size_t(node)] = int8_t(result);
  return result;
}

int32_t RegexNonEmpty::NonEmpty(int32_t node) {
  if (auto it = non_empty_.find(node); it != non_empty_.end()) return it->second;
  const int32_t result = NonEmptyOnce(node);
  non_empty_.emplace(node, result);
  return result;
}

int32_t RegexNonEmpty::NonEmptyOnce(int32_t node) {
  const RegexNode n = ast_.nodes[size_t(node)];  // a copy: Add grows the tree
  switch (n.kind) {
    case Kind::kChars:
      return node;
    case Kind::kConcat:
      return Nullable(node) ? NonEmptyConcat(n) : node;
    case Kind::kAlt: {
      std::vector<int32_t> kids;
      for (int32_t c : n.children)
        if (const int32_t k = NonEmpty(c); k >= 0) kids.push_back(k);
      if (kids.size() <= 1) return kids.empty() ? -1 : kids[0];
      return Add(Kind::kAlt, std::move(kids), n.offset, false);
    }
    case Kind::kRepeat: {  // x{0,n} -> x{1,n}; with x nullable, NE(x){1,n}
      if (n.max == 0) return -1;
      if (!Nullable(node)) return node;
      const int32_t child = Nullable(n.children[0]) ? NonEmpty(n.children[0]) : n.children[0];
      if (child < 0) return -1;
      const int32_t rep = Add(Kind::kRepeat, {child}, n.offset, false);
      ast_.nodes[size_t(rep)].min = 1;
      ast_.nodes[size_t(rep)].max = n.max;
      return rep;
    }
    case Kind::kShared:
      return NonEmpty(n.children[0]);
    default:
      return -1;  // empty, or an anchor (gone by the time anything is lowered)
  }
}

// c1 c2 ... cn, every ci nullable: some ci is the first non-empty part, so the result is
// NE(c1) S2 | NE(c2) S3 | ... | NE(cn) with Si = ci ... cn, each Si one shared rule.
int32_t RegexNonEmpty::NonEmptyConcat(const RegexNode& n) {
  const std::vector<int32_t> kids = n.children;
  std::vector<int32_t> branches;
  int32_t suffix = -1;  // S(k+1); -1: the empty suffix
  for (size_t k = kids.size(); k-- > 0;) {
    if (const int32_t ne = NonEmpty(kids[k]); ne >= 0)
      branches.push_back(suffix < 0 ? ne : Add(Kind::kConcat, {ne, suffix}, n.offset, false));
    if (k == 0) break;  // S1 is the whole concatenation: nothing uses it
    suffix = suffix < 0
                 ? kids[k]
                 : Add(Kind::kShared, {Add(Kind::kConcat, {kids[k], suffix}, n.offset, true)},
                       n.offset, true);
  }
  if (branches.size() <= 1) return branches.empty() ? -1 : branches[0];
  return Add(Kind::kAlt, std::move(branches), n.offset, false);
}

// Nullability is known at creation: recording it keeps Nullable from descending the (possibly
// long) chains of shared suffixes.
int32_t RegexNonEmpty::Add(Kind kind, std::vector<int32_t> children, size_t offset, bool nullable) {
  RegexNode n;
  n.kind = kind;
  n.children = std::move(children);
  n.offset = offset;
  const int32_t id = ast_.Add(std::move(n));
  nullable_.resize(ast_.nodes.size(), -1);
  nullable_[size_t(id)] = int8_t(nullable);
  return id;
}

}  // namespace brisk::structured

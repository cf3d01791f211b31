// Lowers a RegexAst (regex_ast.h) to grammar rules: sequences inline, alternations and
// repetitions as rules. Anchors are resolved first (only the pattern's ends may hold them);
// repetitions of patterns that can match the empty string are rewritten over their non-empty
// part, so the rules are never left-recursive ((a?)* is (a)*).
#include "structured/regex.h"

#include <map>
#include <string>
#include <utility>

#include "structured/regex_ast.h"
#include "structured/regex_json_escape.h"

namespace brisk::structured {
namespace {

using Kind = RegexNode::Kind;

Status ErrorAt(size_t offset, const std::string& what) {
  return Status::InvalidArgument("regex offset " + std::to_string(offset) + ": " + what);
}

class RegexLowering {
 public:
  RegexLowering(GrammarBuilder& b, RegexAst ast, std::string_view name, RegexOptions options)
      : b_(b), ast_(std::move(ast)), name_(name), options_(options), escapes_(b, name) {}

  Result<int32_t> Run() {
    const RegexNode& root = ast_.nodes[size_t(ast_.root)];
    const std::vector<int32_t> branches =
        root.kind == Kind::kAlt ? root.children : std::vector<int32_t>{ast_.root};
    std::vector<Sequence> alternatives;
    for (int32_t branch : branches) {
      BRISK_ASSIGN_OR_RETURN(const bool at_start, StripAnchor(branch, Kind::kStart));
      BRISK_ASSIGN_OR_RETURN(const bool at_end, StripAnchor(branch, Kind::kEnd));
      BRISK_RETURN_IF_ERROR(CheckNoAnchors(branch));
      Sequence seq;
      if (!at_start && !options_.anchored) BRISK_RETURN_IF_ERROR(AppendAnyString(&seq));
      BRISK_ASSIGN_OR_RETURN(Sequence body, Lower(branch));
      seq.insert(seq.end(), body.begin(), body.end());
      if (!at_end && !options_.anchored) BRISK_RETURN_IF_ERROR(AppendAnyString(&seq));
      alternatives.push_back(std::move(seq));
    }
    return b_.AddRule(name_, std::move(alternatives));
  }

 private:
  // Removes `anchor` (^ or $) from the start (or end) of `node`, looking through sequences and
  // groups; true when every way through `node` began (ended) with it.
  Result<bool> StripAnchor(int32_t node, Kind anchor) {
    RegexNode& n = ast_.nodes[size_t(node)];
    if (n.kind == anchor) {
      n.kind = Kind::kEmpty;
      return true;
    }
    if (n.kind == Kind::kConcat) {
      const std::vector<int32_t> kids = n.children;
      bool found = false;
      for (size_t k = 0; k < kids.size(); ++k) {  // ^^a and a$$ anchor as once
        const int32_t child = anchor == Kind::kStart ? kids[k] : kids[kids.size() - 1 - k];
        if (ast_.nodes[size_t(child)].kind != anchor) {
          BRISK_ASSIGN_OR_RETURN(const bool inner, StripAnchor(child, anchor));
          return found || inner;
        }
        ast_.nodes[size_t(child)].kind = Kind::kEmpty;
        found = true;
      }
      return found;
    }
    if (n.kind != Kind::kAlt) return false;
    const std::vector<int32_t> kids = n.children;
    int anchored = 0;
    for (int32_t child : kids) {
      BRISK_ASSIGN_OR_RETURN(const bool a, StripAnchor(child, anchor));
      anchored += a;
    }
    if (anchored != 0 && anchored != int(kids.size()))
      return ErrorAt(ast_.nodes[size_t(node)].offset,
                     std::string("anchor '") + (anchor == Kind::kStart ? "^" : "$") +
                         "' on only some alternatives of a group is not supported");
    return anchored != 0;
  }

  Status CheckNoAnchors(int32_t node) const {
    const RegexNode& n = ast_.nodes[size_t(node)];
    if (n.kind == Kind::kStart || n.kind == Kind::kEnd)
      return ErrorAt(n.offset, std::string("anchor '") + (n.kind == Kind::kStart ? "^" : "$") +
                                   "' is supported only at the start (end) of the pattern");
    for (int32_t child : n.children) BRISK_RETURN_IF_ERROR(CheckNoAnchors(child));
    return Status::Ok();
  }

  // Any string: what an unanchored end may add around the match.
  Status AppendAnyString(Sequence* seq) {
    if (any_string_ < 0) {
      BRISK_ASSIGN_OR_RETURN(any_string_,
                             b_.Repeat(name_, LowerChars({{0, kMaxCodePoint}}), 0, -1));
    }
    seq->push_back(Symbol::Ref(any_string_));
    return Status::Ok();
  }

  Sequence LowerChars(const std::vector<CharRange>& chars) {
    if (!options_.json_escape) return Sequence{Symbol::Set(chars)};
    return escapes_.Spell(chars);
  }

  Result<Sequence> Lower(int32_t node) {
    const RegexNode n = ast_.nodes[size_t(node)];  // a copy: lowering may add nodes
    switch (n.kind) {
      case Kind::kEmpty:
        return Sequence{};
      case Kind::kChars:
        return LowerChars(n.chars);
      case Kind::kConcat: {
        Sequence out;
        for (int32_t child : n.children) {
          BRISK_ASSIGN_OR_RETURN(Sequence part, Lower(child));
          out.insert(out.end(), part.begin(), part.end());
        }
        return out;
      }
      case Kind::kAlt: {
        std::vector<Sequence> alternatives;
        for (int32_t child : n.children) {
          BRISK_ASSIGN_OR_RETURN(Sequence part, Lower(child));
          alternatives.push_back(std::move(part));
        }
        return Sequence{Symbol::Ref(b_.AddRule(name_, std::move(alternatives)))};
      }
      case Kind::kRepeat:
        return LowerRepeat(n);
      case Kind::kShared:
        return LowerShared(node);
      case Kind::kStart:
      case Kind::kEnd:
        break;  // removed or refused before lowering
    }
    return ErrorAt(n.offset, "anchor in an unsupported place");
  }

  Result<Sequence> LowerRepeat(const RegexNode& n) {
    if (n.max == 0) return Sequence{};
    int32_t child = n.children[0];
    int min = n.min;
    if (Nullable(child)) {  // x{m,n} with x matching "": (x minus "") {0,n}
      child = NonEmpty(child);
      min = 0;
      if (child < 0) return Sequence{};
    }
    BRISK_ASSIGN_OR_RETURN(Sequence item, Lower(child));
    Result<int32_t> rule = b_.Repeat(name_, std::move(item), min, n.max);
    if (!rule.ok()) return ErrorAt(n.offset, rule.message());
    return Sequence{Symbol::Ref(*rule)};
  }

  Result<Sequence> LowerShared(int32_t node) {
    auto it = shared_rule_.find(node);
    if (it == shared_rule_.end()) {
      BRISK_ASSIGN_OR_RETURN(Sequence body, Lower(ast_.nodes[size_t(node)].children[0]));
      it = shared_rule_.emplace(node, b_.AddRule(name_, {std::move(body)})).first;
    }
    return Sequence{Symbol::Ref(it->second)};
  }

  bool Nullable(int32_t node) {
    if (size_t(node) >= nullable_.size()) nullable_.resize(ast_.nodes.size(), -1);
    if (nullable_[size_t(node)] >= 0) return nullable_[size_t(node)] == 1;
    const RegexNode n = ast_.nodes[size_t(node)];
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

  int32_t NonEmpty(int32_t node);
  int32_t NonEmptyConcat(const RegexNode& n);
  int32_t Add(Kind kind, std::vector<int32_t> children, size_t offset) {
    RegexNode n;
    n.kind = kind;
    n.children = std::move(children);
    n.offset = offset;
    return ast_.Add(std::move(n));
  }

  GrammarBuilder& b_;
  RegexAst ast_;
  std::string name_;
  RegexOptions options_;
  JsonEscapes escapes_;
  int32_t any_string_ = -1;
  std::vector<int8_t> nullable_;
  std::map<int32_t, int32_t> shared_rule_;
};

// The strings of `node` other than the empty one, as a (new) node; -1 when there are none.
int32_t RegexLowering::NonEmpty(int32_t node) {
  const RegexNode n = ast_.nodes[size_t(node)];
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
      return Add(Kind::kAlt, std::move(kids), n.offset);
    }
    case Kind::kRepeat: {
      if (n.max == 0) return -1;
      if (!Nullable(node)) return node;
      const int32_t child = Nullable(n.children[0]) ? NonEmpty(n.children[0]) : n.children[0];
      if (child < 0) return -1;
      const int32_t rep = Add(Kind::kRepeat, {child}, n.offset);
      ast_.nodes[size_t(rep)].min = 1;
      ast_.nodes[size_t(rep)].max = n.max;
      return rep;
    }
    case Kind::kShared:
      return NonEmpty(n.children[0]);
    default:
      return -1;  // empty (anchors are gone by now)
  }
}

// c1 c2 ... cn, every ci nullable: some ci is the first non-empty part, so the result is
// NE(c1) S2 | NE(c2) S3 | ... | NE(cn) with Si = ci ... cn. Each Si is shared (one rule) so
// the rewrite stays linear in n.
int32_t RegexLowering::NonEmptyConcat(const RegexNode& n) {
  const std::vector<int32_t> kids = n.children;
  std::vector<int32_t> branches;
  int32_t suffix = -1;  // S(i+1), -1: empty
  for (size_t k = kids.size(); k-- > 0;) {
    if (const int32_t ne = NonEmpty(kids[k]); ne >= 0)
      branches.push_back(suffix < 0 ? ne : Add(Kind::kConcat, {ne, suffix}, n.offset));
    suffix = suffix < 0
                 ? kids[k]
                 : Add(Kind::kShared, {Add(Kind::kConcat, {kids[k], suffix}, n.offset)}, n.offset);
  }
  if (branches.size() <= 1) return branches.empty() ? -1 : branches[0];
  return Add(Kind::kAlt, std::move(branches), n.offset);
}

}  // namespace

Result<int32_t> AddRegex(GrammarBuilder& b, std::string_view pattern, std::string_view name,
                         RegexOptions options) {
  BRISK_ASSIGN_OR_RETURN(RegexAst ast, ParseRegex(pattern));
  return RegexLowering(b, std::move(ast), name, options).Run();
}

Result<Grammar> CompileRegex(std::string_view pattern) {
  GrammarBuilder b;
  BRISK_ASSIGN_OR_RETURN(const int32_t root, AddRegex(b, pattern, "root"));
  return std::move(b).Build(root);
}

}  // namespace brisk::structured

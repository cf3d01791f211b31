// Lowers a RegexAst (regex_ast.h) to grammar rules: sequences inline, alternations and
// repetitions as rules. Anchors are resolved first (only the pattern's ends may hold them);
// repetitions of patterns that can match the empty string are rewritten over their non-empty
// part (regex_nonempty.h), so the rules are never left-recursive ((a?)* is (a)*).
#include "structured/regex.h"

#include <map>
#include <string>
#include <utility>

#include "structured/regex_ast.h"
#include "structured/regex_json_escape.h"
#include "structured/regex_nonempty.h"

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

  // A node reached twice (the rewrite of empty-matching repetitions shares subtrees) yields
  // the same rule both times: without the memo, nested rewrites would double per level.
  Result<Sequence> Lower(int32_t node) {
    if (auto it = lowered_.find(node); it != lowered_.end()) return it->second;
    BRISK_ASSIGN_OR_RETURN(Sequence seq, LowerOnce(node));
    const Kind kind = ast_.nodes[size_t(node)].kind;
    if (kind == Kind::kAlt || kind == Kind::kRepeat || kind == Kind::kShared)
      lowered_.emplace(node, seq);  // a rule reference: cheap to keep
    return seq;
  }

  Result<Sequence> LowerOnce(int32_t node) {
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
      case Kind::kShared: {
        BRISK_ASSIGN_OR_RETURN(Sequence body, Lower(n.children[0]));
        return Sequence{Symbol::Ref(b_.AddRule(name_, {std::move(body)}))};
      }
      case Kind::kStart:
      case Kind::kEnd:
        break;  // removed or refused before lowering
    }
    return ErrorAt(n.offset, "anchor in an unsupported place");
  }

  // Lowers the rule-making nodes from index `first` on, children first (their indices are
  // smaller), so each later Lower finds them memoised and recursion stays shallow however long
  // the rewrite's chains of shared suffixes are, whatever order the rewrite lists them in.
  Status LowerInOrder(size_t first) {
    for (size_t id = first; id < ast_.nodes.size(); ++id) {
      const Kind kind = ast_.nodes[id].kind;
      if (kind == Kind::kAlt || kind == Kind::kRepeat || kind == Kind::kShared)
        BRISK_RETURN_IF_ERROR(Lower(int32_t(id)).status());
    }
    return Status::Ok();
  }

  Result<Sequence> LowerRepeat(const RegexNode& n) {
    if (n.max == 0) return Sequence{};
    int32_t child = n.children[0];
    int min = n.min;
    if (rewrite_.Nullable(child)) {  // x{m,n} with x matching "": NE(x){0,n}
      const size_t first_new = ast_.nodes.size();
      child = rewrite_.NonEmpty(child);
      min = 0;
      if (child < 0) return Sequence{};
      BRISK_RETURN_IF_ERROR(LowerInOrder(first_new));
    }
    BRISK_ASSIGN_OR_RETURN(Sequence item, Lower(child));
    Result<int32_t> rule = b_.Repeat(name_, std::move(item), min, n.max);
    if (!rule.ok()) return ErrorAt(n.offset, rule.message());
    return Sequence{Symbol::Ref(*rule)};
  }

  GrammarBuilder& b_;
  RegexAst ast_;
  std::string name_;
  RegexOptions options_;
  JsonEscapes escapes_;
  int32_t any_string_ = -1;
  RegexNonEmpty rewrite_{ast_};
  std::map<int32_t, Sequence> lowered_;
};

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

// Grammar shapes the schema compiler builds in several places: counted repetition of any size
// and a set of literal strings laid out as a trie.
#include <map>
#include <string>
#include <vector>

#include "structured/schema_compiler.h"

namespace brisk::structured::schema {
namespace {

// Repetitions up to this count go straight to GrammarBuilder::Repeat; larger ones are counted in
// blocks of this many items, so a maxLength of 100000 costs a few hundred rules, not 100000.
constexpr int64_t kBlock = 64;

Sequence Concat(int32_t a, int32_t b) { return {Symbol::Ref(a), Symbol::Ref(b)}; }

}  // namespace

// n = kBlock * q + r with 0 <= r < kBlock decomposes every count uniquely, so [min, max] is a
// union of at most three products "q in a range of blocks, then r in a range of items", and the
// block counts recurse with the same function.
Result<int32_t> RepeatRange(GrammarBuilder& b, std::string_view name, const Sequence& item,
                            int64_t min, int64_t max) {
  if (max >= 0 && min > max) return Status::InvalidArgument("repetition with min > max");
  if ((max >= 0 && max <= kBlock) || (max < 0 && min <= kBlock))
    return b.Repeat(name, item, int(min), int(max));
  BRISK_ASSIGN_OR_RETURN(int32_t block, b.Repeat(name, item, int(kBlock), int(kBlock)));
  const Sequence blocks_item = {Symbol::Ref(block)};
  const int64_t qa = min / kBlock, ra = min % kBlock;
  std::vector<Sequence> alts;
  // Adds "qlo..qhi blocks (qhi < 0: unbounded), then rlo..rhi items".
  auto add = [&](int64_t qlo, int64_t qhi, int64_t rlo, int64_t rhi) -> Status {
    BRISK_ASSIGN_OR_RETURN(int32_t q, RepeatRange(b, name, blocks_item, qlo, qhi));
    BRISK_ASSIGN_OR_RETURN(int32_t r, b.Repeat(name, item, int(rlo), int(rhi)));
    alts.push_back(Concat(q, r));
    return Status::Ok();
  };
  if (max < 0) {
    if (ra == 0) {
      BRISK_RETURN_IF_ERROR(add(qa, -1, 0, kBlock - 1));
    } else {
      BRISK_RETURN_IF_ERROR(add(qa, qa, ra, kBlock - 1));
      BRISK_RETURN_IF_ERROR(add(qa + 1, -1, 0, kBlock - 1));
    }
    return b.AddRule(name, std::move(alts));
  }
  const int64_t qb = max / kBlock, rb = max % kBlock;
  if (qa == qb) {
    BRISK_RETURN_IF_ERROR(add(qa, qa, ra, rb));
    return b.AddRule(name, std::move(alts));
  }
  // Low end (q = qa), middle (every remainder), high end (q = qb); a full end joins the middle.
  const int64_t mid_lo = ra == 0 ? qa : qa + 1;
  const int64_t mid_hi = rb == kBlock - 1 ? qb : qb - 1;
  if (ra != 0) BRISK_RETURN_IF_ERROR(add(qa, qa, ra, kBlock - 1));
  if (mid_lo <= mid_hi) BRISK_RETURN_IF_ERROR(add(mid_lo, mid_hi, 0, kBlock - 1));
  if (rb != kBlock - 1) BRISK_RETURN_IF_ERROR(add(qb, qb, 0, rb));
  return b.AddRule(name, std::move(alts));
}

// Nodes are numbered in creation order, so a child always has a larger number than its parent.
// A node with one child that ends no literal is folded into its parent's sequence; every other
// node gets a rule whose alternatives are "the literal ends here" and one per child.
int32_t AddLiteralTrie(GrammarBuilder& b, std::string_view name,
                       const std::vector<std::string>& literals) {
  struct Node {
    std::map<uint32_t, int32_t> children;
    bool terminal = false;
  };
  std::vector<Node> nodes(1);
  for (const std::string& lit : literals) {
    int32_t v = 0;
    for (size_t i = 0; i < lit.size();) {
      const uint32_t c = DecodeUtf8(lit, &i);
      auto [it, fresh] = nodes[size_t(v)].children.try_emplace(c, int32_t(nodes.size()));
      const int32_t next = it->second;
      if (fresh) nodes.emplace_back();
      v = next;
    }
    nodes[size_t(v)].terminal = true;
  }
  auto folded = [&](int32_t v) {
    return v != 0 && !nodes[size_t(v)].terminal && nodes[size_t(v)].children.size() == 1;
  };
  std::vector<int32_t> rule(nodes.size(), -1);
  for (size_t v = 0; v < nodes.size(); ++v)
    if (!folded(int32_t(v)) && (v == 0 || !nodes[v].children.empty())) rule[v] = b.NewRule(name);
  for (size_t v = 0; v < nodes.size(); ++v) {
    if (rule[v] < 0) continue;
    std::vector<Sequence> alts;
    if (nodes[v].terminal) alts.emplace_back();
    for (auto [c, child] : nodes[v].children) {
      Sequence seq = {Symbol::Char(c)};
      int32_t w = child;
      while (folded(w)) {
        const auto [c2, next] = *nodes[size_t(w)].children.begin();
        seq.push_back(Symbol::Char(c2));
        w = next;
      }
      if (rule[size_t(w)] >= 0) seq.push_back(Symbol::Ref(rule[size_t(w)]));
      alts.push_back(std::move(seq));
    }
    b.Define(rule[v], std::move(alts));
  }
  return rule[0];
}

}  // namespace brisk::structured::schema

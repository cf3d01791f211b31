// Keys of undeclared ("additional") properties: any string except the declared names. A string
// has many spellings in JSON ("a" is also "\u0061"), so the complement is taken over a fixed
// alphabet where each character has exactly one spelling: raw characters, plus \" and \\. Over
// it, "not one of a finite set of strings" is the trie of the set turned inside out: at each trie
// node the key may end (unless a declared name ends there), continue along a child, or leave the
// trie with any other character and then continue freely.
#include <map>
#include <string>
#include <vector>

#include "structured/schema_compiler.h"

namespace brisk::structured::schema {
namespace {

constexpr uint32_t kQuote = '"', kBackslash = '\\';

// The one spelling of `c` in the key alphabet; empty when it has none (control characters).
Sequence Spell(uint32_t c) {
  if (c < 0x20) return {};
  if (c == kQuote || c == kBackslash) return {Symbol::Char(kBackslash), Symbol::Char(c)};
  return {Symbol::Char(c)};
}

struct TrieNode {
  std::map<uint32_t, int32_t> children;
  bool terminal = false;
};

std::vector<TrieNode> BuildTrie(const std::vector<std::string>& names) {
  std::vector<TrieNode> nodes(1);
  for (const std::string& name : names) {
    int32_t v = 0;
    for (size_t i = 0; i < name.size();) {
      const uint32_t c = DecodeUtf8(name, &i);
      auto [it, fresh] = nodes[size_t(v)].children.try_emplace(c, int32_t(nodes.size()));
      const int32_t next = it->second;
      if (fresh) nodes.emplace_back();
      v = next;
    }
    nodes[size_t(v)].terminal = true;
  }
  return nodes;
}

}  // namespace

int32_t AddKeyExcluding(GrammarBuilder& b, std::string_view name,
                        const std::vector<std::string>& names) {
  const std::vector<TrieNode> nodes = BuildTrie(names);
  const Symbol raw = Symbol::NotSet({{0, 0x1F}, {kQuote, kQuote}, {kBackslash, kBackslash}});
  const int32_t key_char = b.AddRule(name, {{raw},
                                            {Symbol::Char(kBackslash), Symbol::Char(kQuote)},
                                            {Symbol::Char(kBackslash), Symbol::Char(kBackslash)}});
  Result<int32_t> free_tail = b.Repeat(name, {Symbol::Ref(key_char)}, 0, -1);
  BRISK_CHECK(free_tail.ok());
  std::vector<int32_t> rule(nodes.size());
  for (int32_t& r : rule) r = b.NewRule(name);
  for (size_t v = 0; v < nodes.size(); ++v) {
    std::vector<Sequence> alts;
    if (!nodes[v].terminal) alts.emplace_back();
    std::vector<CharRange> taken = {{0, 0x1F}, {kQuote, kQuote}, {kBackslash, kBackslash}};
    bool quote_taken = false, backslash_taken = false;
    for (auto [c, child] : nodes[v].children) {
      Sequence s = Spell(c);
      if (s.empty()) continue;  // a name with a control character: no key of ours spells it
      s.push_back(Symbol::Ref(rule[size_t(child)]));
      alts.push_back(std::move(s));
      taken.push_back({c, c});
      quote_taken |= c == kQuote;
      backslash_taken |= c == kBackslash;
    }
    const Symbol tail = Symbol::Ref(*free_tail);
    alts.push_back({Symbol::NotSet(taken), tail});
    if (!quote_taken) alts.push_back({Symbol::Char(kBackslash), Symbol::Char(kQuote), tail});
    if (!backslash_taken)
      alts.push_back({Symbol::Char(kBackslash), Symbol::Char(kBackslash), tail});
    b.Define(rule[v], std::move(alts));
  }
  return b.AddRule(name, {{Symbol::Char(kQuote), Symbol::Ref(rule[0]), Symbol::Char(kQuote)}});
}

}  // namespace brisk::structured::schema

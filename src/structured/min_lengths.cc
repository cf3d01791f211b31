// Shortest completions of a compiled grammar, for length budgets: with n tokens left, a
// constrained request may only take a token after which the sentence can still be finished in
// n - 1 tokens — at most that many bytes, since every single byte is a token of a byte-level
// vocabulary.
#include <queue>
#include <utility>
#include <vector>

#include "structured/compiled_grammar.h"

namespace brisk::structured {
namespace {

using G = CompiledGrammar;

int32_t AddSaturated(int32_t a, int32_t b) { return a >= G::kNoEnd - b ? G::kNoEnd : a + b; }

// What an alternative still waits for while its rules' shortest lengths are being found.
struct AlternativeState {
  int32_t rule;
  int32_t known;    // bytes of its bytes and of the rules finalised so far
  int32_t pending;  // rule references not finalised yet (with multiplicity)
};

// Shortest sentence of each rule, by Knuth's generalisation of Dijkstra's algorithm: a rule's
// length is final when it is the smallest tentative one, since every alternative only adds.
// O(elements log rules), whatever order the rules come in (a hostile GBNF cannot make it slow).
std::vector<int32_t> ShortestRuleLengths(const G& g) {
  const size_t n_rules = g.alternatives.size();
  std::vector<AlternativeState> alts;
  std::vector<std::vector<int32_t>> users(n_rules);  // per rule: alternatives referring to it
  std::vector<int32_t> best(n_rules, G::kNoEnd);
  using Item = std::pair<int32_t, int32_t>;  // (length, rule)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  for (size_t r = 0; r < n_rules; ++r) {
    for (int32_t start : g.alternatives[r]) {
      AlternativeState a{int32_t(r), 0, 0};
      for (int32_t e = start; g.elements[size_t(e)].kind != G::Kind::kEnd; ++e) {
        if (g.elements[size_t(e)].kind == G::Kind::kByte) {
          a.known = AddSaturated(a.known, 1);
        } else {
          ++a.pending;
          users[size_t(g.elements[size_t(e)].arg)].push_back(int32_t(alts.size()));
        }
      }
      if (a.pending == 0 && a.known < best[r]) queue.emplace(best[r] = a.known, int32_t(r));
      alts.push_back(a);
    }
  }
  std::vector<bool> final(n_rules, false);
  while (!queue.empty()) {
    const auto [length, rule] = queue.top();
    queue.pop();
    if (final[size_t(rule)]) continue;
    final[size_t(rule)] = true;
    for (int32_t k : users[size_t(rule)]) {
      AlternativeState& a = alts[size_t(k)];
      a.known = AddSaturated(a.known, length);
      if (--a.pending == 0 && a.known < best[size_t(a.rule)])
        queue.emplace(best[size_t(a.rule)] = a.known, a.rule);
    }
  }
  return best;
}

}  // namespace

std::vector<int32_t> ShortestRests(const CompiledGrammar& g) {
  const std::vector<int32_t> rule_length = ShortestRuleLengths(g);
  std::vector<int32_t> rest(g.elements.size(), 0);
  // Right to left: an end element needs nothing more; every other element adds its own length
  // to the rest after it.
  for (size_t e = g.elements.size(); e-- > 0;) {
    const G::Element& el = g.elements[e];
    if (el.kind == G::Kind::kEnd) continue;
    const int32_t own = el.kind == G::Kind::kByte ? 1 : rule_length[size_t(el.arg)];
    rest[e] = AddSaturated(rest[e + 1], own);
  }
  return rest;
}

}  // namespace brisk::structured

#include "structured/grammar_analysis.h"

#include <string>
#include <utility>

namespace brisk::structured {
namespace {

// Rule -> the rules it may call before consuming a character, one entry per occurrence.
std::vector<std::vector<int32_t>> LeftEdges(const Grammar& g, const std::vector<bool>& nullable) {
  std::vector<std::vector<int32_t>> edges(g.rules.size());
  for (size_t r = 0; r < g.rules.size(); ++r) {
    for (const Sequence& seq : g.rules[r].alternatives) {
      for (const Symbol& s : seq) {
        if (!s.is_rule()) break;
        edges[r].push_back(s.rule);
        if (!nullable[size_t(s.rule)]) break;
      }
    }
  }
  return edges;
}

Status CycleError(const Grammar& g, const std::vector<std::pair<int32_t, size_t>>& path,
                  int32_t back_to) {
  std::string cycle;
  bool in_cycle = false;
  for (const auto& [rule, edge] : path) {
    in_cycle = in_cycle || rule == back_to;
    if (in_cycle) cycle += g.rules[size_t(rule)].name + " -> ";
  }
  cycle += g.rules[size_t(back_to)].name;
  return Status::InvalidArgument("grammar rule '" + g.rules[size_t(back_to)].name +
                                 "' is left-recursive (" + cycle +
                                 " before any character is matched); rewrite it with repetition");
}

}  // namespace

std::vector<bool> NullableRules(const Grammar& g) {
  // Worklist: each alternative counts its rule references not yet known nullable; an
  // alternative reaching zero makes its rule nullable. Linear in the number of symbols.
  std::vector<bool> nullable(g.rules.size(), false);
  std::vector<int32_t> alt_rule, pending, work;
  std::vector<std::vector<int32_t>> uses(g.rules.size());  // rule -> alternatives naming it
  for (size_t r = 0; r < g.rules.size(); ++r) {
    for (const Sequence& seq : g.rules[r].alternatives) {
      bool has_char = false;
      for (const Symbol& s : seq) has_char = has_char || !s.is_rule();
      if (has_char) continue;  // a character is never empty
      const int32_t alt = int32_t(alt_rule.size());
      alt_rule.push_back(int32_t(r));
      pending.push_back(int32_t(seq.size()));
      for (const Symbol& s : seq) uses[size_t(s.rule)].push_back(alt);
      if (seq.empty()) work.push_back(int32_t(r));
    }
  }
  while (!work.empty()) {
    const int32_t r = work.back();
    work.pop_back();
    if (nullable[size_t(r)]) continue;
    nullable[size_t(r)] = true;
    for (int32_t alt : uses[size_t(r)])
      if (--pending[size_t(alt)] == 0) work.push_back(alt_rule[size_t(alt)]);
  }
  return nullable;
}

Status CheckNoLeftRecursion(const Grammar& g) {
  const std::vector<std::vector<int32_t>> edges = LeftEdges(g, NullableRules(g));
  // Iterative depth-first search (rules may number GrammarLimits::kMaxRules: no recursion).
  enum : uint8_t { kNew, kOpen, kDone };
  std::vector<uint8_t> state(g.rules.size(), kNew);
  std::vector<std::pair<int32_t, size_t>> path;  // (rule, next edge to follow)
  for (size_t start = 0; start < g.rules.size(); ++start) {
    if (state[start] != kNew) continue;
    path.push_back({int32_t(start), 0});
    state[start] = kOpen;
    while (!path.empty()) {
      auto& [rule, next] = path.back();
      if (next == edges[size_t(rule)].size()) {
        state[size_t(rule)] = kDone;
        path.pop_back();
        continue;
      }
      const int32_t to = edges[size_t(rule)][next++];
      if (state[size_t(to)] == kOpen) return CycleError(g, path, to);
      if (state[size_t(to)] == kNew) {
        state[size_t(to)] = kOpen;
        path.push_back({to, 0});
      }
    }
  }
  return Status::Ok();
}

}  // namespace brisk::structured

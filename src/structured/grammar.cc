// Character sets, the grammar builder and Build's checks (the analyses themselves live in
// grammar_analysis.cc).
#include "structured/grammar.h"

#include <algorithm>
#include <string>
#include <utility>

#include "structured/grammar_analysis.h"

namespace brisk::structured {
namespace {

Status TooLarge(const char* what, size_t limit) {
  return Status::InvalidArgument("grammar too large: more than " + std::to_string(limit) + " " +
                                 what);
}

// Sorted, disjoint, non-adjacent ranges within [0, kMaxCodePoint]; reversed or out-of-range
// parts are dropped (they name no character).
std::vector<CharRange> Normalise(std::vector<CharRange> ranges) {
  std::vector<CharRange> in;
  in.reserve(ranges.size());
  for (CharRange r : ranges) {
    if (r.lo > r.hi || r.lo > kMaxCodePoint) continue;
    in.push_back({r.lo, std::min(r.hi, kMaxCodePoint)});
  }
  std::sort(in.begin(), in.end(),
            [](const CharRange& a, const CharRange& b) { return a.lo < b.lo; });
  std::vector<CharRange> out;
  for (const CharRange& r : in) {
    if (!out.empty() && r.lo <= out.back().hi + 1) {
      out.back().hi = std::max(out.back().hi, r.hi);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace

Symbol Symbol::Set(std::vector<CharRange> ranges) {
  return Symbol{Normalise(std::move(ranges)), -1};
}

Symbol Symbol::NotSet(std::vector<CharRange> ranges) {
  std::vector<CharRange> out;
  uint32_t next = 0;  // the first code point not yet covered
  for (const CharRange& r : Normalise(std::move(ranges))) {
    if (r.lo > next) out.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return Symbol{std::move(out), -1};
}

int32_t GrammarBuilder::NewRule(std::string_view name) {
  std::string unique(name);
  if (by_name_.count(unique)) {
    int& suffix = next_suffix_[unique];
    do {
      unique = std::string(name) + "-" + std::to_string(++suffix);
    } while (by_name_.count(unique));
  }
  const int32_t id = int32_t(rules_.size());
  by_name_.emplace(unique, id);
  rules_.push_back(Rule{std::move(unique), {}});
  defined_.push_back(false);
  return id;
}

int32_t GrammarBuilder::Find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? -1 : it->second;
}

void GrammarBuilder::Define(int32_t rule, std::vector<Sequence> alternatives) {
  BRISK_CHECK(rule >= 0 && size_t(rule) < rules_.size());
  BRISK_CHECK_MSG(!defined_[size_t(rule)], "a grammar rule is defined twice");
  for (const Sequence& s : alternatives) symbols_ += s.size();
  rules_[size_t(rule)].alternatives = std::move(alternatives);
  defined_[size_t(rule)] = true;
}

int32_t GrammarBuilder::AddRule(std::string_view name, std::vector<Sequence> alternatives) {
  const int32_t rule = NewRule(name);
  Define(rule, std::move(alternatives));
  return rule;
}

Status GrammarBuilder::Reserve(size_t rules, size_t symbols) const {
  if (rules_.size() + rules > size_t(GrammarLimits::kMaxRules))
    return TooLarge("rules", GrammarLimits::kMaxRules);
  if (symbols_ + symbols > size_t(GrammarLimits::kMaxSymbols))
    return TooLarge("symbols", GrammarLimits::kMaxSymbols);
  return Status::Ok();
}

Result<int32_t> GrammarBuilder::Repeat(std::string_view name, Sequence item, int min, int max) {
  constexpr int kLimit = GrammarLimits::kMaxRepeat;
  if (min < 0 || (max >= 0 && min > max))
    return Status::InvalidArgument("repetition {" + std::to_string(min) + "," +
                                   std::to_string(max) + "}: the bounds are out of order");
  if (min > kLimit || max > kLimit)
    return Status::InvalidArgument("repetition bound " + std::to_string(std::max(min, max)) +
                                   " exceeds the limit of " + std::to_string(kLimit));
  const size_t tails = max < 0 ? 1 : size_t(max - min);
  BRISK_RETURN_IF_ERROR(Reserve(tails + 2, item.size() + size_t(min) + 2 * tails + 2));
  if (item.empty() || max == 0) return AddRule(name, {{}});
  // One symbol per copy: a longer item becomes a rule of its own, so the copies cost
  // O(min + max) symbols whatever the item's length.
  const Symbol x = item.size() == 1 ? item[0] : Symbol::Ref(AddRule(name, {std::move(item)}));
  const int32_t rule = NewRule(name);
  Sequence head(size_t(min), x);
  if (max < 0) {  // x{min,}: x^min then x* (x* ::= x x* | empty)
    const int32_t star = min == 0 ? rule : NewRule(name);
    Define(star, {{x, Symbol::Ref(star)}, {}});
    if (star == rule) return rule;
    head.push_back(Symbol::Ref(star));
  } else if (max > min) {  // x^min then (x (x (x)?)?)? with max - min copies
    int32_t tail = -1;
    for (int k = 0; k < max - min; ++k) {
      Sequence more = {x};
      if (tail >= 0) more.push_back(Symbol::Ref(tail));
      tail = AddRule(name, {std::move(more), {}});
    }
    head.push_back(Symbol::Ref(tail));
  }
  Define(rule, {std::move(head)});
  return rule;
}

Sequence GrammarBuilder::Literal(std::string_view utf8) {
  Sequence out;
  for (size_t i = 0; i < utf8.size();) out.push_back(Symbol::Char(DecodeUtf8(utf8, &i)));
  return out;
}

Result<Grammar> GrammarBuilder::Build(int32_t root) && {
  BRISK_RETURN_IF_ERROR(Reserve(0, 0));
  if (root < 0 || size_t(root) >= rules_.size())
    return Status::InvalidArgument("grammar has no root rule");
  for (size_t i = 0; i < rules_.size(); ++i) {
    Rule& r = rules_[i];
    if (!defined_[i])
      return Status::InvalidArgument("grammar rule '" + r.name + "' is used but never defined");
    if (r.alternatives.empty())
      return Status::InvalidArgument("grammar rule '" + r.name + "' has no alternatives");
    for (Sequence& seq : r.alternatives) {
      for (Symbol& s : seq) {
        if (s.is_rule() && size_t(s.rule) >= rules_.size())
          return Status::InvalidArgument("grammar rule '" + r.name + "' refers to rule #" +
                                         std::to_string(s.rule) + ", which does not exist");
        if (s.is_rule()) continue;
        // Frontends may fill `chars` directly: normalise so the matcher's invariant holds.
        s.chars = Normalise(std::move(s.chars));
        if (s.chars.empty())
          return Status::InvalidArgument("grammar rule '" + r.name +
                                         "' has an empty character set (it matches nothing)");
      }
    }
  }
  Grammar g{std::move(rules_), root};
  BRISK_RETURN_IF_ERROR(CheckNoLeftRecursion(g));
  return g;
}

}  // namespace brisk::structured

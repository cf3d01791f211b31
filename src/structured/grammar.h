// The one grammar form every structured-output frontend compiles to (JSON Schema, regular
// expressions, GBNF, choice lists): a context-free grammar over Unicode code points. The matcher
// (matcher.h) lowers it to bytes, so frontends speak in characters and never in UTF-8.
//
// A grammar is rules of alternatives; an alternative is a sequence of symbols; a symbol is one
// character from a set or a reference to a rule. Repetition is written with rules (the builder's
// Repeat), so the matcher knows only sequences, alternatives and references.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "util/status.h"

namespace brisk::structured {

inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// An inclusive range of code points. Surrogates (U+D800..U+DFFF) may appear inside a range; they
// match nothing (UTF-8 cannot encode them).
struct CharRange {
  uint32_t lo = 0, hi = 0;
  bool operator==(const CharRange&) const = default;
};

// One symbol: a character from `chars` (sorted, disjoint, not adjacent, non-empty) when
// rule < 0, else the rule of that index.
struct Symbol {
  std::vector<CharRange> chars;
  int32_t rule = -1;

  static Symbol Char(uint32_t c) { return Symbol{{{c, c}}, -1}; }
  // Any character of `ranges` (in any order, overlapping allowed: normalised here).
  static Symbol Set(std::vector<CharRange> ranges);
  // Any character outside `ranges`.
  static Symbol NotSet(std::vector<CharRange> ranges);
  static Symbol Ref(int32_t rule) { return Symbol{{}, rule}; }
  bool is_rule() const { return rule >= 0; }
  bool operator==(const Symbol&) const = default;
};

using Sequence = std::vector<Symbol>;  // empty: the empty string

struct Rule {
  std::string name;                    // unique; used in messages and ToGbnf
  std::vector<Sequence> alternatives;  // at least one
};

struct Grammar {
  std::vector<Rule> rules;
  int32_t root = 0;
};

// The limits a grammar must keep, whoever wrote it: one source for every frontend.
struct GrammarLimits {
  static constexpr int kMaxRules = 100000;
  static constexpr int kMaxSymbols = 1000000;  // over all alternatives of all rules
  static constexpr int kMaxRepeat = 10000;     // a bounded repetition's bound ({n,m})
};

// Builds a Grammar. Rules are created first (so they can refer to each other, recursion
// included) and defined later; Build checks what the matcher relies on.
class GrammarBuilder {
 public:
  // A new, undefined rule. `name` is made unique with a numeric suffix when taken.
  int32_t NewRule(std::string_view name);
  // The rule named exactly `name`, or -1.
  int32_t Find(std::string_view name) const;
  bool defined(int32_t rule) const { return defined_[size_t(rule)]; }
  const std::string& name(int32_t rule) const { return rules_[size_t(rule)].name; }
  int rule_count() const { return int(rules_.size()); }
  // Sets the alternatives of `rule` (once; an empty list is an error at Build).
  void Define(int32_t rule, std::vector<Sequence> alternatives);
  // A new rule for `alternatives` (name made unique).
  int32_t AddRule(std::string_view name, std::vector<Sequence> alternatives);

  // item{min,max} as a new rule (max < 0: unbounded). Bounded forms nest optional tails
  // (x x (x (x)?)?) so the matcher never holds more than one open choice per repetition.
  // Fails (invalid_argument) when min > max or a bound exceeds GrammarLimits::kMaxRepeat.
  Result<int32_t> Repeat(std::string_view name, Sequence item, int min, int max);

  // The characters of a UTF-8 string, one symbol each (invalid UTF-8: U+FFFD per bad byte).
  static Sequence Literal(std::string_view utf8);

  // The grammar rooted at `root`. Fails (invalid_argument, naming the rule) when a referenced
  // rule is undefined, a rule has no alternatives, a character set is empty, a rule is
  // left-recursive (directly or through nullable prefixes), or a limit of GrammarLimits is
  // exceeded.
  Result<Grammar> Build(int32_t root) &&;

 private:
  // Fails when `rules` more rules and `symbols` more symbols would pass GrammarLimits: Repeat
  // checks before it allocates, so a hostile bound fails fast instead of after the damage.
  Status Reserve(size_t rules, size_t symbols) const;

  std::vector<Rule> rules_;
  std::vector<bool> defined_;
  // Name -> rule and, per requested name, the next suffix to try: NewRule and Find stay O(1)
  // with GrammarLimits::kMaxRules rules (a scan per call would be quadratic).
  std::unordered_map<std::string, int32_t> by_name_;
  std::unordered_map<std::string, int> next_suffix_;
  size_t symbols_ = 0;  // over all defined alternatives
};

// The grammar in GBNF (llama.cpp's notation), one rule per line, root first: for messages,
// debugging and tests. Parsing it back (gbnf.h) gives the same language.
std::string ToGbnf(const Grammar& g);

// Decodes one UTF-8 character at s[*i] and advances *i; an invalid or truncated sequence gives
// U+FFFD and advances one byte.
uint32_t DecodeUtf8(std::string_view s, size_t* i);
// Appends the UTF-8 encoding of `c` (a surrogate or a value above kMaxCodePoint: U+FFFD).
void AppendUtf8(uint32_t c, std::string* out);

}  // namespace brisk::structured

// Digit-string grammars within exact bounds: fixed-length ranges digit by digit (the classic
// "numeric range as a regular expression" construction) and fractions compared with a bound by a
// small automaton over (position in the low bound, position in the high bound, digits left).
#include "structured/schema_digits.h"

#include <map>
#include <string>
#include <tuple>

namespace brisk::structured::schema {
namespace {

Symbol DigitSet(char lo, char hi) { return Symbol::Set({{uint32_t(lo), uint32_t(hi)}}); }
Symbol AnyDigit() { return DigitSet('0', '9'); }

std::vector<Sequence> FixedRangeAlts(GrammarBuilder& b, std::string_view name, std::string_view lo,
                                     std::string_view hi);

int32_t FixedRange(GrammarBuilder& b, std::string_view name, std::string_view lo,
                   std::string_view hi) {
  return b.AddRule(name, FixedRangeAlts(b, name, lo, hi));
}

// Digit strings s with lo <= s <= hi, all three of one length n >= 1. When the first digits
// differ: lo's first digit then anything >= the rest of lo, the digits strictly between then
// anything, hi's first digit then anything <= the rest of hi. An end whose rest is all 0s (or
// all 9s) joins the middle, which keeps common ranges like [100, 999] to one alternative.
std::vector<Sequence> FixedRangeAlts(GrammarBuilder& b, std::string_view name, std::string_view lo,
                                     std::string_view hi) {
  const size_t n = lo.size();
  const std::string_view rest_lo = lo.substr(1), rest_hi = hi.substr(1);
  if (lo[0] == hi[0]) {
    Sequence s = {DigitSet(lo[0], lo[0])};
    if (n > 1) s.push_back(Symbol::Ref(FixedRange(b, name, rest_lo, rest_hi)));
    return {s};
  }
  const bool lo_full = rest_lo.find_first_not_of('0') == std::string_view::npos;
  const bool hi_full = rest_hi.find_first_not_of('9') == std::string_view::npos;
  std::vector<Sequence> alts;
  if (!lo_full) {
    const std::string nines(n - 1, '9');
    alts.push_back({DigitSet(lo[0], lo[0]), Symbol::Ref(FixedRange(b, name, rest_lo, nines))});
  }
  const char mid_lo = lo_full ? lo[0] : char(lo[0] + 1);
  const char mid_hi = hi_full ? hi[0] : char(hi[0] - 1);
  if (mid_lo <= mid_hi) {
    Sequence s = {DigitSet(mid_lo, mid_hi)};
    for (size_t i = 1; i < n; ++i) s.push_back(AnyDigit());
    alts.push_back(std::move(s));
  }
  if (!hi_full) {
    const std::string zeros(n - 1, '0');
    alts.push_back({DigitSet(hi[0], hi[0]), Symbol::Ref(FixedRange(b, name, zeros, rest_hi))});
  }
  return alts;
}

std::string Padded(uint64_t v, size_t width) {
  std::string s = std::to_string(v);
  return std::string(width - s.size(), '0') + s;
}

// States of the fraction automaton: a position in the low bound's digits (-1: already above it)
// and in the high bound's (-1: already below it). Past a bound's last digit its remaining digits
// are zeros.
class FractionGrammar {
 public:
  FractionGrammar(GrammarBuilder& b, std::string_view name, const FractionBounds& bounds)
      : b_(b), name_(name), f_(bounds) {}

  int Start(const std::optional<std::string>& bound, bool exclusive_lo) const {
    if (!bound) return -1;
    return bound->empty() && !exclusive_lo ? -1 : 0;
  }
  // Whether the digits read so far may end the fraction.
  bool CanEnd(int p, int q) const {
    if (p != -1) return false;  // still at or below a low bound with digits (or equal, strict)
    return q == -1 || size_t(q) < f_.hi->size() || !f_.hi_exclusive;
  }
  // The strings of at most r more digits from (p, q): a rule, or -1 when there is none.
  int32_t Strings(int p, int q, int r, bool allow_empty) {
    const auto key = std::make_tuple(p, q, r, allow_empty);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    std::vector<Sequence> alts;
    if (allow_empty && CanEnd(p, q)) alts.emplace_back();
    for (int c = 0; c <= 9 && r > 0;) {
      const auto [np, nq] = Next(p, q, char('0' + c));
      int end = c;  // digits with the same successor form one range
      while (end + 1 <= 9 && Next(p, q, char('0' + end + 1)) == std::make_pair(np, nq)) ++end;
      if (np != kDead && nq != kDead) {
        const int32_t rest = Strings(np, nq, r - 1, true);
        if (rest >= 0)
          alts.push_back({DigitSet(char('0' + c), char('0' + end)), Symbol::Ref(rest)});
      }
      c = end + 1;
    }
    const int32_t rule = alts.empty() ? -1 : b_.AddRule(name_, std::move(alts));
    memo_[key] = rule;
    return rule;
  }

 private:
  static constexpr int kDead = -2;

  std::pair<int, int> Next(int p, int q, char c) const {
    int np = -1, nq = -1;
    if (p >= 0) {
      const std::string& lo = *f_.lo;
      const char l = size_t(p) < lo.size() ? lo[size_t(p)] : '0';
      np = c > l ? -1 : c < l ? kDead : (size_t(p) < lo.size() ? p + 1 : p);
      if (np >= 0 && size_t(np) == lo.size() && !f_.lo_exclusive) np = -1;
    }
    if (q >= 0) {
      const std::string& hi = *f_.hi;
      const char h = size_t(q) < hi.size() ? hi[size_t(q)] : '0';
      nq = c < h ? -1 : c > h ? kDead : (size_t(q) < hi.size() ? q + 1 : q);
    }
    return {np, nq};
  }

  GrammarBuilder& b_;
  std::string name_;
  const FractionBounds& f_;
  std::map<std::tuple<int, int, int, bool>, int32_t> memo_;
};

}  // namespace

std::vector<Sequence> NaturalRange(
    GrammarBuilder& b, std::string_view name, uint64_t lo, uint64_t hi,
    const std::function<std::optional<Sequence>(int digits, bool zero)>& suffix) {
  std::vector<Sequence> alts;
  uint64_t low = 1;  // 10^(d-1)
  for (int d = 1; d <= 15 && lo <= hi; ++d, low *= 10) {
    const uint64_t a = std::max(lo, d == 1 ? uint64_t{0} : low), z = std::min(hi, low * 10 - 1);
    if (a > z) continue;
    uint64_t from = a;
    if (from == 0) {
      if (std::optional<Sequence> tail = suffix(1, true)) {
        Sequence s = {DigitSet('0', '0')};
        s.insert(s.end(), tail->begin(), tail->end());
        alts.push_back(std::move(s));
      }
      if (++from > z) continue;
    }
    std::optional<Sequence> tail = suffix(d, false);
    if (!tail) continue;
    Sequence s = {Symbol::Ref(FixedRange(b, name, Padded(from, size_t(d)), Padded(z, size_t(d))))};
    s.insert(s.end(), tail->begin(), tail->end());
    alts.push_back(std::move(s));
  }
  return alts;
}

std::optional<Sequence> FractionPart(GrammarBuilder& b, std::string_view name,
                                     const FractionBounds& bounds, int max_digits) {
  FractionGrammar g(b, name, bounds);
  const int p = g.Start(bounds.lo, bounds.lo_exclusive), q = bounds.hi ? 0 : -1;
  const bool can_end = g.CanEnd(p, q);
  const int32_t digits = max_digits > 0 ? g.Strings(p, q, max_digits, false) : -1;
  if (digits < 0) return can_end ? std::optional<Sequence>(Sequence{}) : std::nullopt;
  std::vector<Sequence> alts;
  if (can_end) alts.emplace_back();
  alts.push_back({Symbol::Char('.'), Symbol::Ref(digits)});
  return Sequence{Symbol::Ref(b.AddRule(name, std::move(alts)))};
}

}  // namespace brisk::structured::schema

// integer and number schemas. Bounds are enforced exactly: integers as digit-range grammars;
// bounded numbers as an integer part in range with a fraction compared digit by digit, written
// without exponent and with at most 15 significant digits. That subset is what makes the
// comparison exact for a validator too: two different decimals of at most 15 significant digits
// are different doubles, and no such decimal shares a double with a bound unless it equals the
// bound's shortest spelling, so "above the bound in decimal" means "above it as a double".
#include <algorithm>
#include <array>
#include <string>

#include "structured/schema_compiler.h"
#include "structured/schema_digits.h"

namespace brisk::structured::schema {
namespace {

constexpr uint64_t kLimit = uint64_t(kMaxInt);

bool Huge(const Decimal& d) { return d.int_digits.size() > size_t(kMaxIntDigits); }
uint64_t IntPart(const Decimal& d) { return std::stoull(d.int_digits); }
int DigitCount(uint64_t v) { return int(std::to_string(v).size()); }
// Fraction digits a number with integer part v may have within 15 significant digits.
int FracBudget(uint64_t v) { return v == 0 ? kMaxFracDigits : kMaxIntDigits - DigitCount(v); }

// The smallest integer within a lower bound, clamped to kMaxInt + 1 ("none").
int64_t LowestInteger(const Bound& lo) {
  if (!lo.present) return -kMaxInt;
  const Decimal& v = lo.value;
  if (Huge(v)) return v.negative ? -kMaxInt : kMaxInt + 1;
  const int64_t i = int64_t(IntPart(v));
  const bool frac = !v.frac_digits.empty();
  if (!v.negative) return (frac || lo.exclusive) ? i + 1 : i;
  return (frac || !lo.exclusive) ? -i : -i + 1;
}

// The largest integer within an upper bound, clamped to -(kMaxInt + 1) ("none").
int64_t HighestInteger(const Bound& hi) {
  if (!hi.present) return kMaxInt;
  const Decimal& v = hi.value;
  if (Huge(v)) return v.negative ? -kMaxInt - 1 : kMaxInt;
  const int64_t i = int64_t(IntPart(v));
  const bool frac = !v.frac_digits.empty();
  if (!v.negative) return (frac || !hi.exclusive) ? i : i - 1;
  return (frac || hi.exclusive) ? -i - 1 : -i;
}

Sequence Prefixed(char c, Sequence s) {
  s.insert(s.begin(), Symbol::Char(uint32_t(c)));
  return s;
}

// Non-negative decimals v with lo <(=) v <(=) hi (hi absent: unbounded), within the budgets.
std::vector<Sequence> NonNegativeRange(GrammarBuilder& b, std::string_view name, const Bound& lo,
                                       const Bound& hi) {
  if (Huge(lo.value)) return {};
  const bool bounded = hi.present && !Huge(hi.value);
  const uint64_t a = IntPart(lo.value), z = bounded ? IntPart(hi.value) : kLimit;
  auto literal = [](uint64_t v) { return GrammarBuilder::Literal(std::to_string(v)); };
  auto piece = [&](uint64_t v, const FractionBounds& f, std::vector<Sequence>* out) {
    if (std::optional<Sequence> frac = FractionPart(b, name, f, FracBudget(v))) {
      Sequence s = literal(v);
      s.insert(s.end(), frac->begin(), frac->end());
      out->push_back(std::move(s));
    }
  };
  FractionBounds low{lo.value.frac_digits, std::nullopt, lo.exclusive, false};
  FractionBounds high{std::nullopt, hi.value.frac_digits, false, hi.exclusive};
  if (!bounded) high.hi.reset();
  std::vector<Sequence> alts;
  if (a == z) {
    piece(a, {low.lo, high.hi, lo.exclusive, bounded && hi.exclusive}, &alts);
    return alts;
  }
  if (a > z) return alts;
  piece(a, low, &alts);
  if (a + 1 <= z - 1) {
    auto free_fraction = [&](int digits, bool zero) -> std::optional<Sequence> {
      return FractionPart(b, name, {}, zero ? kMaxFracDigits : kMaxIntDigits - digits);
    };
    for (Sequence& s : NaturalRange(b, name, a + 1, z - 1, free_fraction))
      alts.push_back(std::move(s));
  }
  piece(z, high, &alts);
  return alts;
}

// Splits a range at zero: negatives are "-" and a positive magnitude, with the bounds swapped.
std::vector<Sequence> SignedRange(GrammarBuilder& b, std::string_view name, const Bound& lo,
                                  const Bound& hi) {
  std::vector<Sequence> alts;
  const bool hi_negative = hi.present && hi.value.negative;
  if (!lo.present || lo.value.negative) {
    Bound mlo{true, !hi_negative || hi.exclusive, hi_negative ? hi.value : Decimal{}};
    if (!hi_negative) mlo.exclusive = true;  // the magnitude of a negative number is above 0
    Bound mhi = lo;
    mlo.value.negative = mhi.value.negative = false;
    for (Sequence& s : NonNegativeRange(b, name, mlo, mhi)) alts.push_back(Prefixed('-', s));
  }
  if (!hi_negative && !(hi.present && hi.value.zero() && hi.exclusive)) {
    Bound nlo = lo.present && !lo.value.negative ? lo : Bound{true, false, Decimal{}};
    for (Sequence& s : NonNegativeRange(b, name, nlo, hi)) alts.push_back(std::move(s));
  }
  return alts;
}

// The tighter of a bound and another (for lower bounds when `lower`, else upper).
Bound Tighter(const Bound& a, const Bound& b, bool lower) {
  if (!a.present) return b;
  if (!b.present) return a;
  const int c = CompareDecimal(a.value, b.value);
  if (c == 0) return Bound{true, a.exclusive || b.exclusive, a.value};
  return (c > 0) == lower ? a : b;
}

// Reads minimum / exclusiveMinimum (or the maximum pair) into one bound.
Result<Bound> ReadBound(const SchemaCompiler& c, const Json& s, const At& at, bool lower) {
  Bound out;
  for (const char* key : lower ? std::array{"minimum", "exclusiveMinimum"}
                               : std::array{"maximum", "exclusiveMaximum"}) {
    auto it = s.find(key);
    if (it == s.end()) continue;
    Result<Decimal> d = ToDecimal(*it);
    if (!d.ok()) return c.Error("'" + std::string(key) + "' must be a number at " + at.Text());
    const bool exclusive = key[0] == 'e';
    out = Tighter(out, Bound{true, exclusive, *d}, lower);
  }
  return out;
}

}  // namespace

Result<int32_t> AddIntegerRange(GrammarBuilder& b, std::string_view name, const Bound& lo,
                                const Bound& hi) {
  const int64_t l = LowestInteger(lo), h = HighestInteger(hi);
  if (l > h) return Status::InvalidArgument("no integer of at most 15 digits lies in the range");
  auto none = [](int, bool) { return std::optional<Sequence>(Sequence{}); };
  std::vector<Sequence> alts;
  if (l < 0) {  // negatives: "-" then the magnitudes [max(1, -h), -l]
    for (Sequence& s :
         NaturalRange(b, name, uint64_t(std::max<int64_t>(1, -h)), uint64_t(-l), none))
      alts.push_back(Prefixed('-', s));
  }
  if (h >= 0) {
    for (Sequence& s : NaturalRange(b, name, uint64_t(std::max<int64_t>(0, l)), uint64_t(h), none))
      alts.push_back(std::move(s));
  }
  return b.AddRule(name, std::move(alts));
}

Result<int32_t> AddNumberRange(GrammarBuilder& b, std::string_view name, const Bound& lo,
                               const Bound& hi) {
  std::vector<Sequence> alts = SignedRange(b, name, lo, hi);
  if (alts.empty())
    return Status::InvalidArgument(
        "no number of at most 15 significant digits (written without exponent) lies in the "
        "range");
  return b.AddRule(name, std::move(alts));
}

Result<int32_t> SchemaCompiler::CompileNumeric(const Json& s, const At& at, bool integer) {
  BRISK_ASSIGN_OR_RETURN(Bound lo, ReadBound(*this, s, at, true));
  BRISK_ASSIGN_OR_RETURN(Bound hi, ReadBound(*this, s, at, false));
  auto format = s.find("format");
  const std::string f = format != s.end() && format->is_string() ? format->get<std::string>() : "";
  if (f == "int32" || f == "int64") integer = true;  // ajv-formats: integers of that width
  if (f == "int32") {
    lo = Tighter(lo, Bound{true, false, Decimal{true, "2147483648", ""}}, true);
    hi = Tighter(hi, Bound{true, false, Decimal{false, "2147483647", ""}}, false);
  }
  if (!lo.present && !hi.present) return integer ? lex().Integer() : lex().Number();
  if (lo.present && hi.present) {
    const int cmp = CompareDecimal(lo.value, hi.value);
    if (cmp > 0 || (cmp == 0 && (lo.exclusive || hi.exclusive)))
      return Nothing("its lower bound is not below its upper bound", at);
  }
  Result<int32_t> r = integer ? AddIntegerRange(b(), Name("int-range"), lo, hi)
                              : AddNumberRange(b(), Name("num-range"), lo, hi);
  if (!r.ok()) return Nothing(r.message(), at);
  return r;
}

}  // namespace brisk::structured::schema

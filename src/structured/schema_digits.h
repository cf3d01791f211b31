// Internal to the JSON Schema compiler: grammars of digit strings within exact decimal bounds,
// the parts numeric ranges (schema_numbers.cc) are made of.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "structured/grammar.h"

namespace brisk::structured::schema {

// The naturals in [lo, hi] written without leading zeros (at most 15 digits), as alternatives;
// each is followed by suffix(digit count, value is zero), and left out where that is nullopt.
std::vector<Sequence> NaturalRange(
    GrammarBuilder& b, std::string_view name, uint64_t lo, uint64_t hi,
    const std::function<std::optional<Sequence>(int digits, bool zero)>& suffix);

// Bounds on the digits after a decimal point, compared as fractions (so "5" == "50"); digit
// strings have no trailing zeros.
struct FractionBounds {
  std::optional<std::string> lo, hi;
  bool lo_exclusive = false, hi_exclusive = false;
};

// The fraction parts (nothing, or "." and 1..max_digits digits) whose value lies within
// `bounds`: nullopt when there is none.
std::optional<Sequence> FractionPart(GrammarBuilder& b, std::string_view name,
                                     const FractionBounds& bounds, int max_digits);

}  // namespace brisk::structured::schema

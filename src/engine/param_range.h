// The valid values of a request parameter, and the one wording of "out of range". The sampler
// (sampler.h) and request validation (request_validation.h) define their ranges with it; a server
// checks a client's value against those same ranges before narrowing it (a JSON number is a
// double, the engine holds a float), so its message quotes what the client sent.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "util/status.h"

namespace brisk {

struct ParamRange {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;                      // lo itself is excluded
  bool integer = false;                      // messages say "an integer"
  constexpr bool Contains(double v) const {  // false for NaN
    return (lo_open ? v > lo : v >= lo) && v <= hi;
  }
};

constexpr ParamRange IntRange(int64_t lo, int64_t hi) {
  return {double(lo), double(hi), false, true};
}

// invalid_argument with field(): "<subject> must be <the range>, got <got>". `subject` is what the
// message names, when it is not the field itself ("logit_bias[5]" for an entry of "logit_bias").
Status RangeError(const ParamRange& r, std::string_view field, std::string_view got,
                  std::string_view subject = {});

// Ok when r holds v, else RangeError quoting v.
Status CheckFloat(const ParamRange& r, std::string_view field, double v,
                  std::string_view subject = {});
Status CheckInt(const ParamRange& r, std::string_view field, int64_t v,
                std::string_view subject = {});

// Token ids are in [0, n_vocab): else invalid_argument with field(),
// "<subject>: token id <id> is out of range [0, <n_vocab>)".
Status CheckTokenId(int64_t id, int n_vocab, std::string_view field, std::string_view subject = {});

}  // namespace brisk

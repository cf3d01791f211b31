#include "engine/param_range.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>

namespace brisk {
namespace {

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string Int(double v) { return std::to_string(int64_t(v)); }

// "in [0, 2]", "in (0, 1]", ">= 0", "a finite number", "an integer in [1, 2147483647]".
std::string Describe(const ParamRange& r, bool above) {
  if (r.integer) {
    if (std::isinf(r.hi)) return "an integer >= " + Int(r.lo);
    return "an integer in [" + Int(r.lo) + ", " + Int(r.hi) + "]";
  }
  // A bound at the float limit only says "a float holds it": the range is open on that side.
  const bool no_lo = r.lo <= -FLT_MAX, no_hi = r.hi >= FLT_MAX;
  if (no_lo && no_hi) return "a finite number";
  if (no_hi) return above ? "at most " + Num(r.hi) : (r.lo_open ? "> " : ">= ") + Num(r.lo);
  return std::string("in ") + (r.lo_open ? "(" : "[") + Num(r.lo) + ", " + Num(r.hi) + "]";
}

Status Error(const ParamRange& r, std::string_view field, std::string_view got,
             std::string_view subject, bool above) {
  std::string message(subject.empty() ? field : subject);
  message += " must be " + Describe(r, above) + ", got ";
  message += got;
  return Status::InvalidArgument(std::move(message), std::string(field));
}

}  // namespace

Status RangeError(const ParamRange& r, std::string_view field, std::string_view got,
                  std::string_view subject) {
  return Error(r, field, got, subject, /*above=*/false);
}

Status CheckFloat(const ParamRange& r, std::string_view field, double v, std::string_view subject) {
  if (r.Contains(v)) return Status::Ok();
  return Error(r, field, Num(v), subject, /*above=*/v > r.hi);
}

Status CheckInt(const ParamRange& r, std::string_view field, int64_t v, std::string_view subject) {
  if (r.Contains(double(v))) return Status::Ok();
  return Error(r, field, std::to_string(v), subject, /*above=*/false);
}

Status CheckTokenId(int64_t id, int n_vocab, std::string_view field, std::string_view subject) {
  if (id >= 0 && id < n_vocab) return Status::Ok();
  return Status::InvalidArgument(std::string(subject.empty() ? field : subject) + ": token id " +
                                     std::to_string(id) + " is out of range [0, " +
                                     std::to_string(n_vocab) + ")",
                                 std::string(field));
}

}  // namespace brisk

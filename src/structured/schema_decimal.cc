// Numeric bounds as exact decimals. A validator reads a bound such as 0.1 as a double; the
// decimal we compare the output's digits with is that double's shortest round-trip spelling,
// which is the text a person wrote whenever it had at most 15 significant digits.
#include <charconv>
#include <cmath>
#include <string>

#include "structured/schema_compiler.h"

namespace brisk::structured::schema {
namespace {

void Normalise(Decimal* d) {
  const size_t nz = d->int_digits.find_first_not_of('0');
  d->int_digits = nz == std::string::npos ? "0" : d->int_digits.substr(nz);
  while (!d->frac_digits.empty() && d->frac_digits.back() == '0') d->frac_digits.pop_back();
  if (d->zero()) d->negative = false;
}

// "1.5e-07", "123.25", "1e+20" (std::to_chars' shortest form) as a Decimal.
Decimal FromShortest(std::string_view text) {
  Decimal d;
  size_t i = 0;
  if (i < text.size() && text[i] == '-') d.negative = true, ++i;
  std::string digits;
  long point = -1;
  for (; i < text.size() && text[i] != 'e'; ++i) {
    if (text[i] == '.') {
      point = long(digits.size());
    } else {
      digits += text[i];
    }
  }
  if (point < 0) point = long(digits.size());
  if (i < text.size()) point += std::stol(std::string(text.substr(i + 1)));
  if (point <= 0) {
    d.int_digits = "0";
    d.frac_digits = std::string(size_t(-point), '0') + digits;
  } else if (size_t(point) >= digits.size()) {
    d.int_digits = digits + std::string(size_t(point) - digits.size(), '0');
  } else {
    d.int_digits = digits.substr(0, size_t(point));
    d.frac_digits = digits.substr(size_t(point));
  }
  Normalise(&d);
  return d;
}

}  // namespace

Result<Decimal> ToDecimal(const Json& v) {
  Decimal d;
  if (v.is_number_unsigned()) {
    d.int_digits = std::to_string(v.get<uint64_t>());
  } else if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    d.negative = i < 0;
    d.int_digits = std::to_string(i < 0 ? 0 - uint64_t(i) : uint64_t(i));
  } else if (v.is_number_float()) {
    const double x = v.get<double>();
    if (!std::isfinite(x)) return Status::InvalidArgument("not a finite number");
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    return FromShortest(std::string_view(buf, size_t(r.ptr - buf)));
  } else {
    return Status::InvalidArgument("not a number");
  }
  Normalise(&d);
  return d;
}

int CompareDecimal(const Decimal& a, const Decimal& b) {
  if (a.negative != b.negative) return a.negative ? -1 : 1;
  const int sign = a.negative ? -1 : 1;
  if (a.int_digits.size() != b.int_digits.size())
    return a.int_digits.size() < b.int_digits.size() ? -sign : sign;
  if (int c = a.int_digits.compare(b.int_digits); c != 0) return c < 0 ? -sign : sign;
  const size_t n = std::max(a.frac_digits.size(), b.frac_digits.size());
  for (size_t i = 0; i < n; ++i) {
    const char x = i < a.frac_digits.size() ? a.frac_digits[i] : '0';
    const char y = i < b.frac_digits.size() ? b.frac_digits[i] : '0';
    if (x != y) return x < y ? -sign : sign;
  }
  return 0;
}

}  // namespace brisk::structured::schema

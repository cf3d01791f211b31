#include "bench/stats.h"

#include <algorithm>
#include <cmath>

#include "util/check.h"

namespace brisk {

double PercentileSorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  BRISK_CHECK(q >= 0 && q <= 100);
  const double rank = q / 100.0 * double(sorted.size() - 1);
  const size_t lo = size_t(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - double(lo);
  // a + (b - a) * f rather than a * (1 - f) + b * f: exact at f == 0 and monotone in f.
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

LatencySummary Summarize(std::vector<double> values) {
  LatencySummary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.count = int64_t(values.size());
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / double(values.size());
  s.min = values.front();
  s.max = values.back();
  s.p50 = PercentileSorted(values, 50);
  s.p90 = PercentileSorted(values, 90);
  s.p99 = PercentileSorted(values, 99);
  return s;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const auto mid = values.begin() + std::ptrdiff_t(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

}  // namespace brisk

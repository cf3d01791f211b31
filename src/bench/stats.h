// Summary statistics for benchmark latencies (DESIGN §7 "Measuring": p50/p90/p99).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace brisk {

// Percentile q (0..100) of `sorted` (ascending), interpolating linearly between the two closest
// ranks: rank = q/100 * (n-1), as numpy.percentile does by default, so numbers can be checked
// against a numpy one-liner. 0 for an empty input.
double PercentileSorted(std::span<const double> sorted, double q);

// count/mean/min/max/p50/p90/p99 of a sample. Every field is 0 when the sample is empty (count
// says so; reports print "-").
struct LatencySummary {
  int64_t count = 0;
  double mean = 0, min = 0, max = 0;
  double p50 = 0, p90 = 0, p99 = 0;
};

// Takes the values by copy: they are sorted in place, input order does not matter.
LatencySummary Summarize(std::vector<double> values);

// The middle value of repeated timings (the upper one of the two middles for an even count, a
// value that was measured); 0 for an empty input.
double Median(std::vector<double> values);

}  // namespace brisk

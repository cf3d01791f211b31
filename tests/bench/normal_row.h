// Random-normal logits rows for the sampling benchmarks: what a random-weight model gives.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/sampler.h"

namespace brisk {

// Box-Muller over the sampler's generator: the same rows on every platform.
inline std::vector<float> NormalRow(int n, uint64_t seed, double scale) {
  SamplerRng rng(seed);
  std::vector<float> row(static_cast<size_t>(n));
  for (float& x : row) {
    const double u1 = 1.0 - rng.NextDouble();
    const double u2 = rng.NextDouble();
    x = float(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2) * scale);
  }
  return row;
}

}  // namespace brisk

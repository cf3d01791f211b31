// SplitMix64 (Steele, Lea, Flood 2014): the one small, well-mixed 64-bit generator and hash
// finalizer. Used where a stream only needs to be cheap, seedable and platform-independent
// (synthetic weights, workload draws, seeding xoshiro) and where keys need full avalanche.
#pragma once

#include <cstdint>

namespace brisk {

// The finalizer: every input bit affects every output bit.
inline uint64_t Mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Advances `state` and returns the next output.
inline uint64_t SplitMix64(uint64_t& state) { return Mix64(state += 0x9e3779b97f4a7c15ULL); }

}  // namespace brisk

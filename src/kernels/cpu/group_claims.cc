#include "kernels/cpu/group_claims.h"

#include <algorithm>

#include "util/check.h"

namespace brisk {
namespace {
uint64_t Pack(uint64_t lo, uint64_t hi) { return (hi << 32) | lo; }
}  // namespace

GroupClaims::GroupClaims(int n_threads)
    : n_(std::max(1, n_threads)),
      slots_(std::make_unique<Slot[]>(size_t(n_))),
      starts_(std::make_unique<int64_t[]>(size_t(n_) + 1)) {}

void GroupClaims::Reset(int64_t chunk) {
  BRISK_CHECK(chunk >= 1);
  const int64_t* starts = starts_.get();
  chunk_ = chunk;
  for (int t = 0; t < n_; ++t) {
    BRISK_CHECK(starts[t] >= 0 && starts[t] <= starts[t + 1] && starts[t + 1] <= INT32_MAX);
    slots_[t].range.store(Pack(uint64_t(starts[t]), uint64_t(starts[t + 1])),
                          std::memory_order_relaxed);
  }
}

bool GroupClaims::TakeFront(Slot& s, int64_t* g0, int64_t* g1) {
  uint64_t v = s.range.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t lo = v & 0xffffffffu, hi = v >> 32;
    if (lo >= hi) return false;
    const uint64_t take = std::min<uint64_t>(uint64_t(chunk_), hi - lo);
    if (s.range.compare_exchange_weak(v, Pack(lo + take, hi), std::memory_order_relaxed)) {
      *g0 = int64_t(lo), *g1 = int64_t(lo + take);
      return true;
    }
  }
}

bool GroupClaims::TakeBack(Slot& s, int64_t* g0, int64_t* g1) {
  uint64_t v = s.range.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t lo = v & 0xffffffffu, hi = v >> 32;
    if (lo >= hi) return false;
    const uint64_t take = std::min<uint64_t>(uint64_t(chunk_), hi - lo);
    if (s.range.compare_exchange_weak(v, Pack(lo, hi - take), std::memory_order_relaxed)) {
      *g0 = int64_t(hi - take), *g1 = int64_t(hi);
      return true;
    }
  }
}

bool GroupClaims::Next(int t, int64_t* g0, int64_t* g1) {
  if (TakeFront(slots_[t], g0, g1)) return true;
  for (int k = 1; k < n_; ++k)
    if (TakeBack(slots_[(t + k) % n_], g0, g1)) return true;
  return false;
}

}  // namespace brisk

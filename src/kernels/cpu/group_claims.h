// Work stealing over a matmul's row groups. Each thread starts on a contiguous, byte-balanced range
// (so it streams its weights sequentially, as a static split would) and claims chunks from the
// front of it; a thread whose range is empty takes chunks from the back of the others' ranges.
// On a shared machine one thread is often slowed for a while (a VM's steal time, an interrupt):
// with a static split the others then wait at the barrier (13% of decode time was measured
// spinning there); with stealing they take over its remaining work.
//
// Which thread computes a group never changes the result: each group's outputs come from one
// kernel call with a fixed formula (matmul.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace brisk {

class GroupClaims {
 public:
  explicit GroupClaims(int n_threads);
  // Called before the parallel region, after filling starts() (n_threads + 1 ascending entries):
  // thread t owns groups [starts[t], starts[t + 1]) and claims `chunk` (>= 1) groups at a time.
  int64_t* starts() { return starts_.get(); }
  void Reset(int64_t chunk);
  // Thread t's next groups [*g0, *g1): the front of its own range, else the back of another's.
  // False once every range is empty.
  bool Next(int t, int64_t* g0, int64_t* g1);
  int n_threads() const { return n_; }

 private:
  // One thread's remaining range as (hi << 32) | lo, alone on its cache line so the owner's
  // claims stay in its own cache until someone steals.
  struct alignas(64) Slot {
    std::atomic<uint64_t> range{0};
  };
  bool TakeFront(Slot& s, int64_t* g0, int64_t* g1);
  bool TakeBack(Slot& s, int64_t* g0, int64_t* g1);

  int n_;
  int64_t chunk_ = 1;
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<int64_t[]> starts_;
};

}  // namespace brisk

// A std::allocator replacement for large scratch buffers (the forward pass's activations): 2 MiB
// aligned with transparent huge pages advised. With 4 KiB pages a prefill of 512 tokens writes
// the 20 MB gate/up output one 64-byte row slice per token and page (row stride 38 KiB), so
// almost every store missed the TLB.
#pragma once

#include <cstddef>
#include <vector>

namespace brisk {

inline constexpr size_t kHugePageBytes = size_t(2) << 20;  // x86-64 transparent huge page

// At least 64-byte aligned; release with HugePageFree or std::free.
void* HugePageAlloc(size_t bytes);
void HugePageFree(void* p, size_t bytes);

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(HugePageAlloc(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { HugePageFree(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

template <typename T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace brisk

#include "runtime/huge_page_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <numeric>

namespace brisk {
namespace {

TEST(HugePageAlloc, LargeBuffersAreHugePageAlignedAndUsable) {
  const size_t bytes = (size_t(5) << 20) + 12345;
  auto* p = static_cast<uint8_t*>(HugePageAlloc(bytes));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePageBytes, 0u);
  for (size_t i = 0; i < bytes; i += 4096) p[i] = uint8_t(i >> 12);
  p[bytes - 1] = 7;
  for (size_t i = 0; i < bytes; i += 4096) ASSERT_EQ(p[i], uint8_t(i >> 12));
  EXPECT_EQ(p[bytes - 1], 7);
  std::free(p);  // documented: std::free releases it
}

TEST(HugePageAlloc, SmallBuffersAreCacheLineAligned) {
  for (size_t bytes : {1, 63, 4096, 100000}) {
    void* p = HugePageAlloc(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
    HugePageFree(p, bytes);
  }
}

TEST(HugeVector, BehavesLikeAVector) {
  HugeVector<float> v(size_t(1) << 20);
  std::iota(v.begin(), v.end(), 0.0f);
  v.resize(size_t(3) << 20, -1.0f);
  EXPECT_EQ(v[12345], 12345.0f);
  EXPECT_EQ(v.back(), -1.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % kHugePageBytes, 0u);
}

}  // namespace
}  // namespace brisk

// AllocWeightMemory: pieces are 64-byte aligned, zeroed, disjoint, survive the release of their
// neighbours, and small pieces share 2 MiB-aligned slabs (so consecutive tensors share huge pages).
#include "kernels/cpu/weight_arena.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace brisk {
namespace {

TEST(WeightArena, AlignedZeroedDisjointPieces) {
  std::vector<std::shared_ptr<void>> pieces;
  std::vector<size_t> sizes = {1, 63, 64, 100, 700000, 3 << 20, 5, 40 << 20, 9000};
  for (size_t n : sizes) {
    pieces.push_back(AllocWeightMemory(n));
    ASSERT_NE(pieces.back(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pieces.back().get()) % 64, 0u) << n;
  }
  EXPECT_EQ(AllocWeightMemory(0), nullptr);
  // Zeroed, then each piece filled with its own byte: no piece may overwrite another.
  for (size_t i = 0; i < sizes.size(); ++i) {
    const uint8_t* p = static_cast<const uint8_t*>(pieces[i].get());
    EXPECT_TRUE(std::all_of(p, p + sizes[i], [](uint8_t b) { return b == 0; })) << sizes[i];
    std::memset(pieces[i].get(), int(i + 1), sizes[i]);
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    const uint8_t* p = static_cast<const uint8_t*>(pieces[i].get());
    EXPECT_TRUE(std::all_of(p, p + sizes[i], [&](uint8_t b) { return b == uint8_t(i + 1); }))
        << sizes[i];
  }
  // Releasing neighbours keeps a piece's memory mapped.
  std::shared_ptr<void> keep = pieces[3];
  pieces.clear();
  const uint8_t* k = static_cast<const uint8_t*>(keep.get());
  EXPECT_TRUE(std::all_of(k, k + 100, [](uint8_t b) { return b == 4; }));
}

TEST(WeightArena, SmallPiecesAreConsecutiveInOneHugePageAlignedSlab) {
  auto a = AllocWeightMemory(1000);
  auto b = AllocWeightMemory(1000);
  const uintptr_t pa = reinterpret_cast<uintptr_t>(a.get()),
                  pb = reinterpret_cast<uintptr_t>(b.get());
  // b follows a at the next 64-byte boundary unless a opened a fresh slab's last bytes.
  if (pb != pa + 1024) {
    EXPECT_EQ(pb % (size_t(2) << 20), 0u) << "a new slab starts 2 MiB aligned";
  }
  auto big = AllocWeightMemory(size_t(40) << 20);  // its own slab
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.get()) % (size_t(2) << 20), 0u);
}

}  // namespace
}  // namespace brisk

// The KV budget under a memory limit: what the limit leaves after the resident engine and the
// headroom, capped at the default, and a clear refusal when one sequence cannot fit.
#include <gtest/gtest.h>

#include "engine/engine_config.h"

namespace brisk {
namespace {

constexpr size_t kMiB = size_t(1) << 20;

TEST(KvBudgetTest, LimitMinusResidentMinusHeadroom) {
  // 1 GiB limit: headroom max(160 MiB, 10%) = 160 MiB.
  EXPECT_EQ(MemoryHeadroom(1024 * kMiB), 160 * kMiB);
  EXPECT_EQ(MemoryHeadroom(4096 * kMiB), size_t(4096 * kMiB * 0.10));
  auto b = KvBudgetWithinMemory(1024 * kMiB, 600 * kMiB, 96 * kMiB, 2048 * kMiB);
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ(*b, 264 * kMiB);
  // A roomy limit is capped at the default.
  b = KvBudgetWithinMemory(64 * 1024 * kMiB, 600 * kMiB, 96 * kMiB, 2048 * kMiB);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, 2048 * kMiB);
}

TEST(KvBudgetTest, RefusesWhenOneSequenceCannotFit) {
  auto b = KvBudgetWithinMemory(1024 * kMiB, 800 * kMiB, 96 * kMiB, 2048 * kMiB);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(b.message().find("memory limit 1.0 GiB"), std::string::npos) << b.message();
  EXPECT_NE(b.message().find("less than one full sequence needs (96 MiB)"), std::string::npos)
      << b.message();
  // Resident beyond the limit: nothing left, no underflow.
  EXPECT_FALSE(KvBudgetWithinMemory(512 * kMiB, 900 * kMiB, 1, 2048 * kMiB).ok());
}

}  // namespace
}  // namespace brisk

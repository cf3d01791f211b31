// GroupClaims: every group is handed out exactly once however the threads race, a thread that
// starts late has its range taken over by the others, and MatmulArgmax (which claims groups in no
// fixed order across threads) still returns the lowest row on ties.
#include "kernels/cpu/group_claims.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace brisk {
namespace {

TEST(GroupClaims, EveryGroupOnceAndALateThreadsWorkIsStolen) {
  constexpr int kThreads = 4;
  constexpr int64_t kGroups = 1001;
  GroupClaims claims(kThreads);
  for (int round = 0; round < 20; ++round) {
    int64_t* s = claims.starts();
    for (int t = 0; t <= kThreads; ++t) s[t] = kGroups * t / kThreads;
    claims.Reset(1 + round % 5);
    std::vector<std::atomic<int>> owner(kGroups);
    for (auto& o : owner) o.store(-1);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        if (t == 0) std::this_thread::sleep_for(std::chrono::milliseconds(30));
        int64_t g0, g1;
        while (claims.Next(t, &g0, &g1)) {
          ASSERT_LT(g0, g1);
          for (int64_t g = g0; g < g1; ++g) {
            int expected = -1;
            ASSERT_TRUE(owner[g].compare_exchange_strong(expected, t)) << "group " << g << " twice";
          }
          std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
      });
    for (auto& th : threads) th.join();
    int stolen_from_late = 0;
    for (int64_t g = 0; g < kGroups; ++g) {
      ASSERT_GE(owner[g].load(), 0) << "group " << g << " never handed out";
      if (g < s[1] && owner[g].load() != 0) ++stolen_from_late;
    }
    EXPECT_GT(stolen_from_late, 0) << "round " << round;
  }
}

TEST(GroupClaims, EmptyAndUnevenRanges) {
  GroupClaims claims(3);
  int64_t* s = claims.starts();
  s[0] = 0, s[1] = 0, s[2] = 7, s[3] = 7;  // thread 0 and 2 own nothing
  claims.Reset(4);
  std::vector<int> seen(7, 0);
  int64_t g0, g1;
  while (claims.Next(0, &g0, &g1))  // thread 0 alone drains thread 1's range from the back
    for (int64_t g = g0; g < g1; ++g) ++seen[g];
  for (int c : seen) EXPECT_EQ(c, 1);
  EXPECT_FALSE(claims.Next(1, &g0, &g1));
  EXPECT_FALSE(claims.Next(2, &g0, &g1));
}

}  // namespace
}  // namespace brisk

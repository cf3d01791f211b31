#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace brisk {
namespace {

TEST(ThreadPool, RunCallsEveryWorkerOnce) {
  for (int n : {1, 2, 3, 5}) {
    ThreadPool pool(n);
    std::vector<std::atomic<int>> hits(n);
    for (int rep = 0; rep < 100; ++rep)
      pool.Run([&](int t, int total) {
        ASSERT_EQ(total, n);
        hits[t]++;
      });
    for (int t = 0; t < n; ++t) EXPECT_EQ(hits[t].load(), 100) << "thread " << t;
  }
}

TEST(ThreadPool, ParallelForCoversRangeExactlyOnce) {
  ThreadPool pool(3);
  for (int64_t n : {0, 1, 2, 7, 100, 1001}) {
    std::vector<std::atomic<int>> seen(size_t(n) + 1);
    pool.ParallelFor(n, 4, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) seen[size_t(i)]++;
    });
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(seen[size_t(i)].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ThreadPool, ManyShortJobsAfterIdleSleep) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  for (int rep = 0; rep < 2000; ++rep) {
    pool.ParallelFor(10, 1, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) sum += i;
    });
    if (rep == 1000) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // workers sleep
  }
  EXPECT_EQ(sum.load(), 2000 * 45);
}

}  // namespace
}  // namespace brisk

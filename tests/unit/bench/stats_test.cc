// Percentiles against values numpy.percentile (linear, the default) gives for the same data.
#include "bench/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace brisk {
namespace {

TEST(StatsTest, OneToHundredAndOne) {
  std::vector<double> v;
  for (int i = 1; i <= 101; ++i) v.push_back(i);
  const LatencySummary s = Summarize(v);
  EXPECT_EQ(s.count, 101);
  EXPECT_DOUBLE_EQ(s.p50, 51);
  EXPECT_DOUBLE_EQ(s.p90, 91);
  EXPECT_DOUBLE_EQ(s.p99, 100);
  EXPECT_DOUBLE_EQ(s.mean, 51);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 101);
}

TEST(StatsTest, InterpolatesBetweenRanks) {
  // numpy.percentile([0, 10], [50, 90, 99]) == [5, 9, 9.9]
  const LatencySummary s = Summarize({10, 0});
  EXPECT_EQ(s.count, 2);
  EXPECT_DOUBLE_EQ(s.p50, 5);
  EXPECT_DOUBLE_EQ(s.p90, 9);
  EXPECT_NEAR(s.p99, 9.9, 1e-12);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  // numpy.percentile([1, 2, 3, 4], 90) == 3.7 (rank 2.7)
  const std::vector<double> four = {1, 2, 3, 4};
  EXPECT_NEAR(PercentileSorted(four, 90), 3.7, 1e-12);
  EXPECT_DOUBLE_EQ(PercentileSorted(four, 0), 1);
  EXPECT_DOUBLE_EQ(PercentileSorted(four, 100), 4);
}

TEST(StatsTest, EmptyAndSingle) {
  const LatencySummary e = Summarize({});
  EXPECT_EQ(e.count, 0);
  EXPECT_EQ(e.p50, 0);
  EXPECT_EQ(e.p99, 0);
  EXPECT_EQ(e.mean, 0);
  EXPECT_EQ(PercentileSorted({}, 50), 0);
  const LatencySummary one = Summarize({7.5});
  EXPECT_EQ(one.count, 1);
  EXPECT_DOUBLE_EQ(one.p50, 7.5);
  EXPECT_DOUBLE_EQ(one.p99, 7.5);
  EXPECT_DOUBLE_EQ(one.min, 7.5);
  EXPECT_DOUBLE_EQ(one.max, 7.5);
}

TEST(StatsTest, UnsortedInputGivesTheSortedAnswer) {
  std::vector<double> v;
  for (int i = 1; i <= 101; ++i) v.push_back(i);
  std::mt19937 rng(42);
  std::shuffle(v.begin(), v.end(), rng);
  ASSERT_FALSE(std::is_sorted(v.begin(), v.end()));
  const LatencySummary s = Summarize(v);
  EXPECT_DOUBLE_EQ(s.p50, 51);
  EXPECT_DOUBLE_EQ(s.p90, 91);
  EXPECT_DOUBLE_EQ(s.p99, 100);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 101);
}

TEST(StatsTest, PercentilesAreOrdered) {
  std::mt19937 rng(7);
  std::exponential_distribution<double> d(1.0);
  std::vector<double> v(1000);
  for (double& x : v) x = d(rng);
  const LatencySummary s = Summarize(v);
  EXPECT_LE(s.min, s.p50);
  EXPECT_LE(s.p50, s.p90);
  EXPECT_LE(s.p90, s.p99);
  EXPECT_LE(s.p99, s.max);
}

}  // namespace
}  // namespace brisk

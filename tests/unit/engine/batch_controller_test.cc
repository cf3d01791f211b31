// The batch controller on synthetic step timings: static never moves, loadavg shrinks the cap
// with excess load, slo shrinks limits when decode steps exceed the TPOT target and grows them
// back when latency is comfortably under it and the cap binds.
#include "engine/batch_controller.h"

#include <gtest/gtest.h>

namespace brisk {
namespace {

BatchControllerConfig Config(BatchPolicy p) {
  BatchControllerConfig c;
  c.policy = p;
  c.max_num_seqs = 64;
  c.max_num_batched_tokens = 512;
  c.tpot_target_ms = 50;
  c.window_s = 2;
  c.cores = 2;
  return c;
}

// Feeds `seconds` of decode steps of `step_ms` each with `running` sequences.
void Feed(BatchController& b, double* now, double seconds, double step_ms, int running,
          double load = 0) {
  for (double end = *now + seconds; *now < end; *now += step_ms / 1e3)
    b.Observe(*now, step_ms / 1e3, running, running, load);
}

TEST(BatchController, StaticKeepsTheConfiguredLimits) {
  BatchController b(Config(BatchPolicy::kStatic));
  double now = 0;
  Feed(b, &now, 10, 200, 64);
  EXPECT_EQ(b.limits().max_num_seqs, 64);
  EXPECT_EQ(b.limits().max_num_batched_tokens, 512);
}

TEST(BatchController, LoadAvgShrinksWithExcessLoad) {
  BatchController b(Config(BatchPolicy::kLoadAvg));
  double now = 0;
  Feed(b, &now, 1, 20, 8, 1.5);  // within the cores: full cap
  EXPECT_EQ(b.limits().max_num_seqs, 64);
  Feed(b, &now, 1, 20, 8, 3.0);  // one core of excess: half
  EXPECT_EQ(b.limits().max_num_seqs, 32);
  Feed(b, &now, 1, 20, 8, 4.2);  // 2.2 cores of excess: an eighth
  EXPECT_EQ(b.limits().max_num_seqs, 8);
  Feed(b, &now, 1, 20, 8, 0.5);
  EXPECT_EQ(b.limits().max_num_seqs, 64);
}

TEST(BatchController, SloShrinksOverTargetAndGrowsBackUnderIt) {
  BatchController b(Config(BatchPolicy::kSlo));
  double now = 0;
  Feed(b, &now, 20, 120, 64);  // far over the 50 ms target
  const BatchLimits low = b.limits();
  EXPECT_LT(low.max_num_batched_tokens, 512);
  EXPECT_LT(low.max_num_seqs, 64);
  EXPECT_GE(low.max_num_seqs, 1);
  // Now fast and every slot in use: the limits grow again, never past the maxima.
  Feed(b, &now, 60, 10, 64);
  EXPECT_GT(b.limits().max_num_seqs, low.max_num_seqs);
  EXPECT_LE(b.limits().max_num_seqs, 64);
  EXPECT_LE(b.limits().max_num_batched_tokens, 512);
  // Fast but slots unused: the sequence cap does not grow for nothing.
  BatchController idle(Config(BatchPolicy::kSlo));
  double t = 0;
  Feed(idle, &t, 20, 10, BatchController::kSloStart - 2);
  EXPECT_EQ(idle.limits().max_num_seqs, BatchController::kSloStart);
}

TEST(BatchController, SloStartsSmallAndGrowsToTheMaximumWhileFast) {
  BatchController b(Config(BatchPolicy::kSlo));
  EXPECT_EQ(b.limits().max_num_seqs, BatchController::kSloStart);
  double now = 0;
  Feed(b, &now, 120, 10, 64);
  EXPECT_EQ(b.limits().max_num_seqs, 64);
  EXPECT_EQ(b.limits().max_num_batched_tokens, 512);
}

TEST(BatchController, SloP95TracksTheWindow) {
  BatchController b(Config(BatchPolicy::kSlo));
  double now = 0;
  for (int i = 0; i < 100; ++i, now += 0.01) b.Observe(now, i < 95 ? 0.010 : 0.100, 4, 4, 0);
  EXPECT_NEAR(b.tpot_p95_ms(), 10.0, 1e-9);  // 95 of 100 steps at 10 ms
}

TEST(BatchController, ParsesPolicyNames) {
  EXPECT_TRUE(ParseBatchPolicy("slo").ok());
  EXPECT_TRUE(ParseBatchPolicy("loadavg").ok());
  EXPECT_TRUE(ParseBatchPolicy("static").ok());
  EXPECT_FALSE(ParseBatchPolicy("fast").ok());
}

}  // namespace
}  // namespace brisk

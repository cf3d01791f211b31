// brisk tune's search on a scripted latency model (no timing): the guided search must find the
// exhaustive grid's best SLO-meeting throughput with fewer measurements; Pareto front, SLO
// checks and the config file on hand-made points.
#include "bench/tuner.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fake_target.h"

namespace brisk {
namespace {

// TPOT = 10 + 5 x seqs ms; the first gap of each request also carries a prefill step of
// (chunk or, when 0, the whole budget) / 64 ms per remaining token, so with 9 output tokens the
// TPOT of a request rises by chunk / 64 ms.
testing::FakeLatency Model(const TargetLimits& l) {
  testing::FakeLatency f;
  f.ttft_s = 0.1;
  f.tpot_s = (10.0 + 5.0 * std::max(l.max_num_seqs, 1)) * 1e-3;
  const int eff = l.max_prefill_chunk > 0 ? l.max_prefill_chunk : l.max_num_batched_tokens;
  f.spike_s = eff / 64.0 * 8 * 1e-3;
  return f;
}

TuneOptions Options(bool exhaustive) {
  TuneOptions o;
  o.bench.output_len = 9;
  o.bench.num_prompts = 12;
  o.bench.warmup = 0;
  o.bench.progress = false;
  o.bench.slo = Slo{0, 50};
  o.exhaustive = exhaustive;
  return o;
}

TEST(Tune, GuidedSearchMatchesTheExhaustiveBestWithFewerPoints) {
  testing::FakeTarget guided_target(Model);
  auto guided = RunTune(guided_target, Options(false));
  ASSERT_TRUE(guided.ok()) << guided.message();
  testing::FakeTarget full_target(Model);
  auto full = RunTune(full_target, Options(true));
  ASSERT_TRUE(full.ok()) << full.message();

  // Grid: 7 seqs x {128, 256, 512} x {64, 128, whole}; chunk 128 at budget 128 is "whole".
  EXPECT_EQ(full->grid_size, 7 * 8);
  EXPECT_EQ(int(full->report.points.size()), full->grid_size);
  EXPECT_LT(guided->report.points.size(), full->report.points.size() / 2);

  // By hand: seqs 6 -> TPOT 40 ms + chunk/64; seqs 8 -> 50 + chunk/64 > 50 always. The best
  // meeting point is seqs 6 with the smallest chunk (64): TPOT 41 ms.
  ASSERT_GE(guided->chosen, 0);
  ASSERT_GE(full->chosen, 0);
  const BenchPoint& g = guided->report.points[size_t(guided->chosen)];
  const BenchPoint& f = full->report.points[size_t(full->chosen)];
  EXPECT_EQ(g.max_num_seqs, 6);
  EXPECT_EQ(g.max_prefill_chunk, 64);
  EXPECT_NEAR(g.tpot_ms.p99, 41, 1e-6);
  EXPECT_EQ(f.max_num_seqs, 6);
  EXPECT_NEAR(g.output_tok_s, f.output_tok_s, 1e-9);

  auto cfg = guided->ConfigJson();
  ASSERT_TRUE(cfg.ok());
  auto j = nlohmann::json::parse(*cfg);
  EXPECT_EQ(j["batch_policy"], "static");
  EXPECT_EQ(j["max_num_seqs"], 6);
  EXPECT_EQ(j["max_prefill_chunk"], 64);
  EXPECT_EQ(j["max_num_batched_tokens"], g.max_num_batched_tokens);
  EXPECT_NE(guided->explanation.find("max_num_seqs=6"), std::string::npos) << guided->explanation;
  EXPECT_NE(guided->explanation.find("A batch of 8"), std::string::npos) << guided->explanation;
  EXPECT_NE(guided->ToTable().find("BEST"), std::string::npos);
}

TEST(Tune, NothingMeetsTheSlo) {
  testing::FakeTarget t(Model);
  TuneOptions o = Options(false);
  o.bench.slo = Slo{0, 5};  // below even seqs=1 (15 ms)
  auto r = RunTune(t, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->chosen, -1);
  EXPECT_FALSE(r->ConfigJson().ok());
  EXPECT_NE(r->explanation.find("None of them met it"), std::string::npos) << r->explanation;
  // seqs=1 at the default budget, then the 7 other distinct budget/chunk settings at seqs=1.
  EXPECT_EQ(r->report.points.size(), 1u + 7u);
}

TEST(Tune, RejectsMissingSloAndEmptyGrid) {
  testing::FakeTarget t(Model);
  TuneOptions o = Options(false);
  o.bench.slo = Slo{};
  EXPECT_FALSE(RunTune(t, o).ok());
  o = Options(false);
  o.seqs.clear();
  EXPECT_FALSE(RunTune(t, o).ok());
  o = Options(false);
  o.prefill_chunks = {-1};
  EXPECT_FALSE(RunTune(t, o).ok());
  EXPECT_EQ(t.started, 0);
}

BenchPoint P(double tok_s, double ttft99, double tpot99, int failures = 0) {
  BenchPoint p;
  p.output_tok_s = tok_s;
  p.ttft_ms.p99 = ttft99;
  p.tpot_ms.p99 = tpot99;
  p.failures = failures;
  p.successes = 10;
  return p;
}

TEST(Tune, ParetoFrontAndPick) {
  const std::vector<BenchPoint> pts = {
      P(100, 50, 20),     // 0: front (lowest latencies)
      P(200, 80, 40),     // 1: front
      P(150, 90, 45),     // 2: dominated by 1
      P(300, 200, 70),    // 3: front (highest throughput)
      P(400, 10, 10, 1),  // 4: failures: never on the front, never picked
      P(200, 80, 40),     // 5: equal to 1: neither dominates the other
  };
  EXPECT_EQ(ParetoFront(pts), (std::vector<int>{0, 1, 3, 5}));
  EXPECT_EQ(PickBest(pts, Slo{100, 50}), 1);  // 3 misses both; 4 failed
  EXPECT_EQ(PickBest(pts, Slo{0, 80}), 3);
  EXPECT_EQ(PickBest(pts, Slo{40, 0}), -1);
  EXPECT_TRUE(MeetsSlo(pts[0], Slo{50, 20}));  // limits are inclusive
  EXPECT_FALSE(MeetsSlo(pts[4], Slo{}));       // a failed request fails any SLO
}

}  // namespace
}  // namespace brisk

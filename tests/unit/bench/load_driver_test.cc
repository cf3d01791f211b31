// The load driver's statistics on synthetic timing data with known percentiles, its closed and
// open loops on a scripted target, arrival processes and counter differences.
#include "bench/load_driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "bench/bench_sweep.h"
#include "bench/http_client.h"
#include "fake_target.h"

namespace brisk {
namespace {

// A request sent at `start` whose tokens arrive at the given offsets (seconds) after it.
RequestRecord Rec(double start, std::vector<double> offsets, int out = -1) {
  RequestRecord r;
  r.ok = true;
  r.start_s = start;
  for (double o : offsets) r.token_s.push_back(start + o);
  r.end_s = r.token_s.empty() ? start : r.token_s.back();
  r.prompt_tokens = 20;
  r.output_tokens = out >= 0 ? out : int(offsets.size());
  return r;
}

TEST(SummarizeRecords, KnownPercentilesFromSyntheticTimings) {
  // 101 requests: request i (0..100) has TTFT (i + 1) ms and 3 tokens 10 ms apart, so TTFT is
  // 1..101 ms (numpy: p50 51, p90 91, p99 100), TPOT 10 ms, ITL 10 ms, E2E TTFT + 20 ms.
  std::vector<RequestRecord> recs;
  for (int i = 0; i <= 100; ++i) {
    const double t = (i + 1) * 1e-3;
    recs.push_back(Rec(50.0 + i, {t, t + 0.010, t + 0.020}));
  }
  BenchPoint p;
  SummarizeRecords(recs, Slo{}, &p);
  EXPECT_EQ(p.requests, 101);
  EXPECT_EQ(p.successes, 101);
  EXPECT_EQ(p.failures, 0);
  EXPECT_NEAR(p.ttft_ms.p50, 51, 1e-6);
  EXPECT_NEAR(p.ttft_ms.p90, 91, 1e-6);
  EXPECT_NEAR(p.ttft_ms.p99, 100, 1e-6);
  EXPECT_NEAR(p.tpot_ms.p50, 10, 1e-6);
  EXPECT_NEAR(p.tpot_ms.p99, 10, 1e-6);
  EXPECT_EQ(p.itl_ms.count, 202);
  EXPECT_NEAR(p.itl_ms.mean, 10, 1e-6);
  EXPECT_NEAR(p.e2e_ms.p50, 71, 1e-6);
  // Wall: first start (50) to last end (150 + 0.101 + 0.020).
  EXPECT_NEAR(p.wall_s, 100.121, 1e-9);
  EXPECT_EQ(p.output_tokens, 303);
  EXPECT_EQ(p.prompt_tokens, 2020);
  EXPECT_NEAR(p.output_tok_s, 303 / 100.121, 1e-9);
  EXPECT_NEAR(p.total_tok_s, 2323 / 100.121, 1e-9);
  EXPECT_NEAR(p.request_s, 101 / 100.121, 1e-9);
  EXPECT_NEAR(p.goodput_s, p.request_s, 1e-12);  // no SLO: every success is good
  EXPECT_DOUBLE_EQ(p.slo_attainment, 1.0);
}

TEST(SummarizeRecords, TpotUsesReportedTokenCountAndGoodputUsesTheSlo) {
  // HTTP: 2 content events carried 5 tokens (usage says 5): TPOT = 40 ms / 4 = 10 ms.
  std::vector<RequestRecord> recs = {Rec(0, {0.100, 0.140}, 5), Rec(0, {0.300, 0.340}, 5),
                                     Rec(0, {0.100, 0.500}, 5)};
  BenchPoint p;
  SummarizeRecords(recs, Slo{200, 50}, &p);
  EXPECT_NEAR(p.tpot_ms.min, 10, 1e-9);
  EXPECT_NEAR(p.tpot_ms.max, 100, 1e-9);
  EXPECT_EQ(p.output_tokens, 15);
  // Good: only the first (TTFT 100 <= 200, TPOT 10 <= 50); the second misses TTFT (300), the
  // third TPOT (100).
  EXPECT_NEAR(p.slo_attainment, 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(p.goodput_s, 1 / p.wall_s, 1e-9);
}

TEST(SummarizeRecords, FailuresAreCountedAndGroupedButNotMeasured) {
  std::vector<RequestRecord> recs = {Rec(0, {0.1, 0.2})};
  for (int i = 0; i < 3; ++i) {
    RequestRecord f;
    f.start_s = 0;
    f.end_s = 0.05;
    f.error = "HTTP 500: boom";
    recs.push_back(f);
  }
  RequestRecord other;
  other.error = "connection refused";
  recs.push_back(other);
  BenchPoint p;
  SummarizeRecords(recs, Slo{}, &p);
  EXPECT_EQ(p.requests, 5);
  EXPECT_EQ(p.successes, 1);
  EXPECT_EQ(p.failures, 4);
  EXPECT_EQ(p.ttft_ms.count, 1);
  EXPECT_EQ(p.e2e_ms.count, 1);
  ASSERT_EQ(p.failure_messages.size(), 2u);
  EXPECT_EQ(p.failure_messages[0], "HTTP 500: boom (x3)");
  EXPECT_EQ(p.failure_messages[1], "connection refused");
  EXPECT_NEAR(p.slo_attainment, 0.2, 1e-12);
}

TEST(SummarizeRecords, EmptyIsAllZero) {
  BenchPoint p;
  SummarizeRecords({}, Slo{}, &p);
  EXPECT_EQ(p.requests, 0);
  EXPECT_EQ(p.wall_s, 0);
  EXPECT_EQ(p.output_tok_s, 0);
  EXPECT_EQ(p.ttft_ms.count, 0);
}

TEST(ArrivalOffsets, PoissonMeanGapAndDeterminism) {
  const std::vector<double> a = ArrivalOffsets(20001, 4.0, 1.0, 7);
  ASSERT_EQ(a.size(), 20001u);
  EXPECT_EQ(a[0], 0);
  for (size_t i = 1; i < a.size(); ++i) ASSERT_GE(a[i], a[i - 1]);
  // Mean gap 1/rate = 0.25 s; the sample mean of 20000 exponential gaps is within 3%.
  EXPECT_NEAR(a.back() / 20000.0, 0.25, 0.25 * 0.03);
  // Exponential gaps: variance = mean^2 (coefficient of variation 1).
  double m = a.back() / 20000.0, var = 0;
  for (size_t i = 1; i < a.size(); ++i) var += (a[i] - a[i - 1] - m) * (a[i] - a[i - 1] - m);
  var /= 20000.0;
  EXPECT_NEAR(std::sqrt(var) / m, 1.0, 0.05);
  EXPECT_EQ(ArrivalOffsets(20001, 4.0, 1.0, 7), a);
  EXPECT_NE(ArrivalOffsets(20001, 4.0, 1.0, 8), a);
}

TEST(ArrivalOffsets, BurstinessChangesVarianceNotMean) {
  const std::vector<double> a = ArrivalOffsets(20001, 2.0, 0.25, 3);
  EXPECT_NEAR(a.back() / 20000.0, 0.5, 0.5 * 0.06);
  double m = a.back() / 20000.0, var = 0;
  for (size_t i = 1; i < a.size(); ++i) var += (a[i] - a[i - 1] - m) * (a[i] - a[i - 1] - m);
  var /= 20000.0;
  // Gamma with shape k: coefficient of variation 1/sqrt(k) = 2.
  EXPECT_NEAR(std::sqrt(var) / m, 2.0, 0.15);
}

TEST(ArrivalOffsets, InfiniteRateSendsEverythingAtOnce) {
  for (double t : ArrivalOffsets(10, std::numeric_limits<double>::infinity(), 1, 1))
    EXPECT_EQ(t, 0);
  EXPECT_TRUE(ArrivalOffsets(0, 1, 1, 1).empty());
}

TEST(CounterDelta, MeanBatchFromSums) {
  TargetCounters a, b;
  a.has = b.has = a.has_steps = b.has_steps = a.has_step_seqs = b.has_step_seqs = true;
  a.steps = 100, b.steps = 150;
  a.step_seqs = 400, b.step_seqs = 700;  // 300 sequences over 50 steps
  a.step_tokens = 1000, b.step_tokens = 2000;
  a.preemptions = 1, b.preemptions = 4;
  a.prefix_hits = 10, b.prefix_hits = 74;
  a.generation_tokens = 5, b.generation_tokens = 305;
  const ServerSide s = CounterDelta(a, b);
  EXPECT_TRUE(s.has);
  EXPECT_EQ(s.steps, 50);
  EXPECT_DOUBLE_EQ(s.mean_batch_seqs, 6.0);
  EXPECT_DOUBLE_EQ(s.mean_batch_tokens, 20.0);
  EXPECT_EQ(s.preemptions, 3);
  EXPECT_EQ(s.prefix_hit_tokens, 64);
  EXPECT_EQ(s.generation_tokens, 300);
  b.has = false;
  EXPECT_FALSE(CounterDelta(a, b).has);
}

std::vector<BenchRequest> Requests(int n, int max_tokens) {
  std::vector<BenchRequest> v(static_cast<size_t>(n));
  for (BenchRequest& r : v) r.max_tokens = max_tokens;
  return v;
}

TEST(RunPoint, ClosedLoopKeepsConcurrencyAndCountsEveryRequest) {
  testing::FakeTarget t([](const TargetLimits&) { return testing::FakeLatency{}; });
  TargetLimits limits;
  limits.max_num_seqs = 4;
  ASSERT_TRUE(t.Configure(limits).ok());
  const auto reqs = Requests(3, 11);
  PointPlan plan;
  plan.label = "c=4";
  plan.concurrency = 4;
  plan.num_prompts = 20;
  plan.requests = &reqs;
  const BenchPoint p = RunPoint(t, plan, nullptr);
  EXPECT_EQ(t.started, 20);
  EXPECT_EQ(t.max_in_flight, 4);  // never more than C in flight
  EXPECT_EQ(p.requests, 20);
  EXPECT_EQ(p.successes, 20);
  EXPECT_EQ(p.output_tokens, 220);
  EXPECT_EQ(p.label, "c=4");
  EXPECT_EQ(p.concurrency, 4);
  // Virtual timing: TTFT 100 ms, TPOT 20 ms; 5 rounds of 4 requests of 0.3 s each.
  EXPECT_NEAR(p.ttft_ms.p99, 100, 1e-6);
  EXPECT_NEAR(p.tpot_ms.p50, 20, 1e-6);
  EXPECT_NEAR(p.wall_s, 1.5, 1e-9);
  EXPECT_NEAR(p.output_tok_s, 220 / 1.5, 1e-6);
  EXPECT_TRUE(p.server.has);
  EXPECT_DOUBLE_EQ(p.server.mean_batch_seqs, 4.0);
  EXPECT_DOUBLE_EQ(p.server.kv_usage_max, 0.25);
}

TEST(RunPoint, EveryRequestGetsItsOwnPromptAcrossPoints) {
  testing::FakeTarget t([](const TargetLimits&) { return testing::FakeLatency{}; });
  std::vector<BenchRequest> reqs = Requests(2, 3);
  reqs[0].user = "alpha";
  reqs[1].user = "beta";
  PointPlan plan;
  plan.concurrency = 2;
  plan.num_prompts = 5;
  plan.requests = &reqs;
  RunPoint(t, plan, nullptr);
  RunPoint(t, plan, nullptr);  // a second point cycles through the same prompts
  ASSERT_EQ(t.users.size(), 10u);
  std::set<std::string> distinct(t.users.begin(), t.users.end());
  EXPECT_EQ(distinct.size(), 10u);
  for (size_t i = 0; i < t.users.size(); ++i) {
    const std::string& u = t.users[i];
    ASSERT_EQ(u.front(), '[') << u;
    const std::string tail = u.substr(u.find("] ") + 2);
    EXPECT_EQ(tail, i % 5 % 2 == 0 ? "alpha" : "beta") << u;  // the prompts, in turn
  }
  plan.unique_prompts = false;
  RunPoint(t, plan, nullptr);
  EXPECT_EQ(t.users[10], "alpha");
  EXPECT_EQ(t.users[11], "beta");
}

TEST(RunPoint, OpenLoopAtInfiniteRateSendsAllAtOnce) {
  testing::FakeTarget t([](const TargetLimits&) { return testing::FakeLatency{}; }, 5);
  const auto reqs = Requests(2, 4);
  PointPlan plan;
  plan.request_rate = std::numeric_limits<double>::infinity();
  plan.num_prompts = 10;
  plan.requests = &reqs;
  const BenchPoint p = RunPoint(t, plan, nullptr);
  EXPECT_EQ(t.max_in_flight, 10);
  EXPECT_EQ(p.requests, 10);
  EXPECT_EQ(p.failures, 2);  // every 5th scripted to fail
  ASSERT_EQ(p.failure_messages.size(), 1u);
  EXPECT_EQ(p.failure_messages[0], "scripted failure (x2)");
}

TEST(RunPoint, OpenLoopAtAFiniteRateTakesAboutNOverRate) {
  testing::FakeTarget t([](const TargetLimits&) { return testing::FakeLatency{}; });
  const auto reqs = Requests(2, 2);
  PointPlan plan;
  plan.request_rate = 200;  // 20 requests: the last arrives ~0.1 s after the first
  plan.num_prompts = 20;
  plan.requests = &reqs;
  const double t0 = NowSeconds();
  const BenchPoint p = RunPoint(t, plan, nullptr);
  const double took = NowSeconds() - t0;
  EXPECT_EQ(p.requests, 20);
  const double last = ArrivalOffsets(20, 200, 1, plan.seed).back();
  EXPECT_GE(took, last);  // arrivals were not sent early
}

TEST(BenchSweep, PointsFollowPolicySeqsAndConcurrencyOrder) {
  testing::FakeTarget t([](const TargetLimits& l) {
    testing::FakeLatency f;
    f.tpot_s = 0.01 * std::max(l.max_num_seqs, 1);
    return f;
  });
  BenchSweepOptions o;
  o.concurrency = {1, 2};
  o.max_num_seqs = {2, 4};
  o.num_prompts = 4;
  o.output_len = 8;
  o.warmup = 0;
  o.progress = false;
  auto rep = RunBenchSweep(t, o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  ASSERT_EQ(rep->points.size(), 4u);
  EXPECT_EQ(rep->sweep, "max_num_seqs x concurrency");
  EXPECT_EQ(rep->points[0].label, "seqs=2 c=1");
  EXPECT_EQ(rep->points[3].label, "seqs=4 c=2");
  EXPECT_EQ(rep->points[3].max_num_seqs, 4);
  EXPECT_NEAR(rep->points[1].tpot_ms.p50, 20, 1e-6);
  EXPECT_NEAR(rep->points[2].tpot_ms.p50, 40, 1e-6);
  for (const BenchPoint& p : rep->points) EXPECT_EQ(p.output_tokens, 32);
  EXPECT_EQ(rep->output_len, "8, fixed (ignore_eos)");
}

TEST(BenchSweep, RejectsBadOptions) {
  testing::FakeTarget t([](const TargetLimits&) { return testing::FakeLatency{}; });
  BenchSweepOptions o;
  o.progress = false;
  o.concurrency = {1};
  o.request_rates = {1};
  EXPECT_FALSE(RunBenchSweep(t, o).ok());
  o.request_rates.clear();
  o.concurrency = {0};
  EXPECT_FALSE(RunBenchSweep(t, o).ok());
  o.concurrency = {1};
  o.workload = "poetry";
  auto r = RunBenchSweep(t, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("qa"), std::string::npos) << r.message();
  o.workload = "qa";
  o.top_p = 0;
  EXPECT_FALSE(RunBenchSweep(t, o).ok());
  EXPECT_EQ(t.started, 0);
}

TEST(BenchSweep, RequestsCarryWorkloadLengthsOrFixedOnesAndPadding) {
  BenchSweepOptions o;
  o.workload = "mix";
  auto reqs = BuildBenchRequests(o);
  ASSERT_TRUE(reqs.ok());
  ASSERT_GE(reqs->size(), 3u);
  EXPECT_EQ((*reqs)[0].max_tokens, 64);   // qa
  EXPECT_EQ((*reqs)[1].max_tokens, 256);  // copywriting
  EXPECT_EQ((*reqs)[2].max_tokens, 192);  // code
  EXPECT_TRUE((*reqs)[0].ignore_eos);
  o.natural = true;
  o.prompt_len = 100;
  auto nat = BuildBenchRequests(o);
  ASSERT_TRUE(nat.ok());
  EXPECT_FALSE((*nat)[0].ignore_eos);
  EXPECT_EQ((*nat)[0].max_tokens, 128);
  // 100 filler words (each followed by a space-separated word) were appended.
  const std::string& u = (*nat)[0].user;
  const std::string base = (*reqs)[0].user;
  ASSERT_EQ(u.rfind(base, 0), 0u);
  const std::string tail = u.substr(base.size());
  EXPECT_EQ(std::count(tail.begin(), tail.end(), ' '), 100 + 3);  // + "Background notes (ignore"
}

}  // namespace
}  // namespace brisk

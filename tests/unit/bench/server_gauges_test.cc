// The server's gauges sampled beside each bench point (bench/server_gauges.h): means and maxima
// of vllm:kv_cache_usage_perc / num_requests_running / num_requests_waiting over the scrapes,
// nothing counted from a scrape without them, non-finite values left out; and the report shows
// their columns and charts, and the GPU ones, only when a point has them.
#include "bench/server_gauges.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bench/prometheus_text.h"

namespace brisk {
namespace {

using Sums = std::map<std::string, double, std::less<>>;

TEST(GaugeAccumulator, MeansAndMaxima) {
  GaugeAccumulator a;
  EXPECT_FALSE(a.Summary().has);
  EXPECT_TRUE(a.Add({{"vllm:kv_cache_usage_perc", 0.25},
                     {"vllm:num_requests_running", 4},
                     {"vllm:num_requests_waiting", 0}}));
  EXPECT_TRUE(a.Add({{"vllm:kv_cache_usage_perc", 0.75},
                     {"vllm:num_requests_running", 8},
                     {"vllm:num_requests_waiting", 6}}));
  const ServerGauges g = a.Summary();
  EXPECT_TRUE(g.has);
  EXPECT_EQ(g.samples, 2);
  EXPECT_DOUBLE_EQ(g.kv_usage_mean, 0.5);
  EXPECT_DOUBLE_EQ(g.kv_usage_max, 0.75);
  EXPECT_DOUBLE_EQ(g.running_mean, 6);
  EXPECT_DOUBLE_EQ(g.running_max, 8);
  EXPECT_DOUBLE_EQ(g.waiting_mean, 3);
  EXPECT_DOUBLE_EQ(g.waiting_max, 6);
}

TEST(GaugeAccumulator, AServerWithoutTheGaugesGivesNothing) {
  GaugeAccumulator a;
  EXPECT_FALSE(a.Add({{"llamacpp:requests_processing", 3}}));
  EXPECT_FALSE(a.Summary().has);
  // One gauge alone counts; the missing ones are holes, not zeros.
  EXPECT_TRUE(a.Add({{"vllm:num_requests_waiting", 2}}));
  const ServerGauges g = a.Summary();
  EXPECT_TRUE(g.has);
  EXPECT_TRUE(std::isnan(g.kv_usage_max));
  EXPECT_DOUBLE_EQ(g.waiting_max, 2);
}

TEST(GaugeAccumulator, NonFiniteValuesAreLeftOut) {
  // SumPrometheusSamples reads NaN and +Inf as values: they must not poison a mean.
  auto sums = SumPrometheusSamples(
      "vllm:num_requests_running{model_name=\"m\"} NaN\n"
      "vllm:num_requests_waiting{model_name=\"m\"} +Inf\n"
      "vllm:kv_cache_usage_perc{model_name=\"m\"} 0.5\n");
  ASSERT_TRUE(sums.ok()) << sums.message();
  GaugeAccumulator a;
  a.Add(*sums);
  a.Add({{"vllm:num_requests_running", 2}, {"vllm:num_requests_waiting", 1}});
  const ServerGauges g = a.Summary();
  EXPECT_DOUBLE_EQ(g.running_mean, 2);
  EXPECT_DOUBLE_EQ(g.waiting_mean, 1);
  EXPECT_DOUBLE_EQ(g.kv_usage_mean, 0.5);
}

// Both samplers' bookkeeping (PointReadings): a scrape started in one point and finished in the
// next counts in neither; one started and finished in a point counts there.
TEST(PointReadings, AReadingCountsOnlyInThePointItStartedIn) {
  PointReadings<GaugeAccumulator> r;
  const Sums running3 = {{"vllm:num_requests_running", 3}};
  r.Begin();
  const uint64_t first = r.Current();
  EXPECT_TRUE(r.Add(first, running3));
  const uint64_t straddling = r.Current();
  EXPECT_FALSE(r.Empty());
  EXPECT_DOUBLE_EQ(r.End().running_max, 3);
  EXPECT_FALSE(r.Add(straddling, Sums{{"vllm:num_requests_running", 99}}));  // after End
  r.Begin();
  EXPECT_TRUE(r.Empty());  // nothing of the last point, nothing of the late reading
  const uint64_t late = r.Current();
  r.Begin();
  EXPECT_FALSE(r.Add(late, Sums{{"vllm:num_requests_running", 99}}));  // across a Begin
  EXPECT_TRUE(r.Add(r.Current(), Sums{{"vllm:num_requests_running", 1}}));
  EXPECT_FALSE(r.Add(r.Current(), Sums{{"other", 1}}));  // nothing the accumulator takes
  const ServerGauges g = r.End();
  EXPECT_EQ(g.samples, 1);
  EXPECT_DOUBLE_EQ(g.running_max, 1);
}

BenchReport TwoPoints() {
  BenchReport r;
  r.sweep = "concurrency";
  for (int c : {1, 4}) {
    BenchPoint p;
    p.concurrency = c;
    p.label = "c=" + std::to_string(c);
    p.requests = p.successes = 4;
    p.output_tok_s = 10.0 * c;
    r.points.push_back(p);
  }
  return r;
}

TEST(SamplerReport, NoGpuOrGaugeColumnsWithoutThem) {
  const BenchReport r = TwoPoints();
  const std::string t = r.ToTable(), h = r.ToHtml();
  for (const char* s : {"GPU", "KV use", "waiting"}) EXPECT_EQ(t.find(s), std::string::npos) << s;
  for (const char* m : {"gpu_util", "gpu_memory", "gpu_power", "server_requests", "kv_usage"})
    EXPECT_EQ(h.find(std::string("data-metric=\"") + m + "\""), std::string::npos) << m;
  EXPECT_EQ(r.ToJson().find("\"gpu\""), std::string::npos);
}

TEST(SamplerReport, ColumnsChartsAndJsonWhenMeasured) {
  BenchReport r = TwoPoints();
  r.points[1].gpu = {true, 2, 5, 81.5, 99, 30000, 412.25, 480};
  r.points[1].gauges = {true, 7, 0.4, 0.625, 3.5, 4, 1.25, 3};
  const std::string t = r.ToTable();
  for (const char* s : {"GPU util %", "GPU mem MiB", "GPU W", "KV use max %", "running", "waiting"})
    EXPECT_NE(t.find(s), std::string::npos) << s << "\n" << t;
  EXPECT_NE(t.find("30000"), std::string::npos) << t;
  EXPECT_NE(t.find("62.5"), std::string::npos) << t;  // 0.625 as a percentage
  const std::string h = r.ToHtml();
  for (const char* m : {"gpu_util", "gpu_memory", "gpu_power", "server_requests", "kv_usage"})
    EXPECT_NE(h.find(std::string("data-metric=\"") + m + "\""), std::string::npos) << m;
  auto back = BenchReportFromJson(r.ToJson());
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_FALSE(back->points[0].gpu.has);
  EXPECT_TRUE(back->points[1].gpu.has);
  EXPECT_EQ(back->points[1].gpu.gpus, 2);
  EXPECT_EQ(back->points[1].gpu.power_mean_w, 412.25);
  EXPECT_EQ(back->points[1].gauges.kv_usage_max, 0.625);
  EXPECT_EQ(back->points[1].gauges.waiting_mean, 1.25);
  EXPECT_EQ(back->ToJson(), r.ToJson());
}

}  // namespace
}  // namespace brisk

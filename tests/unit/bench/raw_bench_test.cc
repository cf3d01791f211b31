// `brisk bench raw` on the golden tiny model: the rows come in llama-bench order, and every decode
// row's % of the roofline is computed against the bandwidth probed next to that row (reported
// with it), not the one measured at the start of the run.
#include "bench/raw_bench.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_paths.h"

namespace brisk {
namespace {

TEST(RawBench, DecodeRowsUseTheirOwnBandwidthProbe) {
  RawBenchOptions o;
  o.model =
      test::FindGoldenOrData("models/tiny-untied-q4_k_m.gguf", "golden/tiny-untied-q4_k_m.gguf");
  o.threads = 2;
  o.pp = 8;
  o.tg = 4;
  o.batch_prompt = 4;
  o.batch_gen = 4;
  o.batches = {1, 2};
  o.reps = 1;
  o.probe_bytes = size_t(64) << 20;
  auto rep = RunRawBench(o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  ASSERT_EQ(rep->rows.size(), 4u);
  EXPECT_EQ(rep->rows[0].test, "pp8");
  EXPECT_EQ(rep->rows[1].test, "tg4");
  EXPECT_EQ(rep->rows[2].test, "decode B=1");
  EXPECT_EQ(rep->rows[3].test, "decode B=2");
  EXPECT_GT(rep->bandwidth_gb_s, 0);
  EXPECT_EQ(rep->rows[0].bandwidth_gb_s, 0);  // pp has no roofline
  EXPECT_EQ(rep->rows[0].roofline_pct, 0);
  for (size_t i = 1; i < rep->rows.size(); ++i) {
    const RawBenchRow& r = rep->rows[i];
    ASSERT_GT(r.bandwidth_gb_s, 0) << r.test;
    EXPECT_GT(r.tok_s, 0) << r.test;
    // % roofline = streamed bytes per second / the row's own probed bandwidth.
    EXPECT_NEAR(r.roofline_pct, 100.0 * r.gb_s / r.bandwidth_gb_s, 1e-9 * r.roofline_pct) << r.test;
  }
  const std::string table = rep->ToTable();
  EXPECT_NE(table.find("BW GB/s"), std::string::npos);
  const auto j = nlohmann::json::parse(rep->ToJson());
  ASSERT_EQ(j["results"].size(), 4u);
  EXPECT_DOUBLE_EQ(j["results"][2]["roofline_read_bandwidth_gb_s"].get<double>(),
                   rep->rows[2].bandwidth_gb_s);
}

}  // namespace
}  // namespace brisk

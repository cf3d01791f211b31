// The engine load generator on the golden tiny model: every request is counted, token counts match
// the fixed shapes, percentiles are ordered, the shared-prefix probe sees the prefix cache, the
// long-prompt mode measures both phases, and failures are counted instead of hanging.
#include "bench/engine_bench.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "model/model_tokenizer.h"
#include "test_paths.h"

namespace brisk {
namespace {

bool Small() { return std::getenv("BRISK_TEST_SMALL") != nullptr; }

void ExpectOrdered(const LatencySummary& s, const char* what) {
  EXPECT_LE(s.min, s.p50) << what;
  EXPECT_LE(s.p50, s.p90) << what;
  EXPECT_LE(s.p90, s.p99) << what;
  EXPECT_LE(s.p99, s.max) << what;
  EXPECT_GE(s.min, 0) << what;
}

class EngineBenchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = Model::Load(
        test::FindGoldenOrData("models/tiny-untied-q4_k_m.gguf", "golden/tiny-untied-q4_k_m.gguf"));
    ASSERT_TRUE(m.ok()) << m.message();
    model_ = std::move(m).value();
    auto t = TokenizerForModel(*model_);
    ASSERT_TRUE(t.ok()) << t.message();
    tok_ = std::make_unique<Tokenizer>(std::move(t).value());
  }
  EngineBenchOptions Options() const {
    EngineBenchOptions o;
    o.model = "tiny";
    o.engine.threads = 2;
    o.prompt_len = Small() ? 8 : 16;
    o.output_len = Small() ? 4 : 8;
    o.warmup = 1;
    o.request_timeout_s = 60;
    return o;
  }
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tok_;
};

TEST_F(EngineBenchTest, ClosedLoopCountsEveryRequest) {
  EngineBenchOptions o = Options();
  o.concurrency = {1, 4};
  o.num_prompts = Small() ? 6 : 12;
  auto rep = RunEngineBench(*model_, tok_.get(), o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  EXPECT_EQ(rep->warmup_failures, 0);
  EXPECT_FALSE(rep->has_shared_prefix_probe);
  EXPECT_EQ(rep->options.max_num_seqs, 4);  // the largest concurrency
  ASSERT_EQ(rep->runs.size(), 2u);
  for (const EngineBenchRun& r : rep->runs) {
    SCOPED_TRACE("concurrency " + std::to_string(r.concurrency));
    const int n = o.num_prompts;
    EXPECT_EQ(r.requests, n);
    EXPECT_EQ(r.failures, 0) << (r.failure_messages.empty() ? "" : r.failure_messages[0]);
    EXPECT_EQ(r.output_tokens, int64_t(n) * o.output_len);
    EXPECT_EQ(r.prompt_tokens, int64_t(n) * o.prompt_len);
    EXPECT_EQ(r.cached_tokens, 0);  // distinct random prompts share nothing
    EXPECT_EQ(r.ttft_ms.count, n);
    EXPECT_EQ(r.tpot_ms.count, n);
    EXPECT_EQ(r.e2e_ms.count, n);
    EXPECT_EQ(r.itl_ms.count, int64_t(n) * (o.output_len - 1));
    ExpectOrdered(r.ttft_ms, "TTFT");
    ExpectOrdered(r.tpot_ms, "TPOT");
    ExpectOrdered(r.itl_ms, "ITL");
    ExpectOrdered(r.e2e_ms, "E2E");
    EXPECT_LE(r.ttft_ms.max, r.e2e_ms.max);
    EXPECT_GT(r.wall_s, 0);
    EXPECT_NEAR(r.output_tok_s, double(r.output_tokens) / r.wall_s, 1e-6 * r.output_tok_s);
    EXPECT_GT(r.total_tok_s, r.output_tok_s);
    // The engine's own counters over the run agree with what the clients saw.
    EXPECT_EQ(r.engine.generation_tokens, r.output_tokens);
    EXPECT_EQ(r.engine.prompt_tokens, r.prompt_tokens);
    EXPECT_GT(r.engine.steps, 0);
    EXPECT_EQ(r.engine.preemptions, 0);
    EXPECT_EQ(r.engine.prefix_hit_tokens, 0);
    EXPECT_NEAR(r.engine.tokens_per_step,
                double(r.engine.prompt_tokens + r.engine.generation_tokens) / r.engine.steps, 1e-9);
  }
  // Four clients keep several sequences in each step; one client cannot.
  EXPECT_GT(rep->runs[1].engine.tokens_per_step, rep->runs[0].engine.tokens_per_step);

  const std::string table = rep->ToTable();
  EXPECT_NE(table.find("| conc |"), std::string::npos);
  EXPECT_NE(table.find("TPOT"), std::string::npos);
  auto j = nlohmann::json::parse(rep->ToJson());
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][1]["concurrency"], 4);
  EXPECT_EQ(j["runs"][1]["output_tokens"], int64_t(o.num_prompts) * o.output_len);
  EXPECT_TRUE(j["runs"][0]["ttft_ms"].contains("p99"));
}

TEST_F(EngineBenchTest, SharedPrefixSecondRequestHitsTheCache) {
  EngineBenchOptions o = Options();
  o.shared_prefix = 64;
  o.concurrency = {2};
  o.num_prompts = Small() ? 4 : 8;
  auto rep = RunEngineBench(*model_, tok_.get(), o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  ASSERT_TRUE(rep->has_shared_prefix_probe);
  const SharedPrefixProbe& p = rep->shared;
  EXPECT_EQ(p.failures, 0);
  EXPECT_EQ(p.prefix_tokens, 64);
  EXPECT_EQ(p.first_cached_tokens, 0);  // the warmup prompts do not carry the prefix
  EXPECT_GT(p.second_cached_tokens, 0);
  EXPECT_LE(p.second_cached_tokens, 64);  // the suffixes differ
  EXPECT_GT(p.first_ttft_ms, 0);
  EXPECT_GT(p.second_ttft_ms, 0);
  ASSERT_EQ(rep->runs.size(), 1u);
  const EngineBenchRun& r = rep->runs[0];
  EXPECT_EQ(r.failures, 0);
  EXPECT_EQ(r.output_tokens, int64_t(o.num_prompts) * o.output_len);
  EXPECT_EQ(r.prompt_tokens, int64_t(o.num_prompts) * (64 + o.prompt_len));
  EXPECT_GT(r.cached_tokens, 0);
  EXPECT_GT(r.engine.prefix_hit_tokens, 0);
  EXPECT_NE(rep->ToTable().find("shared prefix: first request TTFT"), std::string::npos);
}

TEST_F(EngineBenchTest, LongPromptMeasuresBothPhases) {
  EngineBenchOptions o = Options();
  o.concurrency = {2};
  o.num_prompts = 4;
  o.long_prompt = Small() ? 100 : 300;
  o.max_num_batched_tokens = 64;  // the long prompt prefills over several steps
  auto rep = RunEngineBench(*model_, tok_.get(), o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  EXPECT_EQ(rep->options.max_num_seqs, 3);  // room for the long request beside the streams
  ASSERT_EQ(rep->long_runs.size(), 1u);
  const LongPromptRun& r = rep->long_runs[0];
  EXPECT_EQ(r.failures, 0) << (r.failure_messages.empty() ? "" : r.failure_messages[0]);
  EXPECT_EQ(r.long_prompt_tokens, o.long_prompt);
  EXPECT_GT(r.long_ttft_ms, 0);
  EXPECT_GT(r.unloaded_tpot_ms.count, 0);
  // Both streams step while the long prompt's chunks run (at least one gap each).
  EXPECT_GE(r.loaded_tpot_ms.count, 2);
  ExpectOrdered(r.unloaded_tpot_ms, "unloaded");
  ExpectOrdered(r.loaded_tpot_ms, "loaded");
  EXPECT_NE(rep->ToTable().find("long prompt"), std::string::npos);
}

TEST_F(EngineBenchTest, FailuresAreCountedNotWaitedFor) {
  EngineBenchOptions o = Options();
  o.concurrency = {2};
  o.num_prompts = 4;
  o.warmup = 1;
  o.request_timeout_s = 1e-6;  // every request misses its engine deadline
  auto rep = RunEngineBench(*model_, tok_.get(), o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  EXPECT_EQ(rep->warmup_failures, 1);
  ASSERT_EQ(rep->runs.size(), 1u);
  const EngineBenchRun& r = rep->runs[0];
  EXPECT_EQ(r.requests, 4);
  EXPECT_EQ(r.failures, 4);
  EXPECT_EQ(r.output_tokens, 0);
  EXPECT_EQ(r.ttft_ms.count, 0);
  ASSERT_FALSE(r.failure_messages.empty());
  EXPECT_NE(r.failure_messages[0].find("deadline"), std::string::npos) << r.failure_messages[0];
  EXPECT_NE(rep->ToTable().find("failures:"), std::string::npos);
}

TEST_F(EngineBenchTest, RejectsBadOptions) {
  EngineBenchOptions o = Options();
  o.concurrency = {};
  EXPECT_FALSE(RunEngineBench(*model_, tok_.get(), o).ok());
  o.concurrency = {0};
  EXPECT_FALSE(RunEngineBench(*model_, tok_.get(), o).ok());
  o.concurrency = {1};
  o.output_len = 0;
  EXPECT_FALSE(RunEngineBench(*model_, tok_.get(), o).ok());
}

}  // namespace
}  // namespace brisk

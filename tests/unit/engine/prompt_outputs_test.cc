// What a request gets besides generated tokens: prompt logprobs (echo + logprobs, lm-eval's
// loglikelihood requests), prefill-only requests (max_tokens 0), the last token's hidden state
// (embeddings), and SubmitAll groups whose equal prompts are prefilled once (n > 1).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <set>

#include "engine/collecting_sink.h"
#include "engine/engine.h"
#include "engine/prompt_logprobs.h"
#include "model/fast_forward.h"
#include "model/forward.h"
#include "model/model_tokenizer.h"
#include "test_paths.h"
#include "tiny_model_fixture.h"

namespace brisk {
namespace {

class PromptOutputsTest : public test::TinyModelTest {
 protected:
  std::unique_ptr<Engine> MakeEngine(EngineConfig c = {}) {
    c.threads = 2;
    auto e = Engine::Create(*model_, tok_.get(), c);
    EXPECT_TRUE(e.ok()) << e.message();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  // The logits of every position of `tokens` from the fast forward alone, decode class (the
  // class of these short prompts in the engine).
  std::vector<float> FastLogits(const std::vector<int32_t>& tokens) {
    FastForward fwd(*model_, pool_, 64);
    SeqKvCache kv(model_->config(), int(tokens.size()));
    std::vector<int32_t> rows(tokens.size());
    std::iota(rows.begin(), rows.end(), 0);
    std::vector<float> out(tokens.size() * size_t(model_->config().n_vocab));
    EXPECT_TRUE(fwd.Run(tokens, 0, kv.blocks(), rows, out.data(), /*prompt=*/false).ok());
    return out;
  }
  ThreadPool pool_{2};
};

TEST(ScoreTokenTest, LogSoftmaxAndTopAgreeWithAHandComputation) {
  const std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f};
  double z = 0;
  for (float l : logits) z += std::exp(double(l));
  const TokenEvent e = ScoreToken(logits.data(), 5, 4, 3);
  EXPECT_EQ(e.token, 4);
  EXPECT_NEAR(e.logprob, 0.5 - std::log(z), 1e-6);
  ASSERT_EQ(e.top.size(), 3u);
  EXPECT_EQ(e.top[0].token, 1);  // equal logits: lower id first
  EXPECT_EQ(e.top[1].token, 3);
  EXPECT_EQ(e.top[2].token, 0);
  EXPECT_NEAR(e.top[2].logprob, 1.0 - std::log(z), 1e-6);
  EXPECT_TRUE(ScoreToken(logits.data(), 5, 2, 0).top.empty());
}

// Prompt logprobs equal the log-softmax of the fast forward's own logits at every position
// (bit-identical logits, whatever the chunking: 70 rows run in chunks of 16 and groups of 32),
// arrive once, before any token, and a prefill-only request then ends without tokens.
TEST_F(PromptOutputsTest, PromptLogprobsMatchTheForwardPassAndComeFirst) {
  const int V = model_->config().n_vocab;
  const auto prompt = Prompt(70, 3);
  const std::vector<float> want = FastLogits(prompt);
  EngineConfig c;
  c.max_num_batched_tokens = 16;  // the prompt spans five steps
  auto e = MakeEngine(c);
  for (int max_tokens : {0, 3}) {
    auto sink = std::make_shared<CollectingSink>();
    GenerationRequest r;
    r.prompt = prompt;
    r.sampling.temperature = 0;
    r.max_tokens = max_tokens;
    r.prompt_logprobs = 2;
    r.ignore_eos = true;
    r.sink = sink;
    ASSERT_TRUE(e->Submit(std::move(r)).ok());
    ASSERT_TRUE(sink->WaitFor(60));
    EXPECT_EQ(sink->prompt_logprobs_calls(), 1);
    EXPECT_EQ(sink->tokens_before_prompt_logprobs(), 0u);
    EXPECT_EQ(sink->num_tokens(), size_t(max_tokens));
    EXPECT_EQ(sink->info().reason, FinishReason::kLength);
    EXPECT_EQ(sink->info().usage.prompt_tokens, 70);
    const std::vector<TokenEvent> got = sink->prompt_logprobs();
    ASSERT_EQ(got.size(), prompt.size() - 1);
    for (size_t i = 0; i < got.size(); ++i) {
      const TokenEvent ref = ScoreToken(&want[i * size_t(V)], V, prompt[i + 1], 2);
      ASSERT_EQ(got[i].token, prompt[i + 1]) << i;
      ASSERT_EQ(got[i].logprob, ref.logprob) << i;
      ASSERT_EQ(got[i].top.size(), 2u) << i;
      EXPECT_EQ(got[i].top[0].token, ref.top[0].token) << i;
      EXPECT_EQ(got[i].top[1].logprob, ref.top[1].logprob) << i;
    }
  }
}

// Scoring reads every position, so it never takes the prefix cache's blocks: a warm prompt is
// scored exactly like a cold one.
TEST_F(PromptOutputsTest, PromptLogprobsIgnoreThePrefixCache) {
  const auto prompt = Prompt(40, 5);
  auto e = MakeEngine();
  std::vector<std::vector<TokenEvent>> runs;
  for (int i = 0; i < 2; ++i) {
    auto sink = std::make_shared<CollectingSink>();
    GenerationRequest r;
    r.prompt = prompt;
    r.max_tokens = 0;
    r.prompt_logprobs = 0;
    r.sink = sink;
    ASSERT_TRUE(e->Submit(std::move(r)).ok());
    ASSERT_TRUE(sink->WaitFor(60));
    EXPECT_EQ(sink->info().usage.cached_tokens, 0);
    runs.push_back(sink->prompt_logprobs());
  }
  ASSERT_EQ(runs[0].size(), 39u);
  for (size_t i = 0; i < runs[0].size(); ++i) EXPECT_EQ(runs[0][i].logprob, runs[1][i].logprob);
}

// The hidden state is the lm_head's input: the logits are its products with the output rows, so
// the argmax of hidden x W matches the forward's argmax, and it is the same alone or batched.
TEST_F(PromptOutputsTest, HiddenStateIsTheLastTokensAndBatchInvariant) {
  const int D = model_->config().n_embd;
  auto e = MakeEngine();
  auto run = [&](std::vector<std::vector<int32_t>> prompts) {
    std::vector<GenerationRequest> reqs;
    std::vector<std::shared_ptr<CollectingSink>> sinks;
    for (auto& p : prompts) {
      sinks.push_back(std::make_shared<CollectingSink>());
      GenerationRequest r;
      r.prompt = std::move(p);
      r.max_tokens = 0;
      r.return_hidden = true;
      r.sink = sinks.back();
      reqs.push_back(std::move(r));
    }
    EXPECT_TRUE(e->SubmitAll(std::move(reqs)).ok());
    std::vector<std::vector<float>> out;
    for (auto& s : sinks) {
      EXPECT_TRUE(s->WaitFor(60));
      EXPECT_EQ(s->num_tokens(), 0u);
      out.push_back(s->info().hidden);
    }
    return out;
  };
  const auto alone = run({Prompt(9, 1)});
  const auto batched = run({Prompt(30, 2), Prompt(9, 1), Prompt(5, 3)});
  ASSERT_EQ(alone[0].size(), size_t(D));
  EXPECT_EQ(alone[0], batched[1]);
  EXPECT_NE(batched[0], batched[1]);
  // RMS-normed with the output norm's weights: not all zero, finite.
  double sq = 0;
  for (float v : alone[0]) {
    ASSERT_TRUE(std::isfinite(v));
    sq += double(v) * v;
  }
  EXPECT_GT(sq, 0);

  GenerationRequest bad;
  bad.prompt = Prompt(4, 1);
  bad.max_tokens = 2;
  bad.return_hidden = true;
  bad.sink = std::make_shared<CollectingSink>();
  const auto refused = e->Submit(std::move(bad));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().field(), "return_hidden");
}

// n copies of one prompt: the prompt is computed once (the others wait for it, then take its
// blocks from the prefix cache and compute only the positions after the last full block), and each
// copy's tokens equal a solo run with its seed.
TEST_F(PromptOutputsTest, SubmitAllPrefillsEqualPromptsOnce) {
  const auto prompt = Prompt(100, 7);
  const int n = 4;
  auto make = [&](uint64_t seed, std::shared_ptr<CollectingSink> sink) {
    GenerationRequest r;
    r.prompt = prompt;
    r.sampling.temperature = 1.0f;
    r.sampling.seed = seed;
    r.max_tokens = 6;
    r.ignore_eos = true;
    r.sink = std::move(sink);
    return r;
  };
  std::vector<std::vector<int32_t>> solo;
  {
    EngineConfig c;
    c.prefix_caching = false;
    auto cold = MakeEngine(c);
    for (int i = 0; i < n; ++i) {
      auto s = std::make_shared<CollectingSink>();
      ASSERT_TRUE(cold->Submit(make(uint64_t(10 + i), s)).ok());
      ASSERT_TRUE(s->WaitFor(60));
      solo.push_back(s->tokens());
    }
  }
  auto e = MakeEngine();
  std::vector<GenerationRequest> reqs;
  std::vector<std::shared_ptr<CollectingSink>> sinks;
  for (int i = 0; i < n; ++i) {
    sinks.push_back(std::make_shared<CollectingSink>());
    reqs.push_back(make(uint64_t(10 + i), sinks.back()));
  }
  auto ids = e->SubmitAll(std::move(reqs));
  ASSERT_TRUE(ids.ok()) << ids.message();
  ASSERT_EQ(ids->size(), size_t(n));
  std::set<std::vector<int32_t>> distinct;
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(sinks[size_t(i)]->WaitFor(60));
    EXPECT_EQ(sinks[size_t(i)]->tokens(), solo[size_t(i)]) << i;
    distinct.insert(sinks[size_t(i)]->tokens());
    // 100 = 6 full 16-token blocks (96) + 4: the copies take 96 from the cache.
    EXPECT_EQ(sinks[size_t(i)]->info().usage.cached_tokens, i == 0 ? 0 : 96) << i;
  }
  EXPECT_EQ(distinct.size(), size_t(n));
  // Prompt tokens computed: 100 once, then 4 per copy (generated tokens are not counted here).
  EXPECT_EQ(e->Stats().prompt_tokens, 100 + (n - 1) * 4);
}

// A group is all or nothing: one bad request refuses the whole group and queues none.
TEST_F(PromptOutputsTest, SubmitAllRefusesTheWholeGroup) {
  auto e = MakeEngine();
  std::vector<GenerationRequest> reqs(2);
  for (auto& r : reqs) {
    r.prompt = Prompt(5, 1);
    r.max_tokens = 2;
    r.sink = std::make_shared<CollectingSink>();
  }
  reqs[1].sampling.temperature = -1;
  ASSERT_FALSE(e->SubmitAll(std::move(reqs)).ok());
  EXPECT_EQ(e->Stats().waiting + e->Stats().running, 0);
}

// The leader of a group may be cancelled before its prompt is done: the copies still run.
TEST_F(PromptOutputsTest, CopiesOutliveACancelledLeader) {
  EngineConfig c;
  c.max_num_batched_tokens = 16;
  auto e = MakeEngine(c);
  std::vector<GenerationRequest> reqs;
  std::vector<std::shared_ptr<CollectingSink>> sinks;
  for (int i = 0; i < 3; ++i) {
    sinks.push_back(std::make_shared<CollectingSink>());
    GenerationRequest r;
    r.prompt = Prompt(200, 4);
    r.max_tokens = 2;
    r.ignore_eos = true;
    r.sampling.temperature = 0;
    r.sink = sinks.back();
    reqs.push_back(std::move(r));
  }
  auto ids = e->SubmitAll(std::move(reqs));
  ASSERT_TRUE(ids.ok());
  e->Cancel((*ids)[0]);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sinks[size_t(i)]->WaitFor(60)) << i;
  EXPECT_EQ(sinks[0]->info().reason, FinishReason::kCancelled);
  EXPECT_EQ(sinks[1]->tokens().size(), 2u);
  EXPECT_EQ(sinks[2]->tokens(), sinks[1]->tokens());
}

}  // namespace
}  // namespace brisk

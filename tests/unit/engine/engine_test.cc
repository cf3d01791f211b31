// The serving engine end to end on the golden tiny model: batch invariance (concurrent greedy
// requests produce exactly their solo output), preemption and resumption, prefix-cache hits,
// seeded sampling, stop conditions, cancellation, deadlines and input errors.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "engine/collecting_sink.h"
#include "engine/grammar_constraint.h"
#include "model/model_tokenizer.h"
#include "structured/gbnf.h"
#include "structured/json_schema.h"
#include "test_paths.h"
#include "tiny_model_fixture.h"

namespace brisk {
namespace {

// The shared collecting sink with bounded waits: a hang fails the test instead of blocking CI.
class Collector : public CollectingSink {
 public:
  bool Wait() { return WaitFor(60); }
  bool WaitTokens(size_t n) { return CollectingSink::WaitTokens(n, 60); }
};

class EngineTest : public test::TinyModelTest {
 protected:
  std::unique_ptr<Engine> MakeEngine(EngineConfig c) {
    c.threads = 2;
    c.prefill_class_min_tokens = prefill_min_;
    auto e = Engine::Create(*model_, tok_.get(), c);
    EXPECT_TRUE(e.ok()) << e.message();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  GenerationRequest Greedy(std::vector<int32_t> prompt, int max_tokens,
                           std::shared_ptr<Collector> sink) {
    GenerationRequest r;
    r.prompt = std::move(prompt);
    r.sampling.temperature = 0;
    r.max_tokens = max_tokens;
    r.ignore_eos = true;  // fixed lengths: the tiny model's greedy output may hit EOG early
    r.sink = std::move(sink);
    return r;
  }
  // Runs requests one at a time on a fresh engine: the reference outputs.
  std::vector<std::vector<int32_t>> Solo(const std::vector<GenerationRequest>& reqs) {
    EngineConfig c;
    c.max_num_seqs = 1;
    auto e = MakeEngine(c);
    std::vector<std::vector<int32_t>> out;
    for (GenerationRequest r : reqs) {
      auto s = std::make_shared<Collector>();
      r.sink = s;
      EXPECT_TRUE(e->Submit(std::move(r)).ok());
      EXPECT_TRUE(s->Wait());
      out.push_back(s->tokens());
    }
    return out;
  }
  // Submits every request at once, each with its own sink (an empty list if one is refused).
  std::vector<std::shared_ptr<Collector>> SubmitAll(Engine& e,
                                                    std::vector<GenerationRequest> reqs) {
    std::vector<std::shared_ptr<Collector>> sinks;
    for (GenerationRequest& r : reqs) {
      sinks.push_back(std::make_shared<Collector>());
      r.sink = sinks.back();
      if (!e.Submit(std::move(r)).ok()) return {};
    }
    return sinks;
  }
  int prefill_min_ = EngineConfig{}.prefill_class_min_tokens;
};

// The end-to-end properties below, once with the default prefill-class threshold (these short
// prompts stay in the decode class) and once with every prompt in the prefill class (where the
// CPU has one: prompt and generated tokens then differ in numerics, recomputes mix both).
class EngineClassTest : public EngineTest, public ::testing::WithParamInterface<int> {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    prefill_min_ = GetParam();
  }
};
INSTANTIATE_TEST_SUITE_P(PrefillClass, EngineClassTest,
                         ::testing::Values(EngineConfig{}.prefill_class_min_tokens, 1),
                         [](const auto& info) {
                           return info.param == 1 ? std::string("AllPrompts")
                                                  : std::string("LongPromptsOnly");
                         });

bool Small() { return std::getenv("BRISK_TEST_SMALL") != nullptr; }

TEST_P(EngineClassTest, ConcurrentRequestsEqualTheirSoloOutput) {
  const int n = Small() ? 8 : 32;
  std::vector<GenerationRequest> reqs;
  for (int i = 0; i < n; ++i) {
    GenerationRequest r = Greedy(Prompt(3 + (i * 7) % 40, i), 6 + i % 5, nullptr);
    if (i % 3 == 1) r.ignore_eos = false, r.max_tokens = 8;  // plain greedy: fused-argmax path
    if (i % 4 == 3) r.sampling.temperature = 0.7f, r.sampling.seed = 100 + i;  // seeded sampling
    reqs.push_back(std::move(r));
  }
  const auto solo = Solo(reqs);
  EngineConfig c;
  c.max_num_seqs = 32;
  c.max_num_batched_tokens = 96;  // long prompts are chunked, mixed with decodes
  auto e = MakeEngine(c);
  std::vector<std::shared_ptr<Collector>> sinks;
  for (GenerationRequest r : reqs) {
    sinks.push_back(std::make_shared<Collector>());
    r.sink = sinks.back();
    ASSERT_TRUE(e->Submit(std::move(r)).ok());
  }
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(sinks[i]->Wait());
    EXPECT_EQ(sinks[i]->tokens(), solo[i]) << "request " << i;
  }
  const EngineStats st = e->Stats();
  EXPECT_GT(st.steps, 0);
  EXPECT_EQ(st.kv_blocks_free, st.kv_blocks_total);  // every block back in the pool
  EXPECT_EQ(st.finished, n);
}

// Greedy requests with suppressed tokens (ignore_eos; min_tokens with stop token ids) take the
// fused-argmax lm_head with per-row exclusions, in batches mixed with plain greedy rows; their
// tokens equal those of the full-logits sampler path (the same requests with logprobs, run alone).
// The exclusions must matter: some plain greedy requests end on an end-of-generation token, and
// suppressing a stop token id changes some outputs.
TEST_F(EngineTest, SuppressedGreedyMatchesTheSamplerPath) {
  const int n = 8, len = 12;
  // The last prompt's plain greedy output ends with an end-of-generation token after 4 tokens.
  auto prompt = [&](int i) { return i == n - 1 ? Prompt(21, 317) : Prompt(4 + i, 300 + i); };
  std::vector<GenerationRequest> ignore, plain;
  for (int i = 0; i < n; ++i) {
    ignore.push_back(Greedy(prompt(i), len, nullptr));
    plain.push_back(Greedy(prompt(i), len, nullptr));
    plain.back().ignore_eos = false;
  }
  std::vector<GenerationRequest> with_logprobs = ignore;
  for (GenerationRequest& r : with_logprobs) r.sampling.logprobs = true;
  const auto ignore_ref = Solo(with_logprobs);
  // min_tokens = len: end-of-generation and the stop id (the reference's 4th token) suppressed
  // throughout.
  std::vector<GenerationRequest> min_tokens;
  for (int i = 0; i < n; ++i) {
    GenerationRequest r = Greedy(prompt(i), len, nullptr);
    r.ignore_eos = false;
    r.min_tokens = len;
    r.stop_token_ids = {ignore_ref[size_t(i)][3]};
    min_tokens.push_back(r);
  }
  with_logprobs = min_tokens;
  for (GenerationRequest& r : with_logprobs) r.sampling.logprobs = true;
  const auto min_ref = Solo(with_logprobs);

  EngineConfig c;
  c.max_num_seqs = 3 * n;
  auto e = MakeEngine(c);
  std::vector<std::shared_ptr<Collector>> sinks;
  for (const auto* list : {&ignore, &min_tokens, &plain})
    for (GenerationRequest r : *list) {
      sinks.push_back(std::make_shared<Collector>());
      r.sink = sinks.back();
      ASSERT_TRUE(e->Submit(std::move(r)).ok());
    }
  int stopped = 0, changed = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(sinks[size_t(i)]->Wait());
    ASSERT_TRUE(sinks[size_t(n + i)]->Wait());
    ASSERT_TRUE(sinks[size_t(2 * n + i)]->Wait());
    EXPECT_EQ(sinks[size_t(i)]->tokens(), ignore_ref[size_t(i)]) << "ignore_eos request " << i;
    EXPECT_EQ(sinks[size_t(n + i)]->tokens(), min_ref[size_t(i)]) << "min_tokens request " << i;
    stopped += sinks[size_t(2 * n + i)]->info().reason == FinishReason::kStop;
    changed += min_ref[size_t(i)] != ignore_ref[size_t(i)];
  }
  EXPECT_GT(stopped, 0);
  EXPECT_GT(changed, 0);
}

TEST_P(EngineClassTest, PreemptedRequestsResumeWithIdenticalTokens) {
  std::vector<GenerationRequest> reqs;
  for (int i = 0; i < 6; ++i) reqs.push_back(Greedy(Prompt(16 + i, 50 + i), 40, nullptr));
  const auto solo = Solo(reqs);
  EngineConfig c;
  c.max_num_seqs = 6;
  c.max_model_len = 64;
  c.kv_block_size = 16;
  // Room for 8 blocks: two or three sequences of 60 tokens, not six: preemption must happen.
  c.kv_cache_bytes = 8 * KvStore::BlockBytes(model_->config(), 16, KvType::kF16);
  auto e = MakeEngine(c);
  std::vector<std::shared_ptr<Collector>> sinks;
  for (GenerationRequest r : reqs) {
    sinks.push_back(std::make_shared<Collector>());
    r.sink = sinks.back();
    ASSERT_TRUE(e->Submit(std::move(r)).ok());
  }
  int preempted = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    ASSERT_TRUE(sinks[i]->Wait());
    EXPECT_EQ(sinks[i]->tokens(), solo[i]) << "request " << i;
    EXPECT_EQ(sinks[i]->info().reason, FinishReason::kLength);
    preempted += sinks[i]->info().timings.preemptions;
  }
  EXPECT_GT(preempted, 0);
  EXPECT_GT(e->Stats().preemptions, 0);
  EXPECT_EQ(e->Stats().kv_blocks_free, e->Stats().kv_blocks_total);
}

TEST_P(EngineClassTest, PrefixCacheHitSkipsCachedTokensAndMatchesColdRun) {
  EngineConfig cold_cfg;
  cold_cfg.prefix_caching = false;
  const auto prompt = Prompt(40, 9);
  // 8 tokens: K/V for 40 + 7 positions, so the third block never fills and only whole blocks
  // can be hit (partial blocks: the next test).
  const auto cold = Solo({Greedy(prompt, 8, nullptr)})[0];
  auto e = MakeEngine(EngineConfig{});
  auto a = std::make_shared<Collector>(), b = std::make_shared<Collector>();
  ASSERT_TRUE(e->Submit(Greedy(prompt, 8, a)).ok());
  ASSERT_TRUE(a->Wait());
  const int64_t computed_before = e->Stats().prompt_tokens;
  ASSERT_TRUE(e->Submit(Greedy(prompt, 8, b)).ok());
  ASSERT_TRUE(b->Wait());
  EXPECT_EQ(a->tokens(), cold);
  EXPECT_EQ(b->tokens(), cold);
  EXPECT_EQ(a->info().usage.cached_tokens, 0);
  EXPECT_EQ(b->info().usage.cached_tokens, 32);  // two full 16-token blocks of the 40
  EXPECT_EQ(e->Stats().prompt_tokens - computed_before, 40 - 32);
  EXPECT_EQ(e->Stats().prefix_hit_tokens, 32);
  // Without the cache nothing is reused.
  auto off = MakeEngine(cold_cfg);
  auto c1 = std::make_shared<Collector>(), c2 = std::make_shared<Collector>();
  ASSERT_TRUE(off->Submit(Greedy(prompt, 8, c1)).ok());
  ASSERT_TRUE(c1->Wait());
  ASSERT_TRUE(off->Submit(Greedy(prompt, 8, c2)).ok());
  ASSERT_TRUE(c2->Wait());
  EXPECT_EQ(c2->info().usage.cached_tokens, 0);
  EXPECT_EQ(c2->tokens(), cold);
}

// Prompts that share a prefix not ending on a block boundary (a chat template and system prompt,
// typically) reuse the cached block's first rows by copying them into their own block. Three
// such requests in one step, two copying from the same block: each output equals its run on an
// engine without a prefix cache.
TEST_P(EngineClassTest, PartialBlockHitsCopyTheSharedRowsAndMatchColdRuns) {
  const auto base = Prompt(40, 9);
  auto take = [&](int n, std::vector<int32_t> rest) {
    std::vector<int32_t> t(base.begin(), base.begin() + n);
    t.insert(t.end(), rest.begin(), rest.end());
    return t;
  };
  // {shared tokens, prompt}: 16 + 4 of block 1; 10 of block 0 (no whole block); 16 + 14.
  const std::vector<std::pair<int, std::vector<int32_t>>> cases = {
      {20, take(20, Prompt(12, 3))}, {10, take(10, Prompt(9, 4))}, {30, take(30, Prompt(5, 5))}};
  EngineConfig cold_cfg;
  cold_cfg.prefix_caching = false;
  cold_cfg.max_num_seqs = 1;
  auto cold_engine = MakeEngine(cold_cfg);
  std::vector<std::vector<int32_t>> cold;
  for (const auto& [shared, prompt] : cases) {
    auto s = std::make_shared<Collector>();
    ASSERT_TRUE(cold_engine->Submit(Greedy(prompt, 12, s)).ok());
    ASSERT_TRUE(s->Wait());
    cold.push_back(s->tokens());
  }
  ASSERT_NE(cold[0], cold[1]);

  auto e = MakeEngine(EngineConfig{});
  auto first = std::make_shared<Collector>();
  // 4 tokens: K/V for 43 positions, so only the prompt's two whole blocks are cached (in either
  // numerics class).
  ASSERT_TRUE(e->Submit(Greedy(base, 4, first)).ok());
  ASSERT_TRUE(first->Wait());
  const EngineStats before = e->Stats();
  std::vector<std::shared_ptr<Collector>> sinks;
  for (const auto& [shared, prompt] : cases) {
    sinks.push_back(std::make_shared<Collector>());
    ASSERT_TRUE(e->Submit(Greedy(prompt, 12, sinks.back())).ok());
  }
  int64_t shared_total = 0, prompt_total = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_TRUE(sinks[i]->Wait());
    EXPECT_EQ(sinks[i]->tokens(), cold[i]) << "request " << i;
    EXPECT_EQ(sinks[i]->info().usage.cached_tokens, cases[i].first) << "request " << i;
    shared_total += cases[i].first;
    prompt_total += int64_t(cases[i].second.size());
  }
  const EngineStats after = e->Stats();
  EXPECT_EQ(after.prefix_hit_tokens - before.prefix_hit_tokens, shared_total);
  EXPECT_EQ(after.prompt_tokens - before.prompt_tokens, prompt_total - shared_total);
  EXPECT_EQ(after.kv_blocks_free, after.kv_blocks_total);  // copy sources unpinned
}

TEST_F(EngineTest, RejectsBadRequestsAndKeepsServing) {
  EngineConfig c;
  c.max_model_len = 64;
  auto e = MakeEngine(c);
  auto sink = std::make_shared<Collector>();
  auto bad = [&](auto mutate, const char* what) {
    GenerationRequest r = Greedy(Prompt(5, 1), 4, sink);
    mutate(r);
    auto id = e->Submit(std::move(r));
    EXPECT_FALSE(id.ok()) << what;
    if (!id.ok()) {
      EXPECT_FALSE(id.message().empty());
    }
  };
  bad([](GenerationRequest& r) { r.prompt.clear(); }, "empty prompt");
  bad([](GenerationRequest& r) { r.prompt[2] = 2051; }, "token past the vocabulary");
  bad([](GenerationRequest& r) { r.prompt[0] = -1; }, "negative token");
  bad([&](GenerationRequest& r) { r.prompt = Prompt(64, 2); }, "prompt over max_model_len");
  bad([](GenerationRequest& r) { r.max_tokens = -3; }, "negative max_tokens");
  bad([](GenerationRequest& r) { r.min_tokens = 9; }, "min_tokens over max_tokens");
  bad([](GenerationRequest& r) { r.sampling.temperature = -1; }, "negative temperature");
  bad([](GenerationRequest& r) { r.sampling.top_p = 1.5f; }, "top_p over 1");
  bad([](GenerationRequest& r) { r.sink = nullptr; }, "no sink");
  bad([](GenerationRequest& r) { r.timeout_s = -1; }, "negative timeout");
  // Still serving.
  ASSERT_TRUE(e->Submit(Greedy(Prompt(5, 1), 4, sink)).ok());
  ASSERT_TRUE(sink->Wait());
  EXPECT_EQ(sink->tokens().size(), 4u);
  // max_tokens past max_model_len: stops at the context limit with "length".
  auto longer = std::make_shared<Collector>();
  ASSERT_TRUE(e->Submit(Greedy(Prompt(60, 3), 100, longer)).ok());
  ASSERT_TRUE(longer->Wait());
  EXPECT_EQ(longer->tokens().size(), 4u);
  EXPECT_EQ(longer->info().reason, FinishReason::kLength);
}

TEST_F(EngineTest, CancelAndDeadlineFreeTheirBlocks) {
  auto e = MakeEngine(EngineConfig{});
  auto s = std::make_shared<Collector>();
  auto id = e->Submit(Greedy(Prompt(30, 4), 100000, s));
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(s->WaitTokens(3));
  e->Cancel(*id);
  ASSERT_TRUE(s->Wait());
  EXPECT_EQ(s->info().reason, FinishReason::kCancelled);
  auto d = std::make_shared<Collector>();
  GenerationRequest r = Greedy(Prompt(30, 5), 100000, d);
  r.timeout_s = 0.05;
  ASSERT_TRUE(e->Submit(std::move(r)).ok());
  ASSERT_TRUE(d->Wait());
  EXPECT_EQ(d->info().reason, FinishReason::kDeadline);
  EXPECT_LT(d->tokens().size(), 100000u);
  const EngineStats st = e->Stats();
  EXPECT_EQ(st.running, 0);
  EXPECT_EQ(st.kv_blocks_free, st.kv_blocks_total);
}

TEST_F(EngineTest, BoundedQueueRefusesWhenFull) {
  EngineConfig c;
  c.max_num_seqs = 1;
  c.max_waiting = 1;
  auto e = MakeEngine(c);
  std::vector<std::shared_ptr<Collector>> sinks;
  int refused = 0;
  for (int i = 0; i < 5; ++i) {
    sinks.push_back(std::make_shared<Collector>());
    auto id = e->Submit(Greedy(Prompt(8, i), 200, sinks.back()));
    if (!id.ok()) {
      ++refused;
      // The code says "full", whatever the message's words (servers answer 429 from it).
      EXPECT_EQ(id.code(), StatusCode::kResourceExhausted) << id.message();
      sinks.pop_back();
    }
  }
  EXPECT_EQ(refused, 3);  // one running + one waiting fit
  for (auto& s : sinks) ASSERT_TRUE(s->Wait());
  EXPECT_EQ(e->Stats().rejected, 3);
}

TEST_F(EngineTest, StopStringEndsTheTextBeforeIt) {
  auto e = MakeEngine(EngineConfig{});
  auto full = std::make_shared<Collector>();
  GenerationRequest r = Greedy(Prompt(12, 7), 24, full);
  ASSERT_TRUE(e->Submit(r).ok());
  ASSERT_TRUE(full->Wait());
  const std::string text = full->text();
  ASSERT_GE(text.size(), 6u) << "the tiny model produced too little text for this test";
  // A stop string from the middle of the full output.
  const size_t at = text.size() / 2;
  const std::string stop = text.substr(at, 3);
  const size_t first = text.find(stop);
  auto cut = std::make_shared<Collector>();
  r.sink = cut;
  r.stop = {stop};
  ASSERT_TRUE(e->Submit(r).ok());
  ASSERT_TRUE(cut->Wait());
  EXPECT_EQ(cut->text(), text.substr(0, first));
  EXPECT_EQ(cut->info().reason, FinishReason::kStop);
  EXPECT_EQ(cut->info().stop_matched, stop);
}

TEST_F(EngineTest, StopTokenAndMinTokens) {
  auto e = MakeEngine(EngineConfig{});
  auto full = std::make_shared<Collector>();
  ASSERT_TRUE(e->Submit(Greedy(Prompt(10, 8), 12, full)).ok());
  ASSERT_TRUE(full->Wait());
  const auto toks = full->tokens();
  ASSERT_EQ(toks.size(), 12u);
  // Stop on the 5th generated token (first occurrence): output ends with it.
  const int32_t stop_tok = toks[4];
  const size_t first = size_t(std::find(toks.begin(), toks.end(), stop_tok) - toks.begin());
  auto s = std::make_shared<Collector>();
  GenerationRequest r = Greedy(Prompt(10, 8), 12, s);
  r.stop_token_ids = {stop_tok};
  ASSERT_TRUE(e->Submit(r).ok());
  ASSERT_TRUE(s->Wait());
  EXPECT_EQ(s->tokens().size(), first + 1);
  EXPECT_EQ(s->info().reason, FinishReason::kStop);
  // min_tokens beyond that position: the stop token is suppressed until then.
  auto m = std::make_shared<Collector>();
  r.sink = m;
  r.min_tokens = int(first) + 2;
  ASSERT_TRUE(e->Submit(r).ok());
  ASSERT_TRUE(m->Wait());
  const auto got = m->tokens();
  ASSERT_GE(got.size(), first + 2);
  for (size_t i = 0; i + 1 < size_t(r.min_tokens) && i < got.size(); ++i)
    EXPECT_NE(got[i], stop_tok) << i;
}

// Any JSON object, as response_format json_object asks (structured/json_schema.h).
std::shared_ptr<const structured::CompiledGrammar> JsonObjectGrammar() {
  structured::JsonSchemaOptions options;
  options.any_whitespace = true;
  auto g = structured::CompileJsonSchema(nlohmann::ordered_json{{"type", "object"}}, options);
  EXPECT_TRUE(g.ok()) << g.message();
  auto c = structured::CompileGrammar(*g);
  EXPECT_TRUE(c.ok()) << c.message();
  return *c;
}

// Sampled rows, constrained ones included, are drawn in parallel on the compute pool: in batches
// that mix seeded top-p, top-k and min-p requests, greedy rows on the logits path, min_tokens
// with a stop id, and a JSON-constrained request, every request produces its solo output.
TEST_F(EngineTest, ParallelSamplingMatchesSoloRuns) {
  const auto vocab = std::make_shared<GrammarVocab>(*tok_);
  const int n = 12;
  auto requests = [&] {  // fresh constraint objects for each run (they keep state)
    std::vector<GenerationRequest> reqs;
    for (int i = 0; i < n; ++i) {
      GenerationRequest r = Greedy(Prompt(5 + i, 40 + i), 10, nullptr);
      r.sampling.temperature = i % 4 == 0 ? 0.0f : 0.9f;
      r.sampling.seed = 500 + i;
      if (i % 4 == 1) r.sampling.top_p = 0.9f;
      if (i % 4 == 2) r.sampling.top_k = 20;
      if (i % 4 == 3) r.sampling.min_p = 0.05f;
      if (i == 6) r.ignore_eos = false, r.min_tokens = 10, r.stop_token_ids = {5, 17};
      if (i == 9) {
        r.ignore_eos = false;
        r.constraint = std::make_shared<GrammarConstraint>(vocab, JsonObjectGrammar());
      }
      reqs.push_back(std::move(r));
    }
    return reqs;
  };
  const auto solo = Solo(requests());
  EngineConfig c;
  c.max_num_seqs = n;
  auto e = MakeEngine(c);
  const std::vector<std::shared_ptr<Collector>> sinks = SubmitAll(*e, requests());
  ASSERT_EQ(sinks.size(), requests().size());
  std::set<std::vector<int32_t>> distinct;
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(sinks[size_t(i)]->Wait());
    EXPECT_NE(sinks[size_t(i)]->info().reason, FinishReason::kError) << "request " << i;
    EXPECT_EQ(sinks[size_t(i)]->tokens(), solo[size_t(i)]) << "request " << i;
    distinct.insert(solo[size_t(i)]);
  }
  EXPECT_EQ(distinct.size(), size_t(n));  // the outputs differ, so rows cannot be swapped unseen
  const EngineStats st = e->Stats();
  EXPECT_EQ(st.kv_blocks_free, st.kv_blocks_total);
}

TEST_F(EngineTest, SeededSamplingReproduces) {
  auto e = MakeEngine(EngineConfig{});
  std::vector<std::vector<int32_t>> outs;
  for (uint64_t seed : {11u, 11u, 12u}) {
    auto s = std::make_shared<Collector>();
    GenerationRequest r = Greedy(Prompt(9, 3), 24, s);
    r.sampling.temperature = 1.0f;
    r.sampling.top_p = 0.95f;
    r.sampling.seed = seed;
    ASSERT_TRUE(e->Submit(std::move(r)).ok());
    ASSERT_TRUE(s->Wait());
    outs.push_back(s->tokens());
  }
  EXPECT_EQ(outs[0], outs[1]);
  EXPECT_NE(outs[0], outs[2]);
}

// response_format json_object: whatever the (random-weight) model prefers, the output is one JSON
// object (checked by nlohmann's parser), also when max_tokens cuts it.
TEST_F(EngineTest, JsonConstraintKeepsOutputValidJson) {
  auto e = MakeEngine(EngineConfig{});
  const auto vocab = std::make_shared<GrammarVocab>(*tok_);
  const auto grammar = JsonObjectGrammar();
  for (uint64_t seed : {1u, 2u, 3u}) {
    auto s = std::make_shared<Collector>();
    GenerationRequest r = Greedy(Prompt(12, int(seed)), 48, s);
    r.ignore_eos = false;
    r.sampling.temperature = 1.0f;
    r.sampling.seed = seed;
    r.constraint = std::make_shared<GrammarConstraint>(vocab, grammar);
    ASSERT_TRUE(e->Submit(std::move(r)).ok());
    ASSERT_TRUE(s->Wait());
    ASSERT_NE(s->info().reason, FinishReason::kError) << s->info().message;
    const std::string text = s->text();
    const auto value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(value.is_object()) << text;
  }
}

// A grammar the random-weight model would never follow by itself: {"n":<1-3 digits>,"ok":
// true|false} or one of two words. Whatever it prefers, every sampled output must be a sentence.
std::shared_ptr<const structured::CompiledGrammar> ChoiceGrammar() {
  using structured::Symbol;
  auto lit = [](std::string_view s) {
    structured::Sequence q;
    for (char c : s) q.push_back(Symbol::Char(uint32_t(uint8_t(c))));
    return q;
  };
  const Symbol digit{{{'0', '9'}}, -1};
  structured::Grammar g;
  structured::Sequence obj = lit("{\"n\":");
  obj.push_back(Symbol::Ref(1));
  for (const Symbol& c : lit(",\"ok\":")) obj.push_back(c);
  obj.push_back(Symbol::Ref(2));
  obj.push_back(Symbol::Char('}'));
  g.rules = {{"root", {obj, lit("yes"), lit("no thanks")}},
             {"num", {{digit}, {digit, digit}, {digit, digit, digit}}},
             {"bool", {lit("true"), lit("false")}}};
  auto c = structured::CompileGrammar(g);
  EXPECT_TRUE(c.ok());
  return *c;
}

TEST_F(EngineTest, GrammarConstraintGivesOnlySentences) {
  auto e = MakeEngine(EngineConfig{});
  const auto vocab = std::make_shared<GrammarVocab>(*tok_);
  const auto grammar = ChoiceGrammar();
  std::set<std::string> outputs;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    auto s = std::make_shared<Collector>();
    GenerationRequest r = Greedy(Prompt(12, int(seed)), 40, s);
    r.ignore_eos = false;
    r.sampling.temperature = 1.0f;
    r.sampling.seed = seed;
    r.constraint = std::make_shared<GrammarConstraint>(vocab, grammar);
    ASSERT_TRUE(e->Submit(std::move(r)).ok());
    ASSERT_TRUE(s->Wait());
    ASSERT_EQ(s->info().reason, FinishReason::kStop) << s->info().message;
    EXPECT_TRUE(structured::Matches(grammar, s->text())) << s->text();
    outputs.insert(s->text());
  }
  EXPECT_GT(outputs.size(), 2u) << "sampling still varies within the grammar";
}

// max_tokens cuts a constrained output only where it is a whole sentence: near the limit the
// constraint allows only tokens after which the rest still fits, so even strings and lists the
// random-weight model would never close by itself come back closed.
TEST_F(EngineTest, GrammarConstraintFinishesWithinMaxTokens) {
  auto e = MakeEngine(EngineConfig{});
  const auto vocab = std::make_shared<GrammarVocab>(*tok_);
  auto parsed = structured::ParseGbnf(R"(root ::= "[" item ("," item)* "]"
                                          item ::= "\"" [^"\\]* "\"" | "{\"k\":" item "}")");
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  auto grammar = structured::CompileGrammar(*parsed);
  ASSERT_TRUE(grammar.ok());
  for (int max_tokens : {4, 5, 9, 17, 33}) {  // the shortest sentence, [""], is 4 bytes
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      auto s = std::make_shared<Collector>();
      GenerationRequest r = Greedy(Prompt(8, int(seed)), max_tokens, s);
      r.ignore_eos = false;
      r.sampling.temperature = 1.0f;
      r.sampling.seed = seed;
      r.constraint = std::make_shared<GrammarConstraint>(vocab, *grammar);
      ASSERT_TRUE(e->Submit(std::move(r)).ok());
      ASSERT_TRUE(s->Wait());
      ASSERT_NE(s->info().reason, FinishReason::kError) << s->info().message;
      EXPECT_TRUE(structured::Matches(*grammar, s->text()))
          << "max_tokens " << max_tokens << ": " << s->text() << " tokens "
          << ::testing::PrintToString(s->tokens()) << " reason " << int(s->info().reason);
      EXPECT_LE(int(s->tokens().size()), max_tokens);
    }
  }
}

// tool_choice "auto": prose passes freely; once the trigger is out (in one token or split over
// several), only the grammar's continuation is allowed, and end of generation only at its end.
TEST_F(EngineTest, TriggeredGrammarIsFreeUntilTheTrigger) {
  using structured::Symbol;
  structured::Grammar g;  // after "<go>": "ok" then optionally "!"
  g.rules = {{"root",
              {{Symbol::Char('o'), Symbol::Char('k')},
               {Symbol::Char('o'), Symbol::Char('k'), Symbol::Char('!')}}}};
  auto compiled = structured::CompileGrammar(g);
  ASSERT_TRUE(compiled.ok());
  const auto vocab = std::make_shared<GrammarVocab>(*tok_);
  auto tokens = [&](std::string_view text) { return tok_->Encode(text, false); };
  int32_t eog_id = -1;
  for (int32_t t = 0; t < tok_->n_vocab() && eog_id < 0; ++t)
    if (tok_->IsEog(t)) eog_id = t;
  ASSERT_GE(eog_id, 0);
  for (std::string_view split : {"<go>", "<g"}) {
    TriggeredGrammarConstraint c(vocab, *compiled, "<go>");
    for (int32_t t : tokens("Hello there <gx> ")) {
      ASSERT_TRUE(c.Allows(t));
      c.Accept(t);
    }
    EXPECT_TRUE(c.Allows(eog_id)) << "prose may end";
    for (int32_t t : tokens(split)) c.Accept(t);
    if (split == "<g") {
      EXPECT_FALSE(c.triggered());
      for (int32_t t : tokens("o>")) c.Accept(t);
    }
    ASSERT_TRUE(c.triggered());
    EXPECT_FALSE(c.Allows(eog_id)) << "a started call must be completed";
    for (int32_t t : tokens("x")) EXPECT_FALSE(c.Allows(t));
    for (int32_t t : tokens("ok")) {
      ASSERT_TRUE(c.Allows(t));
      c.Accept(t);
    }
    EXPECT_TRUE(c.Allows(eog_id));
    std::vector<float> logits(size_t(tok_->n_vocab()), 0.0f);
    c.MaskLogits(logits.data(), tok_->n_vocab());
    for (int32_t t : tokens("!")) EXPECT_EQ(logits[size_t(t)], 0.0f);
    EXPECT_EQ(logits[size_t(eog_id)], 0.0f);
    EXPECT_EQ(logits[size_t(tokens("a")[0])], -INFINITY);
  }
}

// The mask the sampler draws from refuses exactly what Allows refuses — end of generation, ids
// past the tokenizer's vocabulary and a binding length budget included — and is cached per
// position (MaskReady) only while the budget leaves it unchanged.
TEST_F(EngineTest, GrammarMaskAgreesWithAllows) {
  const auto vocab = std::make_shared<GrammarVocab>(*tok_);
  const int n_vocab = tok_->n_vocab() + 3;  // a model's padded vocabulary
  for (int max_tokens : {1000, 12}) {
    GrammarConstraint c(vocab, JsonObjectGrammar());
    c.SetMaxTokens(max_tokens);
    const std::string text = R"({"ab": [1, "x y"], "c": {}})";
    int step = 0;
    auto expect_mask_is_allows = [&] {
      std::vector<float> logits(size_t(n_vocab), 1.0f);
      c.MaskLogits(logits.data(), n_vocab);
      for (int32_t u = 0; u < n_vocab; ++u)
        ASSERT_EQ(logits[size_t(u)] == 1.0f, c.Allows(u))
            << "token " << u << " at step " << step << ", max_tokens " << max_tokens;
      if (max_tokens == 1000) EXPECT_TRUE(c.MaskReady()) << "cached at step " << step;
    };
    for (int32_t t : tok_->Encode(text, false)) {
      expect_mask_is_allows();
      if (!c.Allows(t)) break;  // the tight budget refuses the rest of the text
      c.Accept(t);
      ++step;
    }
    expect_mask_is_allows();  // at the end: only end of generation (or the budget's way out)
    EXPECT_GT(step, 3);
  }
}

// Greedy under a grammar is still batch invariant: the constrained request alone and beside
// unconstrained ones gives the same tokens.
TEST_F(EngineTest, GrammarConstrainedGreedyIsBatchInvariant) {
  const auto vocab = std::make_shared<GrammarVocab>(*tok_);
  const auto grammar = ChoiceGrammar();
  auto requests = [&] {
    std::vector<GenerationRequest> reqs;
    for (int i = 0; i < 4; ++i) reqs.push_back(Greedy(Prompt(10 + i, i), 24, nullptr));
    reqs[1].ignore_eos = false;
    reqs[1].constraint = std::make_shared<GrammarConstraint>(vocab, grammar);
    return reqs;
  };
  const auto solo = Solo(requests());
  EngineConfig c;
  c.max_num_seqs = 4;
  auto e = MakeEngine(c);
  const std::vector<std::shared_ptr<Collector>> sinks = SubmitAll(*e, requests());
  ASSERT_EQ(sinks.size(), requests().size());
  for (size_t i = 0; i < sinks.size(); ++i) {
    ASSERT_TRUE(sinks[i]->Wait());
    EXPECT_EQ(sinks[i]->tokens(), solo[i]) << "request " << i;
  }
  EXPECT_TRUE(structured::Matches(grammar, sinks[1]->text())) << sinks[1]->text();
}

}  // namespace
}  // namespace brisk

namespace brisk {
namespace {

// The command line checks flags with ValidateEngineConfig before loading a model; Engine::Create
// must refuse the same configs with the same words, so both sides say one thing.
TEST_F(EngineTest, EngineLimitsMessagesAreTheCommandLines) {
  for (int seqs : {0, EngineLimits::kMaxNumSeqs + 1, 5000}) {
    EngineConfig c;
    c.max_num_seqs = seqs;
    const Status direct = ValidateEngineConfig(c);
    ASSERT_FALSE(direct.ok());
    auto e = Engine::Create(*model_, tok_.get(), c);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.message(), direct.message());
  }
  EngineConfig ok;
  ok.max_num_seqs = EngineLimits::kMaxNumSeqs;
  EXPECT_TRUE(ValidateEngineConfig(ok).ok());
}

}  // namespace
}  // namespace brisk

// The "process outputs" phase of an engine step, driven from hand-made batch results: no model
// runs, so each end condition is checked on its own.
#include "engine/output_processor.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/model_tokenizer.h"
#include "test_paths.h"

namespace brisk {
namespace {

struct Recorded {
  std::vector<TokenEvent> events;
};

class RecordingSink : public RequestSink {
 public:
  explicit RecordingSink(Recorded* out) : out_(out) {}
  void OnToken(const TokenEvent& e) override { out_->events.push_back(e); }
  void OnFinish(const FinishInfo&) override { ADD_FAILURE() << "the engine applies finishes"; }

 private:
  Recorded* out_;
};

constexpr int32_t kEog = 2;

std::unique_ptr<RequestState> MakeRequest(Recorded* out, int max_tokens,
                                          const Tokenizer* tok = nullptr,
                                          std::vector<std::string> stops = {}) {
  auto r = std::make_unique<RequestState>();
  r->req.prompt = {10, 11, 12};
  r->req.max_tokens = max_tokens;
  r->req.sink = std::make_shared<RecordingSink>(out);
  r->seq.tokens = r->req.prompt;
  r->seq.num_prompt = 3;
  if (tok) r->detok = std::make_unique<StreamingDetokenizer>(*tok, false);
  r->stop = std::make_unique<StopMatcher>(std::move(stops));
  return r;
}

SampleResult Token(int32_t t, float logprob = 0) {
  SampleResult s;
  s.token = t;
  s.logprob = logprob;
  return s;
}

const std::vector<int32_t> kEogIds = {kEog};
const OutputRules kRules{kEogIds, /*max_model_len=*/100};

TEST(ProcessOutputs, AppendsTheTokenEmitsOneEventAndGoesOn) {
  Recorded out;
  auto r = MakeRequest(&out, 8);
  EXPECT_FALSE(ProcessOutput(*r, Token(42, -0.5f), 7.0, kRules));
  EXPECT_FALSE(ProcessOutput(*r, Token(43), 9.0, kRules));
  EXPECT_EQ(r->seq.tokens, (std::vector<int32_t>{10, 11, 12, 42, 43}));
  EXPECT_EQ(r->generated, 2);
  EXPECT_EQ(r->t_first, 7.0);
  EXPECT_EQ(r->t_last, 9.0);
  ASSERT_EQ(out.events.size(), 2u);
  EXPECT_EQ(out.events[0].token, 42);
  EXPECT_EQ(out.events[0].logprob, -0.5f);
  EXPECT_EQ(out.events[1].token, 43);
}

TEST(ProcessOutputs, EndOfGenerationStopsUnlessIgnoreEos) {
  Recorded out;
  auto r = MakeRequest(&out, 8);
  auto d = ProcessOutput(*r, Token(kEog), 1.0, kRules);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->reason, FinishReason::kStop);
  EXPECT_EQ(d->request, r.get());
  EXPECT_EQ(out.events.size(), 1u);  // the EOG token's event is still sent (logprobs)

  auto ignoring = MakeRequest(&out, 8);
  ignoring->req.ignore_eos = true;
  EXPECT_FALSE(ProcessOutput(*ignoring, Token(kEog), 1.0, kRules));
}

TEST(ProcessOutputs, StopTokenIdsStop) {
  Recorded out;
  auto r = MakeRequest(&out, 8);
  r->req.stop_token_ids = {77};
  EXPECT_FALSE(ProcessOutput(*r, Token(76), 1.0, kRules));
  auto d = ProcessOutput(*r, Token(77), 1.0, kRules);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->reason, FinishReason::kStop);
  EXPECT_EQ(d->stop_matched, "");
}

TEST(ProcessOutputs, MaxTokensAndMaxModelLenEndWithLength) {
  Recorded out;
  auto r = MakeRequest(&out, 2);
  EXPECT_FALSE(ProcessOutput(*r, Token(50), 1.0, kRules));
  auto d = ProcessOutput(*r, Token(51), 1.0, kRules);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->reason, FinishReason::kLength);

  auto longer = MakeRequest(&out, 50);
  const OutputRules five{kEogIds, /*max_model_len=*/5};  // 3 prompt tokens + 2
  EXPECT_FALSE(ProcessOutput(*longer, Token(50), 1.0, five));
  auto e = ProcessOutput(*longer, Token(51), 1.0, five);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->reason, FinishReason::kLength);
}

TEST(ProcessOutputs, NoAllowedTokenFailsTheRequestWithoutAnEvent) {
  Recorded out;
  auto r = MakeRequest(&out, 8);
  auto d = ProcessOutput(*r, SampleResult{}, 1.0, kRules);  // token -1
  ASSERT_TRUE(d);
  EXPECT_EQ(d->reason, FinishReason::kError);
  EXPECT_FALSE(d->message.empty());
  EXPECT_TRUE(out.events.empty());
  EXPECT_EQ(r->generated, 0);
}

TEST(ProcessOutputs, BatchDecisionsComeInBatchOrder) {
  Recorded out;
  auto a = MakeRequest(&out, 1), b = MakeRequest(&out, 8), c = MakeRequest(&out, 8);
  std::vector<RequestState*> sampled = {a.get(), b.get(), c.get()};
  std::vector<SampleResult> results = {Token(5), Token(6), Token(kEog)};
  const auto decisions = ProcessOutputs(sampled, results, 1.0, kRules);
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[0].request, a.get());
  EXPECT_EQ(decisions[0].reason, FinishReason::kLength);
  EXPECT_EQ(decisions[1].request, c.get());
  EXPECT_EQ(decisions[1].reason, FinishReason::kStop);
  EXPECT_EQ(out.events.size(), 3u);
}

// Stop strings need text: the tiny golden model's tokenizer. The matched string is reported and
// never sent; the text before it is.
TEST(ProcessOutputs, StopStringEndsAndIsHeldBack) {
  auto model = Model::Load(
      test::FindGoldenOrData("models/tiny-untied-q4_k_m.gguf", "golden/tiny-untied-q4_k_m.gguf"));
  ASSERT_TRUE(model.ok()) << model.message();
  auto tok = TokenizerForModel(**model);
  ASSERT_TRUE(tok.ok()) << tok.message();
  const std::vector<int32_t> ids = tok->Encode("Hello world. Bye", false);
  Recorded out;
  auto r = MakeRequest(&out, 64, &*tok, {" world"});
  std::optional<FinishDecision> d;
  for (int32_t id : ids)
    if ((d = ProcessOutput(*r, Token(id), 1.0, kRules))) break;
  ASSERT_TRUE(d);
  EXPECT_EQ(d->reason, FinishReason::kStop);
  EXPECT_EQ(d->stop_matched, " world");
  std::string text;
  for (const TokenEvent& e : out.events) text += e.text;
  EXPECT_EQ(text, "Hello");
}

TEST(MakeFinishInfo, TimingsFromTheRequestsClock) {
  RequestState r;
  r.seq.num_prompt = 10;
  r.seq.num_cached = 4;
  r.generated = 3;
  r.t_submit = 1.0;
  r.t_scheduled = 1.5;
  r.t_first = 2.0;
  r.t_last = 3.0;
  const FinishInfo f = MakeFinishInfo(r, FinishReason::kLength, "", "", 4.0);
  EXPECT_EQ(f.usage.prompt_tokens, 10);
  EXPECT_EQ(f.usage.cached_tokens, 4);
  EXPECT_EQ(f.usage.completion_tokens, 3);
  EXPECT_DOUBLE_EQ(f.timings.queued_s, 0.5);
  EXPECT_DOUBLE_EQ(f.timings.ttft_s, 1.0);
  EXPECT_DOUBLE_EQ(f.timings.prefill_s, 0.5);
  EXPECT_DOUBLE_EQ(f.timings.decode_s, 1.0);
  EXPECT_DOUBLE_EQ(f.timings.e2e_s, 3.0);
}

}  // namespace
}  // namespace brisk

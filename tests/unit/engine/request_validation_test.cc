// request_validation.h: each range of a request, checked once, with the offending field named.
#include "engine/request_validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace brisk {
namespace {

const EngineRequestLimits kLimits = {.n_vocab = 100, .max_model_len = 64, .has_tokenizer = false};

GenerationRequest Good() {
  GenerationRequest r;
  r.prompt = {1, 2, 3};
  r.max_tokens = 8;
  return r;
}

TEST(RequestValidationTest, EachBadFieldIsNamed) {
  EXPECT_TRUE(ValidateGenerationRequest(Good(), kLimits).ok());
  struct Bad {
    std::function<void(GenerationRequest&)> mutate;
    StatusCode code;
    std::string field;
  };
  const std::vector<Bad> bads = {
      {[](GenerationRequest& r) { r.prompt.clear(); }, StatusCode::kInvalidArgument, "prompt"},
      {[](GenerationRequest& r) { r.prompt[1] = 100; }, StatusCode::kInvalidArgument, "prompt"},
      {[](GenerationRequest& r) { r.prompt.assign(64, 1); }, StatusCode::kOutOfRange, ""},
      {[](GenerationRequest& r) { r.max_tokens = -1; }, StatusCode::kInvalidArgument, "max_tokens"},
      {[](GenerationRequest& r) { r.prompt_logprobs = 21; }, StatusCode::kInvalidArgument,
       "prompt_logprobs"},
      {[](GenerationRequest& r) { r.return_hidden = true; }, StatusCode::kInvalidArgument,
       "return_hidden"},
      {[](GenerationRequest& r) { r.min_tokens = -1; }, StatusCode::kInvalidArgument, "min_tokens"},
      {[](GenerationRequest& r) { r.min_tokens = 9; }, StatusCode::kInvalidArgument, "min_tokens"},
      {[](GenerationRequest& r) { r.timeout_s = -1; }, StatusCode::kInvalidArgument, "timeout_s"},
      {[](GenerationRequest& r) { r.timeout_s = std::nan(""); }, StatusCode::kInvalidArgument,
       "timeout_s"},
      {[](GenerationRequest& r) {
         r.stop_token_ids = {5, 100};
       },
       StatusCode::kInvalidArgument, "stop_token_ids"},
      {[](GenerationRequest& r) { r.stop = {"x"}; }, StatusCode::kFailedPrecondition, "stop"},
      {[](GenerationRequest& r) { r.sampling.top_p = 0; }, StatusCode::kInvalidArgument, "top_p"},
  };
  for (const Bad& bad : bads) {
    GenerationRequest r = Good();
    bad.mutate(r);
    const Status st = ValidateGenerationRequest(r, kLimits);
    ASSERT_FALSE(st.ok()) << bad.field;
    EXPECT_EQ(st.code(), bad.code) << st.message();
    EXPECT_EQ(st.field(), bad.field) << st.message();
  }
}

TEST(RequestValidationTest, MessagesQuoteTheValue) {
  GenerationRequest r = Good();
  r.stop_token_ids = {100};
  EXPECT_EQ(ValidateGenerationParams(r, kLimits).message(),
            "stop_token_ids[0]: token id 100 is out of range [0, 100)");
  r = Good();
  r.min_tokens = 9;
  EXPECT_EQ(ValidateGenerationParams(r, kLimits).message(),
            "min_tokens (9) must not exceed max_tokens (8)");
  r = Good();
  r.max_tokens = -1;
  EXPECT_EQ(ValidateGenerationParams(r, kLimits).message(),
            "max_tokens must be an integer in [0, 2147483647], got -1");
  r = Good();
  r.max_tokens = 0;  // prefill only (prompt logprobs, hidden states)
  r.min_tokens = 0;
  EXPECT_TRUE(ValidateGenerationParams(r, kLimits).ok());
}

TEST(RequestValidationTest, OpenAiRangesAreNarrowerThanTheSamplers) {
  GenerationRequest r = Good();
  r.sampling.temperature = 3;  // the CLI and benchmarks may sample this hot
  EXPECT_TRUE(ValidateGenerationParams(r, kLimits).ok());
  const Status st = ValidateGenerationParams(r, kLimits, kOpenAiRanges);
  EXPECT_EQ(st.field(), "temperature");
  EXPECT_EQ(st.message(), "temperature must be in [0, 2], got 3");
  r = Good();
  r.sampling.logit_bias = {{5, 150.0f}};
  EXPECT_TRUE(ValidateGenerationParams(r, kLimits).ok());
  EXPECT_EQ(ValidateGenerationParams(r, kLimits, kOpenAiRanges).message(),
            "logit_bias[5] must be in [-100, 100], got 150");
  r = Good();
  r.sampling.top_k = -5;
  EXPECT_TRUE(ValidateGenerationParams(r, kLimits).ok());
  EXPECT_EQ(ValidateGenerationParams(r, kLimits, kOpenAiRanges).field(), "top_k");
}

TEST(RequestValidationTest, PromptMustLeaveRoomForOneToken) {
  EXPECT_TRUE(CheckPromptFits(63, 100, 64).ok());
  const Status st = CheckPromptFits(64, 200, 64);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("maximum context length is 64 tokens"), std::string::npos);
  EXPECT_EQ(FitMaxTokens(60, 100, 64), 4);
  EXPECT_EQ(FitMaxTokens(10, 20, 64), 20);
  EXPECT_EQ(FitMaxTokens(63, std::numeric_limits<int>::max(), 64), 1);
}

TEST(RequestValidationTest, ExplicitMaxTokensMustFitBesideThePrompt) {
  EXPECT_TRUE(CheckMaxTokensFit(60, 4, 64).ok());
  const Status st = CheckMaxTokensFit(60, 5, 64, "max_completion_tokens");
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(st.field(), "max_completion_tokens");
  EXPECT_NE(st.message().find("(5 > 64 - 60)"), std::string::npos) << st.message();
  EXPECT_FALSE(CheckMaxTokensFit(1, std::numeric_limits<int>::max(), 64).ok());  // no overflow
}

TEST(RequestValidationTest, FloatRangeMessages) {
  const ParamRange positive = {0, 3.4028234663852886e38, /*lo_open=*/true};
  EXPECT_EQ(CheckFloat(positive, "repetition_penalty", 0).message(),
            "repetition_penalty must be > 0, got 0");
  EXPECT_EQ(CheckFloat(positive, "repetition_penalty", 1e300).message(),
            "repetition_penalty must be at most 3.40282e+38, got 1e+300");
  EXPECT_EQ(
      CheckFloat(kSamplerRanges.logit_bias, "logit_bias", std::nan(""), "logit_bias[3]").message(),
      "logit_bias[3] must be a finite number, got nan");
}

}  // namespace
}  // namespace brisk
